import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

// Packs the built package, installs the tarball in an empty project and imports every subpath
// from ESM and from CommonJS, as a consumer would. `npm test` builds before it runs the suite.
const root = join(import.meta.dirname, '..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>
}
const SUBPATHS = Object.keys(manifest.exports).filter((key) => key !== './package.json')
// The one subpath that needs an optional peer the consumer has not installed: fast-check.
const ARBITRARIES = './testing/arbitraries'
const PLAIN_SUBPATHS = SUBPATHS.filter((subpath) => subpath !== ARBITRARIES)
const FRAMEWORKS = ['express', 'fastify', 'hono', '@hono/node-server']
// npm pack and install take a minute alone and several on a busy machine: this bound is for a hang only.
const HANG = 600_000
let project: string
let fastCheck: string

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

const specifierOf = (subpath: string) =>
  subpath === '.' ? 'data-access-policy' : `data-access-policy/${subpath.slice(2)}`
const importScript = (subpath: string) =>
  `const m = await import(${JSON.stringify(specifierOf(subpath))}); console.log(Object.keys(m).length)`
const requireScript = (subpath: string) =>
  `console.log(Object.keys(require(${JSON.stringify(specifierOf(subpath))})).length)`

/** The stderr of a node script that must fail. */
function failureOf(args: string[]): string {
  try {
    run('node', args, project)
  } catch (error) {
    return String((error as { stderr?: unknown }).stderr)
  }
  throw new Error(`node ${args.join(' ')} succeeded`)
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'index.js')))
    throw new Error('dist/ is missing: run `npm run build` first')
  project = mkdtempSync(join(tmpdir(), 'dap-consumer-'))
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', project], root)) as {
    filename: string
  }[]
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
  // ioredis is the optional peer ./redis needs; fast-check (for ./testing/arbitraries) comes later, and
  // no framework is installed.
  const versionOf = (name: string) =>
    (
      JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string
      }
    ).version
  const tarball = join(project, packed[0]!.filename)
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `ioredis@${versionOf('ioredis')}`],
    project,
  )
  fastCheck = `fast-check@${versionOf('fast-check')}`
}, HANG)

afterAll(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true })
})

describe('the packed package', () => {
  test('declares exactly the documented subpaths', () => {
    expect(SUBPATHS).toEqual([
      '.',
      './oauth',
      './introspection',
      './jwt',
      './express',
      './fastify',
      './hono',
      './testing',
      './testing/arbitraries',
      './client',
      './redis',
      './openapi',
      './dpop',
      './mcp',
    ])
  })

  // Without fast-check installed: ./testing (fixtures, expectDecision) needs no optional peer.
  test.each(PLAIN_SUBPATHS)('%s imports from ESM', (subpath) => {
    expect(
      Number(run('node', ['--input-type=module', '-e', importScript(subpath)], project)),
    ).toBeGreaterThan(0)
  })

  test.each(PLAIN_SUBPATHS)('%s loads with CommonJS require', (subpath) => {
    expect(Number(run('node', ['-e', requireScript(subpath)], project))).toBeGreaterThan(0)
  })

  test('./testing/arbitraries without fast-check fails naming the package', () => {
    expect(failureOf(['--input-type=module', '-e', importScript(ARBITRARIES)])).toMatch(/'fast-check'/)
    expect(failureOf(['-e', requireScript(ARBITRARIES)])).toMatch(/'fast-check'/)
  })

  test(
    './testing/arbitraries loads from ESM and CommonJS once fast-check is installed',
    () => {
      run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', fastCheck], project)
      expect(
        Number(run('node', ['--input-type=module', '-e', importScript(ARBITRARIES)], project)),
      ).toBeGreaterThan(0)
      expect(Number(run('node', ['-e', requireScript(ARBITRARIES)], project))).toBeGreaterThan(0)
    },
    HANG,
  )

  test('no framework is installed with it, and no subpath needs one to load', () => {
    for (const framework of FRAMEWORKS)
      expect(existsSync(join(project, 'node_modules', framework))).toBe(false)
  })

  test('an error class is one class across subpaths', () => {
    const script = [
      "const core = await import('data-access-policy')",
      "const client = await import('data-access-policy/client')",
      'console.log(Object.getPrototypeOf(client.ApiError) === core.DataAccessPolicyError)',
    ].join(';')
    expect(run('node', ['--input-type=module', '-e', script], project).trim()).toBe('true')
  })
})
