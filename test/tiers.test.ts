/**
 * The tiers' rule (test/tiers.ts) holds for every test file: what a file needs, read from the
 * imports of the file and of its helpers in test/ and scripts/, is something its tier provides. A
 * new file that starts redis-server outside the redis tier fails here, with the names that would
 * move it, before it makes `npm run test:quick` need Redis.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'
import { type Need, TIERS, tierOf } from './tiers.js'

const root = join(import.meta.dirname, '..')

// Runtime module specifiers, static and dynamic: `import type` lines vanish when compiled.
const STATIC = /^\s*(?:import|export)\s+(type\s+)?[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

function imports(file: string): string[] {
  const source = readFileSync(file, 'utf8')
  return [
    ...[...source.matchAll(STATIC)].filter((match) => match[1] === undefined).map((match) => match[2]!),
    ...[...source.matchAll(DYNAMIC)].map((match) => match[1]!),
  ]
}

// What reaching a module means: the helpers that start each thing a tier provides.
function needOfModule(path: string): Need | undefined {
  if (/^test\/adapters\/redis\/redis-(server|cluster)\.ts$/.test(path)) return 'redis'
  if (path === 'test/browser/chromium.ts') return 'browser'
  if (path.startsWith('test/runtimes/')) return 'runtimes'
  if (path.startsWith('examples/server/') || path === 'scripts/server-process.ts') return 'server'
  return undefined
}

function needOfPackage(specifier: string): Need | undefined {
  if (specifier === 'node:child_process') return 'programs'
  if (specifier === 'playwright-core') return 'browser'
  if (specifier === 'miniflare') return 'runtimes'
  return undefined
}

/** What a test file needs, following relative imports through test/ and scripts/. */
function needsOf(file: string): Set<Need> {
  const needs = new Set<Need>()
  const seen = new Set<string>()
  const visit = (path: string) => {
    if (seen.has(path)) return
    seen.add(path)
    const need = needOfModule(path)
    if (need !== undefined && path !== file) needs.add(need)
    if (!/^(test|scripts)\//.test(path)) return
    for (const specifier of imports(join(root, path))) {
      if (!specifier.startsWith('.')) {
        const packageNeed = needOfPackage(specifier)
        if (packageNeed !== undefined) needs.add(packageNeed)
        continue
      }
      const target = resolve(dirname(join(root, path)), specifier.replace(/\.js$/, '.ts'))
      visit(relative(root, target).replaceAll('\\', '/'))
    }
  }
  visit(file)
  return needs
}

function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return testFiles(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })
}

describe('test tiers', () => {
  test.each([
    ['test/decisions/decide.test.ts', 'unit'],
    ['test/a-new-folder/anything.test.ts', 'unit'],
    ['test/cli.test.ts', 'unit'],
    ['test/cli-scan-a-new-case.test.ts', 'tools'],
    ['test/package.test.ts', 'tools'],
    ['test/server/listing.test.ts', 'server'],
    ['test/conformance/conformance.test.ts', 'server'],
    ['test/e2e/python-clients.test.ts', 'server'],
    ['test/decisions/over-http.server.test.ts', 'server'],
    ['test/server/redis-store.test.ts', 'redis'],
    ['test/server/abuse-limits.redis.test.ts', 'redis'],
    ['test/adapters/redis/record-cache.test.ts', 'redis'],
    ['test/runtimes/runtimes.test.ts', 'runtimes'],
    ['test/browser/docs.browser.test.ts', 'browser'],
    ['test/server/abuse-load.timing.test.ts', 'timing'],
    ['test/browser/a-new.timing.test.ts', 'timing'],
  ])('%s is in the %s tier', (file, tier) => {
    expect(tierOf(file).name).toBe(tier)
  })

  test('a file outside test/**/*.test.ts is in no tier', () => {
    expect(() => tierOf('test/server/web-client.ts')).toThrow('is not a test file')
  })

  test.each(testFiles('test'))('%s needs only what its tier provides', (file) => {
    const tier = tierOf(file)
    const missing = [...needsOf(file)].filter((need) => !tier.provides.includes(need))
    const fits = TIERS.filter((each) => missing.every((need) => each.provides.includes(need)))
    expect(
      missing,
      `${file} is in the ${tier.name} tier (${tier.needs}); it needs ${missing.join(', ')}: ` +
        `move or rename it into ${fits.map((each) => `${each.name} (${each.include.join(', ')})`).join(' or ')}`,
    ).toEqual([])
  })
})
