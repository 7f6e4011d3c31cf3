import { defineConfig } from 'vitest/config'

export default defineConfig({
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
