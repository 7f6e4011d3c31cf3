import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'
import { claimedBefore, tiersToRun } from './test/tiers.js'

// The package's own names (`data-access-policy`, `data-access-policy/oauth`, …), which the reference
// server imports as a host does, resolve to the sources that tsconfig.json `paths` names, not to dist/.
const { compilerOptions } = JSON.parse(readFileSync(new URL('tsconfig.json', import.meta.url), 'utf8')) as {
  compilerOptions: { paths: Record<string, [string]> }
}
const ownNames = Object.entries(compilerOptions.paths).map(([name, [source]]) => ({
  find: new RegExp(`^${name.replaceAll('/', '\\/')}$`),
  replacement: fileURLToPath(new URL(source, import.meta.url)),
}))

export default defineConfig({
  resolve: { alias: ownNames },
  test: {
    // Bounds for a hang, not for speed: a busy machine (`npm run test:loaded`) must not fail a test.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One project per tier (test/tiers.ts): `vitest run --project unit` runs one alone. A whole run
    // starts with the unit tier, so its results print before the slower tiers begin, and ends with
    // the timing tier (when asked for), so that nothing else competes with what it times.
    projects: tiersToRun(process.env).map((tier) => ({
      extends: true,
      test: {
        name: tier.name,
        include: [...tier.include],
        exclude: [...configDefaults.exclude, ...claimedBefore(tier.name)],
        sequence: { groupOrder: tier.name === 'unit' ? 0 : tier.name === 'timing' ? 2 : 1 },
        // The unit tier's files share each worker's module graph: importing the frameworks anew for
        // every file was most of its time. Its tests restore the globals and environment they stub.
        isolate: tier.name !== 'unit',
      },
    })),
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/testing/**', 'src/**/index.ts'],
      thresholds: { lines: 95, branches: 95 },
      reporter: ['text-summary'],
    },
  },
})
