import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
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
