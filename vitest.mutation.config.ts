import { defineConfig } from 'vitest/config'

// The unit tests that Stryker runs against each mutant (`npm run mutation`): the pure core and the
// adapters' framework-free glue. No HTTP servers, Redis or browsers: they are slow, and a mutant of
// the core that only they could catch is a unit test missing here.
export default defineConfig({
  test: {
    include: [
      'test/authentication/**/*.test.ts',
      'test/tokens/**/*.test.ts',
      'test/decisions/**/*.test.ts',
      'test/restrictions/**/*.test.ts',
      'test/policy.test.ts',
      'test/adapters/shared.test.ts',
      'test/adapters/admission.test.ts',
      'test/adapters/direct-origin.test.ts',
    ],
    testTimeout: 20_000,
  },
})
