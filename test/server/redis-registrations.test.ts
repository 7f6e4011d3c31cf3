/**
 * Registered clients on Redis: the bound holds (oldest unused first, then oldest used), unused
 * registrations expire, used ones are renewed, and every key has a TTL.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisRegistrationStore } from '../../examples/server/oauth/redis-registrations.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { expectOldestUnusedGoesFirst } from './registration-store-bound.js'

const registration = { redirectUris: ['http://127.0.0.1/cb'], name: 'CLI', scope: 'public' }
let redis: RedisServer
const stores: RedisRegistrationStore[] = []

function store(prefix: string, options: ConstructorParameters<typeof RedisRegistrationStore>[1] = {}) {
  const opened = new RedisRegistrationStore(redis.url, { keyPrefix: prefix, ...options })
  stores.push(opened)
  return opened
}

beforeAll(async () => {
  redis = await startRedisServer()
}, 30_000)

afterAll(async () => {
  await Promise.all(stores.map((each) => each.close()))
  await redis?.stop()
})

describe('RedisRegistrationStore', () => {
  test('holds its bound: the oldest unused goes first, then the oldest used', async () => {
    let now = 1_000_000
    const registrations = store('bound:', { maxClients: 3, now: () => now++ })
    await registrations.ready()
    await expectOldestUnusedGoesFirst(registrations, registration)
  })

  test('an unused registration expires; a used one is renewed; every key has a TTL', async () => {
    const registrations = store('ttl:', { unusedTtlMs: 300, usedTtlMs: 60_000 })
    await registrations.ready()
    await registrations.add('unused', { ...registration, name: undefined, scope: undefined })
    await registrations.add('used', registration)
    await registrations.markUsed('used')
    const client = new Redis(redis.url)
    try {
      const keys = await client.keys('ttl:*')
      expect(keys.length).toBe(4)
      for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0)
      const deadline = Date.now() + 20_000
      while ((await registrations.get('unused')) !== undefined && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 100))
      }
      expect(await registrations.get('unused')).toBeUndefined()
      expect(await registrations.get('used')).toEqual(registration)
    } finally {
      client.disconnect()
    }
  })

  test('an unreadable entry and a store that is away are failures, never an unknown client', async () => {
    const registrations = store('bad:')
    await registrations.ready()
    const client = new Redis(redis.url)
    await client.set('bad:{registrations}:client:x', 'not json')
    client.disconnect()
    await expect(registrations.get('x')).rejects.toThrow(/unreadable registration/)
    const closed = store('closed:')
    await closed.close()
    await expect(closed.get('x')).rejects.toThrow(/Redis could not/)
  })
})
