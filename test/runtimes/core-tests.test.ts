/**
 * The pure core's unit tests under Bun and Deno (issue 14): the same files `npm test` runs on Node,
 * run by `bun test` (which maps `vitest` imports to its own runner; test/runtimes/bun-vitest-shim.ts
 * adds the two global stubs it lacks) and by vitest itself on Deno. Both runtimes are pinned dev
 * dependencies: nothing is downloaded.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CORE_TEST_DIRECTORIES, CORE_TEST_FILES } from '../../vitest.core.config.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BIN = join(ROOT, 'node_modules', '.bin')

interface Finished {
  readonly code: number | null
  readonly output: string
}

function run(command: string, args: readonly string[]): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Deno caches what it analyses; keep that out of the home directory, and ask nothing online.
        DENO_DIR: join(ROOT, 'node_modules', '.cache', 'deno'),
        DENO_NO_UPDATE_CHECK: '1',
        NO_COLOR: '1',
        FORCE_COLOR: '0',
      },
    })
    let output = ''
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
    }
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    child.once('error', reject)
    child.once('exit', (code) => resolve({ code, output }))
  })
}

// How many tests a run passed and failed, from its summary.
function counts(output: string, passed: RegExp, failed: RegExp) {
  return {
    passed: Number(passed.exec(output)?.[1] ?? Number.NaN),
    failed: Number(failed.exec(output)?.[1] ?? 0),
  }
}

// Generous: these runs take seconds on a quiet machine; the bound only catches a hang.
const TIMEOUT = 300_000

describe('the pure core unit tests on other runtimes', () => {
  let bunPassed = 0

  it(
    'pass under Bun',
    async () => {
      const { code, output } = await run(join(BIN, 'bun'), [
        'test',
        '--preload',
        './test/runtimes/bun-vitest-shim.ts',
        ...CORE_TEST_DIRECTORIES,
        ...CORE_TEST_FILES,
      ])
      const result = counts(output, /^\s*(\d+) pass$/m, /^\s*(\d+) fail$/m)
      expect({ code, failed: result.failed }, output.slice(-4000)).toEqual({ code: 0, failed: 0 })
      // Hundreds of table rows and properties; a run that found almost nothing is no proof.
      expect(result.passed).toBeGreaterThan(800)
      bunPassed = result.passed
    },
    TIMEOUT,
  )

  it(
    'pass under Deno',
    async () => {
      const { code, output } = await run(join(BIN, 'deno'), [
        'run',
        '--allow-all',
        'node_modules/vitest/vitest.mjs',
        'run',
        '--config',
        'vitest.core.config.ts',
      ])
      const result = counts(output, /Tests\s+(\d+) passed/, /Tests\s+(\d+) failed/)
      expect({ code, failed: result.failed }, output.slice(-4000)).toEqual({ code: 0, failed: 0 })
      expect(output).not.toMatch(/Unhandled Error|Errors\s+\d+ error/)
      expect(result.passed).toBeGreaterThan(800)
      // The same files on both runtimes: the same number of tests.
      if (bunPassed > 0) expect(result.passed).toBe(bunPassed)
    },
    TIMEOUT,
  )
})
