/**
 * The vitest configuration that runs the pure core's unit tests under Bun and Deno
 * (test/runtimes/core-tests.test.ts starts it with each runtime's own binary).
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import base from '../../vitest.config.js'
import { coreTestFiles } from './core-test-files.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

export default defineConfig({
  root,
  test: {
    include: coreTestFiles(root),
    testTimeout: base.test!.testTimeout!,
    hookTimeout: base.test!.hookTimeout!,
    // vitest's default interop wraps a package namespace that has a `default` export; under Bun the
    // wrapper loses named exports beside it (zod's `z`), so Bun loads packages as they are. Deno
    // needs the interop for the CommonJS ipaddr.js.
    deps: { interopDefault: !('Bun' in globalThis) },
  },
})
