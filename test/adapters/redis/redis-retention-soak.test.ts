import { createHash } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisOAuthStateStore, RedisTokenStore } from '../../../adapters/redis/index.js'
import { generateRandomBase62 } from '../../../src/tokens/token-format.js'
import { expectFlat, soak } from '../../tokens/retention-soak.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

// Create/revoke churn and OAuth minting on a real Redis, with a simulated clock: the key count stays
// flat once records pass their display window, and every key has an expiry.
const NOW = Date.UTC(2025, 0, 1)
let server: RedisServer
let admin: Redis

beforeAll(async () => {
  server = await startRedisServer()
  admin = new Redis(server.url)
})

afterAll(async () => {
  admin?.disconnect()
  await server?.stop()
})

async function everyKeyExpires(): Promise<string[]> {
  const lasting: string[] = []
  for (const key of await admin.keys('*')) if ((await admin.pttl(key)) < 0) lasting.push(key)
  return lasting
}

describe('RedisTokenStore: every record has an end', () => {
  test('churn and OAuth minting leave the key count flat, and every key expires', async () => {
    const clock = { now: NOW }
    const store = new RedisTokenStore({ redis: server.url, now: () => clock.now })
    try {
      await store.ready()
      const user = `churner-${generateRandomBase62(8)}`
      const options = { cycles: 300, stepMs: 6 * 3_600_000, count: () => admin.dbsize(), user }
      const samples = await soak(store, clock, options)
      // Two keys a record (the record, its id index), and the two owners' indexes.
      expectFlat(samples, options, 2)
      expect(await everyKeyExpires()).toEqual([])
    } finally {
      await store.close()
    }
  }, 120_000)

  test('OAuth state keys (codes, grants, refresh families) all expire with their records', async () => {
    const state = new RedisOAuthStateStore({ redis: server.url })
    try {
      await state.ready()
      for (let index = 0; index < 20; index++) {
        const hash = createHash('sha256').update(generateRandomBase62(16)).digest('hex')
        await state.saveRefreshFamily({
          id: `rf_${generateRandomBase62(16)}`,
          version: 0,
          clientId: 'cli',
          userId: 'alice',
          scopes: ['public'],
          tokenHashes: [
            hash
              .padEnd(64, '0')
              .toLowerCase()
              .replace(/[^0-9a-f]/g, 'a'),
          ],
          accessTokens: [],
          createdAt: NOW,
          expiresAt: NOW + 86_400_000,
          retainUntil: NOW + 86_400_000,
        })
        await state.recordUserCodeFailure(`session-${index}`, NOW, 900_000)
      }
      expect(await everyKeyExpires()).toEqual([])
    } finally {
      await state.close()
    }
  })
})
