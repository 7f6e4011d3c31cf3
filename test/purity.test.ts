import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'

const root = join(import.meta.dirname, '..')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

// Every module specifier of a static import/export, a dynamic import or a require call.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g
const FORBIDDEN =
  /^(node:|express$|fastify($|-)|@fastify\/|hono($|\/)|@hono\/|proxy-addr$|fs$|path$|http$|https$|crypto$|stream$|net$)/

describe('the core is pure (design §8)', () => {
  const files = sourceFiles(join(root, 'src'))

  test('finds the core sources', () => {
    expect(files.length).toBeGreaterThan(10)
  })

  test.each(files.map((file) => [relative(root, file), file]))(
    '%s imports no framework and no node: module',
    (_name, file) => {
      const specifiers = [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((match) => match[1]!)
      expect(specifiers.filter((specifier) => FORBIDDEN.test(specifier))).toEqual([])
    },
  )

  test('the check itself catches a forbidden import', () => {
    const sample = "import { createHash } from 'node:crypto'\nimport type { Context } from 'hono'"
    const found = [...sample.matchAll(SPECIFIER)].map((match) => match[1]!).filter((s) => FORBIDDEN.test(s))
    expect(found).toEqual(['node:crypto', 'hono'])
  })
})

// The concern folders form layers: a module imports only from its own layer or the ones below
// (authentication → tokens → decisions → restrictions → errors; oauth, introspection, policy,
// testing and openapi on top).
const LAYERS: Record<string, number> = {
  'errors.ts': 0,
  'config-error.ts': 0,
  'config-shapes.ts': 0,
  restrictions: 1,
  decisions: 2,
  tokens: 3,
  authentication: 4,
  oauth: 5,
  introspection: 5,
  'policy.ts': 5,
  'client.ts': 5,
  testing: 6,
  openapi: 6,
  'index.ts': 6,
}
const ENTRY_POINTS = new Set([
  'index.ts',
  'policy.ts',
  'client.ts',
  'errors.ts',
  'config-error.ts',
  'config-shapes.ts',
])

function layerOf(file: string): number | undefined {
  const top = relative(join(root, 'src'), file).replace(/\.js$/, '.ts').split('/')[0]!
  return LAYERS[top]
}

describe('src/ is grouped by concern, in layers', () => {
  const files = sourceFiles(join(root, 'src'))

  test.each(files.map((file) => [relative(root, file), file]))(
    '%s sits in a concern folder',
    (_name, file) => {
      const rel = relative(join(root, 'src'), file)
      if (!rel.includes('/')) expect(ENTRY_POINTS).toContain(rel)
      expect(layerOf(file)).toBeDefined()
    },
  )

  test.each(files.map((file) => [relative(root, file), file]))(
    '%s imports no layer above its own',
    (_name, file) => {
      const own = layerOf(file)!
      const upward = [...readFileSync(file, 'utf8').matchAll(SPECIFIER)]
        .map((match) => match[1]!)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolve(dirname(file), specifier))
        .filter((target) => (layerOf(target) ?? Number.POSITIVE_INFINITY) > own)
        .map((target) => relative(root, target))
      expect(upward).toEqual([])
    },
  )

  test('the layer check itself catches an upward import', () => {
    const decide = join(root, 'src/decisions/decide.ts')
    expect(layerOf(resolve(dirname(decide), '../tokens/token-record.js'))).toBeGreaterThan(layerOf(decide)!)
  })
})

// The reference server is a host: it reaches the library only through the package's entry points
// (package.json `exports`), so what the conformance suite proves is what hosts get.
const PUBLIC_ENTRY_POINTS = new Set(
  [
    'src/index.ts',
    'src/oauth/index.ts',
    'src/testing/index.ts',
    'src/client.ts',
    'adapters/express/index.ts',
    'adapters/fastify/index.ts',
    'adapters/hono/index.ts',
    'adapters/redis/index.ts',
    'src/openapi/index.ts',
  ].map((entry) => join(root, entry)),
)

function privateImports(file: string, source: string): string[] {
  return [...source.matchAll(SPECIFIER)]
    .map((match) => match[1]!)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'))
    .filter((target) => !target.startsWith(join(root, 'examples')) && !PUBLIC_ENTRY_POINTS.has(target))
    .map((target) => relative(root, target))
}

describe('examples/ imports the library only through its public entry points', () => {
  const files = sourceFiles(join(root, 'examples'))

  test.each(files.map((file) => [relative(root, file), file]))('%s', (_name, file) => {
    expect(privateImports(file, readFileSync(file, 'utf8'))).toEqual([])
  })

  test('the check itself catches a private import', () => {
    const file = join(root, 'examples/server/app.ts')
    const sample =
      "import { parseAddressRule } from '../../src/restrictions/ip-address.js'\nimport { x } from './flags.js'"
    expect(privateImports(file, sample)).toEqual(['src/restrictions/ip-address.ts'])
  })
})
