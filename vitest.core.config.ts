import { defineConfig } from 'vitest/config'

/**
 * The pure core's unit tests: the files that test src/ only (no adapter, server, Redis or browser).
 * `npm test` runs them on Node with the rest, and test/runtimes/core-tests.test.ts runs them again
 * under Bun (`bun test`) and under Deno (vitest itself, through Deno's Node compatibility).
 */
export const CORE_TEST_DIRECTORIES = [
  'test/authentication',
  'test/decisions',
  'test/tokens',
  'test/restrictions',
] as const

/** Core test files outside those directories. */
export const CORE_TEST_FILES = ['test/policy.test.ts'] as const

// The Deno run: worker threads sharing one module graph, because Deno does not implement the
// worker teardown vitest uses between isolated files (an `ERR_NOT_IMPLEMENTED` after every file).
export default defineConfig({
  test: {
    include: [...CORE_TEST_DIRECTORIES.map((directory) => `${directory}/**/*.test.ts`), ...CORE_TEST_FILES],
    pool: 'threads',
    isolate: false,
    testTimeout: 60_000,
  },
})
