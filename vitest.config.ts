import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

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
    include: ['test/**/*.test.ts'],
    // Bounds for a hang, not for speed: a busy machine (`npm run test:loaded`) must not fail a test.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/testing/**', 'src/**/index.ts'],
      thresholds: { lines: 95, branches: 95 },
      reporter: ['text-summary'],
    },
  },
})
