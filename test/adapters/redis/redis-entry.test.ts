import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { packagesReachedFrom } from '../runtime-imports.js'

// ioredis is an optional peer: only the ./redis entry may load it, and that entry does no I/O at
// import time beyond loading it (no connection until a store is constructed).
const root = join(import.meta.dirname, '..', '..', '..')

describe('the ./redis entry', () => {
  test('is the only entry that loads ioredis', () => {
    const others = ['src/index.ts', 'src/testing/index.ts', 'src/testing/arbitraries.ts', 'src/client.ts']
    for (const name of readdirSync(join(root, 'adapters'))) {
      if (name !== 'redis' && name !== 'shared') others.push(`adapters/${name}/index.ts`)
    }
    for (const entry of others) expect([...packagesReachedFrom(entry)], entry).not.toContain('ioredis')
  })

  test('loads ioredis, zod and the pure-JS SHA-256 (used where node:crypto is absent), and no framework', () => {
    expect([...packagesReachedFrom('adapters/redis/index.ts')].sort()).toEqual([
      '@noble/hashes/sha2.js',
      '@noble/hashes/utils.js',
      'ioredis',
      'zod',
    ])
  })
})
