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
  dpop: 4,
  oauth: 5,
  introspection: 5,
  jwt: 5,
  'policy.ts': 5,
  'client.ts': 5,
  testing: 6,
  openapi: 6,
  mcp: 6,
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

// The reference server is a host: it imports the library by the package's names (package.json
// `exports`), as a host writes them, never by a path into src/ or adapters/, so that what the
// conformance suite proves is what hosts get.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string
  exports: Record<string, unknown>
}
const PACKAGE_NAMES = new Set(
  Object.keys(manifest.exports).map((subpath) =>
    subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
  ),
)

function privateImports(file: string, source: string): string[] {
  return [...source.matchAll(SPECIFIER)]
    .map((match) => match[1]!)
    .flatMap((specifier) => {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts')
        return target.startsWith(join(root, 'examples')) ? [] : [relative(root, target)]
      }
      const ours = specifier === manifest.name || specifier.startsWith(`${manifest.name}/`)
      return ours && !PACKAGE_NAMES.has(specifier) ? [specifier] : []
    })
}

describe('examples/ imports the library only by the package names a host writes', () => {
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

  test('the check itself catches a path to an entry and a name the package does not export', () => {
    const file = join(root, 'examples/server/app.ts')
    const sample = [
      "import { createAccessPolicy } from '../../src/index.js'",
      "import { deny } from 'data-access-policy'",
      "import { accessControl } from 'data-access-policy/hono'",
      "import { decide } from 'data-access-policy/src/decisions/decide.js'",
    ].join('\n')
    expect(privateImports(file, sample)).toEqual([
      'src/index.ts',
      'data-access-policy/src/decisions/decide.js',
    ])
  })
})
