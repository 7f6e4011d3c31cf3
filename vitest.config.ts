import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/testing/**', 'src/**/index.ts'],
      thresholds: { lines: 95, branches: 95 },
      reporter: ['text-summary'],
    },
  },
})
