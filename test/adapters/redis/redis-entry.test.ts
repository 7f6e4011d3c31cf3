import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'

// ioredis is an optional peer: only the ./redis entry may load it, and that entry does no I/O at
// import time beyond loading it (no connection until a store is constructed).
const root = join(import.meta.dirname, '..', '..', '..')
const STATEMENT = /^\s*(import|export)\s+(type\s+)?[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm

function packagesReachedFrom(entry: string): Set<string> {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const match of readFileSync(file, 'utf8').matchAll(STATEMENT)) {
      if (match[2] !== undefined) continue
      const specifier = match[3]!
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      else packages.add(specifier)
    }
  }
  visit(join(root, entry))
  return packages
}

describe('the ./redis entry', () => {
  test('is the only entry that loads ioredis', () => {
    const others = ['src/index.ts', 'src/testing/index.ts', 'src/client.ts']
    for (const name of readdirSync(join(root, 'adapters'))) {
      if (name !== 'redis' && name !== 'shared') others.push(`adapters/${name}/index.ts`)
    }
    for (const entry of others) expect([...packagesReachedFrom(entry)], entry).not.toContain('ioredis')
  })

  test('loads ioredis and zod, and no framework', () => {
    expect([...packagesReachedFrom('adapters/redis/index.ts')].sort()).toEqual(['ioredis', 'zod'])
  })
})
