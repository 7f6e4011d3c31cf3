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
const FRAMEWORKS = ['express', 'fastify', 'hono', '@hono/node-server']
let project: string

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'index.js')))
    throw new Error('dist/ is missing: run `npm run build` first')
  project = mkdtempSync(join(tmpdir(), 'dap-consumer-'))
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', project], root)) as {
    filename: string
  }[]
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
  // fast-check and ioredis are the optional peers the testing kit and ./redis need; no framework is installed.
  const versionOf = (name: string) =>
    (
      JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string
      }
    ).version
  const tarball = join(project, packed[0]!.filename)
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      tarball,
      `fast-check@${versionOf('fast-check')}`,
      `ioredis@${versionOf('ioredis')}`,
    ],
    project,
  )
}, 120_000)

afterAll(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true })
})

describe('the packed package', () => {
  test('declares exactly the documented subpaths', () => {
    expect(SUBPATHS).toEqual([
      '.',
      './oauth',
      './express',
      './fastify',
      './hono',
      './testing',
      './client',
      './redis',
    ])
  })

  test.each(SUBPATHS)('%s imports from ESM', (subpath) => {
    const specifier = subpath === '.' ? 'data-access-policy' : `data-access-policy/${subpath.slice(2)}`
    const script = `const m = await import(${JSON.stringify(specifier)}); console.log(Object.keys(m).length)`
    expect(Number(run('node', ['--input-type=module', '-e', script], project))).toBeGreaterThan(0)
  })

  test.each(SUBPATHS)('%s loads with CommonJS require', (subpath) => {
    const specifier = subpath === '.' ? 'data-access-policy' : `data-access-policy/${subpath.slice(2)}`
    const script = `console.log(Object.keys(require(${JSON.stringify(specifier)})).length)`
    expect(Number(run('node', ['-e', script], project))).toBeGreaterThan(0)
  })

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
