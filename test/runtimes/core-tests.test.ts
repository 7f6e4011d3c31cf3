/**
 * The pure core's unit tests (the files that test src/ only) run unchanged under Bun and Deno
 * (issue 14): vitest itself is started by each runtime's pinned binary, so the same runner and the
 * same files run inside Bun's and Deno's own module loaders and globals. Nothing is downloaded:
 * Deno runs with `--cached-only` and resolves every package from node_modules.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { coreTestFiles } from './core-test-files.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BIN = join(ROOT, 'node_modules', '.bin')
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
const CONFIG = 'test/runtimes/core-tests.config.ts'
const scratch = mkdtempSync(join(tmpdir(), 'core-tests-'))

// `--bun` makes Bun run vitest (and the workers it forks) itself instead of handing it to Node.
// Deno's `-A`: vitest forks workers, writes its cache and reads the environment.
const RUNNERS: Readonly<Record<string, (args: readonly string[]) => [string, string[]]>> = {
  bun: (args) => [join(BIN, 'bun'), ['--bun', VITEST, ...args]],
  deno: (args) => [join(BIN, 'deno'), ['run', '-A', '--cached-only', VITEST, ...args]],
}

interface Report {
  readonly numTotalTests: number
  readonly numPassedTests: number
  readonly testResults: readonly {
    readonly name: string
    readonly assertionResults: readonly { readonly fullName: string; readonly status: string }[]
  }[]
}

// The outer vitest's own variables would tell the inner one it is a worker of the outer run.
function childEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_V8_COVERAGE'),
  )
  return {
    ...env,
    NO_COLOR: '1',
    DENO_NO_UPDATE_CHECK: '1',
    DENO_DIR: join(ROOT, 'node_modules', '.cache', 'deno'),
  }
}

function run(runtime: string, report: string): Promise<{ code: number | null; output: string }> {
  const [command, args] = RUNNERS[runtime]!([
    'run',
    '--config',
    CONFIG,
    '--reporter=json',
    `--outputFile=${report}`,
  ])
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once('error', reject)
    child.once('exit', (code) => resolve({ code, output }))
  })
}

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

describe('the pure core unit tests', () => {
  const files = coreTestFiles(ROOT)

  it('are the files that reach src/ and only runtime-neutral packages', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'test/authentication/authenticate.test.ts',
        'test/decisions/decide.test.ts',
        'test/oauth/pkce.test.ts',
        'test/policy.test.ts',
        'test/restrictions/ip-matcher.test.ts',
        'test/tokens/token-hash.test.ts',
      ]),
    )
    // The CLI, HTTP servers and frameworks are not the core.
    for (const other of ['test/decisions/decision-tables.test.ts', 'test/client.test.ts', 'test/cli.test.ts'])
      expect(files).not.toContain(other)
    expect(files.filter((file) => /^test\/(adapters|server|conformance|runtimes)\//.test(file))).toEqual([])
  })

  // Bounds for a hang on a loaded machine, not for speed (about 10 s each on a quiet one).
  it.each(Object.keys(RUNNERS))(
    'pass under %s',
    async (runtime) => {
      const reportFile = join(scratch, `${runtime}.json`)
      const { code, output } = await run(runtime, reportFile)
      const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report
      const failed = report.testResults.flatMap((file) =>
        file.assertionResults
          .filter((test) => test.status !== 'passed')
          .map((test) => `${file.name}: ${test.fullName}`),
      )
      expect(failed, output).toEqual([])
      expect(code, output).toBe(0)
      expect(report.testResults.map((file) => file.name.slice(ROOT.length + 1)).sort()).toEqual(files)
      // Over a thousand table rows and properties: a runner that found few tests ran the wrong thing.
      expect(report.numPassedTests).toBe(report.numTotalTests)
      expect(report.numPassedTests).toBeGreaterThan(1000)
    },
    300_000,
  )
})
