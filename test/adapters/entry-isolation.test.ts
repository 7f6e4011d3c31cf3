import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'

const root = join(import.meta.dirname, '..', '..')

// Runtime module specifiers of a file: `import type` / `export type` lines vanish when compiled.
const STATEMENT = /^\s*(import|export)\s+(type\s+)?[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm

function runtimeImports(file: string): string[] {
  const source = readFileSync(file, 'utf8')
  return [...source.matchAll(STATEMENT)].filter((match) => match[2] === undefined).map((match) => match[3]!)
}

// Every bare (package or node:) specifier reached at run time from an entry, following relative imports.
function packagesReachedFrom(entry: string): Set<string> {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      else packages.add(specifier)
    }
  }
  visit(join(root, entry))
  return packages
}

describe('each adapter entry loads only its own framework (frameworks are optional peers)', () => {
  test.each([
    ['adapters/express/index.ts', ['fastify', 'fastify-plugin', 'hono', '@hono/node-server', 'express']],
    ['adapters/fastify/index.ts', ['express', 'hono', '@hono/node-server', 'fastify']],
    ['adapters/hono/index.ts', ['express', 'fastify', 'fastify-plugin', '@hono/node-server', 'hono']],
  ])('%s', (entry, forbidden) => {
    const reached = [...packagesReachedFrom(entry)]
    expect(reached.filter((name) => forbidden.includes(name) || name.startsWith('hono/'))).toEqual([])
  })

  test('the Hono entry needs no Node built-in at run time', () => {
    expect(
      [...packagesReachedFrom('adapters/hono/index.ts')].filter((name) => name.startsWith('node:')),
    ).toEqual([])
  })

  test('the scan sees runtime imports and skips type-only ones', () => {
    expect([...packagesReachedFrom('adapters/fastify/index.ts')]).toEqual(
      expect.arrayContaining(['node:stream', 'fastify-plugin', 'proxy-addr', 'zod']),
    )
  })
})
