import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisTokenStore } from '../../../adapters/redis/index.js'
import { ConfigError, TokenStoreError } from '../../../src/errors.js'
import { createAccessPolicy } from '../../../src/policy.js'
import { hashTokenValue } from '../../../src/tokens/token-hash.js'
import {
  createApiToken,
  rescopeToken,
  revokeToken,
  type TokenRecord,
  tokenStatus,
} from '../../../src/tokens/token-record.js'
import type { TokenStore } from '../../../src/tokens/token-store.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

// The cache and the failure modes of RedisTokenStore, on a real Redis this file starts. Two stores
// on one server stand for two instances of a service; `admin` is a plain client that reaches
// behind them (to kill connections, plant garbage, look at keys).

const NOW = Date.now()
const SECOND = 1000
// How long a wait for a condition may last before it fails: generous, so that a busy machine never
// fails a test the code passes. The contract's own bounds (a second) are asserted on the measured time.
const PATIENCE = 30 * SECOND
// For the tests that wait for several conditions in a row.
const PATIENT_TEST = 60 * SECOND

let server: RedisServer
let admin: Redis
const opened: RedisTokenStore[] = []

async function open(options: Partial<ConstructorParameters<typeof RedisTokenStore>[0]> = {}) {
  const store = new RedisTokenStore({ redis: server.url, commandTimeoutMs: 200, ...options })
  opened.push(store)
  await store.ready()
  return store
}

beforeAll(async () => {
  server = await startRedisServer()
  admin = new Redis(server.url)
})

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()))
  admin?.disconnect()
  await server?.stop()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<number> {
  const start = performance.now()
  while (!(await check())) {
    if (performance.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms`)
    await sleep(5)
  }
  return performance.now() - start
}

async function saved(
  store: TokenStore,
  scopes = 'data.data',
): Promise<{ record: TokenRecord; hash: string }> {
  const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes, now: NOW })
  await store.save(record)
  return { record, hash: hashTokenValue(value) }
}

/** Whether the store answers this hash synchronously (from its cache). */
function answersFromCache(store: TokenStore, hash: string): boolean {
  const answer = store.findByHash(hash)
  if (answer instanceof Promise) {
    answer.catch(() => {})
    return false
  }
  return true
}

async function lookUp(store: TokenStore, hash: string): Promise<TokenRecord | undefined> {
  return store.findByHash(hash)
}

describe('RedisTokenStore: the per-instance cache', () => {
  test('answers a repeated lookup synchronously, with the same frozen record', async () => {
    const store = await open()
    const { record, hash } = await saved(store)
    const first = store.findByHash(hash)
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toEqual(record)
    const second = store.findByHash(hash)
    expect(second).not.toBeInstanceOf(Promise)
    expect(second).toBe(await first)
    expect(Object.isFrozen(second)).toBe(true)
  })

  test('makes a change effective at once on the instance that made it', async () => {
    const store = await open()
    const { record, hash } = await saved(store)
    await lookUp(store, hash)
    expect(answersFromCache(store, hash)).toBe(true)
    await store.update(revokeToken(record, NOW + 1))
    expect(tokenStatus((await lookUp(store, hash))!, NOW + 2)).toBe('revoked')
  })

  test(
    'makes a change effective within a second on another instance',
    async () => {
      const [a, b] = [await open(), await open()]
      const { record, hash } = await saved(a)
      await lookUp(a, hash)
      expect(answersFromCache(a, hash)).toBe(true)
      const start = performance.now()
      await b.update(rescopeToken(record, 'data.overview'))
      await waitFor(async () => (await lookUp(a, hash))?.scopes.includes('data.data') === false, PATIENCE)
      expect(performance.now() - start).toBeLessThan(SECOND)
      // The new record is cached in turn.
      await waitFor(() => answersFromCache(a, hash), PATIENCE)
      expect(await lookUp(a, hash)).toEqual(rescopeToken(record, 'data.overview'))
    },
    PATIENT_TEST,
  )

  test('shares one read among concurrent misses and caches nothing a change overtook', async () => {
    const [a, b] = [await open(), await open()]
    const { record, hash } = await saved(a)
    const reads = [a.findByHash(hash), a.findByHash(hash)]
    expect(reads[0]).toBe(reads[1])
    await b.update(revokeToken(record, NOW + 1))
    await Promise.all(reads)
    await waitFor(async () => (await lookUp(a, hash))?.revokedAt !== undefined, PATIENCE)
  })

  test('evicts the least recently used record beyond cacheSize', async () => {
    const store = await open({ cacheSize: 2 })
    const tokens = [await saved(store), await saved(store), await saved(store)]
    for (const { hash } of tokens) await lookUp(store, hash)
    expect(tokens.map(({ hash }) => answersFromCache(store, hash))).toEqual([false, true, true])
  })

  test('without a cache, every lookup goes to Redis', async () => {
    const store = await open({ cacheSize: 0 })
    const { hash } = await saved(store)
    await lookUp(store, hash)
    expect(answersFromCache(store, hash)).toBe(false)
  })

  test(
    'drops its cache when the subscriber connection is lost: a change made meanwhile is never served',
    async () => {
      const [a, b] = [await open(), await open()]
      const { record, hash } = await saved(a)
      await lookUp(a, hash)
      expect(answersFromCache(a, hash)).toBe(true)
      // Every subscriber connection goes; the revocation's message reaches no one.
      await admin.client('KILL', 'TYPE', 'pubsub')
      const start = performance.now()
      await b.update(revokeToken(record, NOW + 1))
      await waitFor(async () => (await lookUp(a, hash))?.revokedAt !== undefined, PATIENCE)
      expect(performance.now() - start).toBeLessThan(SECOND)
      // Resubscribed by itself, the instance caches again.
      await waitFor(() => answersFromCache(a, hash), PATIENCE)
      expect((await lookUp(a, hash))?.revokedAt).toBe(NOW + 1)
    },
    PATIENT_TEST,
  )

  test('coalesces concurrent touches of one token into one write', async () => {
    const store = await open()
    const { record } = await saved(store)
    await Promise.all([1, 2, 3, 4].map((i) => store.touch(record.id, NOW + i)))
    expect((await store.findById(record.id))?.lastUsedAt).toBe(NOW + 1)
    await store.touch(record.id, NOW + 10)
    expect((await store.findById(record.id))?.lastUsedAt).toBe(NOW + 10)
  })
})

describe('RedisTokenStore: keys and garbage', () => {
  test('keys records by the hash of the value and never stores the value', async () => {
    const store = await open({ keyPrefix: 'secrets:' })
    const { record, value } = createApiToken({ userId: 'carol', name: 'ci', scopes: '', now: NOW })
    await store.save(record)
    const keys = await admin.keys('secrets:*')
    expect(keys).toContain(`secrets:token:${hashTokenValue(value)}`)
    const stored = JSON.stringify(await Promise.all(keys.map((key) => admin.dump(key))))
    expect(`${keys.join(' ')} ${stored}`).not.toContain(value.slice(4))
  })

  test.each([
    ['not JSON', () => '{"id":'],
    ['JSON that is not a record', () => JSON.stringify({ id: 'x' })],
    ['a record with an extra field', (r: TokenRecord) => JSON.stringify({ ...r, value: 'x' })],
    [
      'a record stored under another hash',
      (r: TokenRecord) => JSON.stringify({ ...r, hash: 'f'.repeat(64) }),
    ],
  ])('fails a lookup that finds %s, never answers it', async (_, garbage) => {
    const store = await open({ keyPrefix: 'garbage:' })
    const { record, hash } = await saved(store)
    await admin.set(`garbage:token:${hash}`, garbage(record))
    await expect(lookUp(store, hash)).rejects.toThrow(TokenStoreError)
    await expect(store.findById(record.id)).rejects.toThrow(TokenStoreError)
    await expect(store.listByOwner('alice')).rejects.toThrow(TokenStoreError)
    await expect(store.update(rescopeToken(record, ''))).rejects.toThrow(TokenStoreError)
  })

  test('fails on a malformed id index entry', async () => {
    const store = await open({ keyPrefix: 'index:' })
    await admin.set('index:token-id:tok_x', 'not a hash')
    await expect(store.findById('tok_x')).rejects.toThrow(TokenStoreError)
    await expect(store.touch('tok_x', NOW)).rejects.toThrow(TokenStoreError)
  })

  test.each([
    [{ redis: 'http://127.0.0.1:6379' }, /options\.redis/],
    [{ redis: 42 }, /options\.redis/],
    [{ redis: 'redis://127.0.0.1:1', cacheSize: -1 }, /options\.cacheSize/],
    [{ redis: 'redis://127.0.0.1:1', heartbeatMs: 600 }, /options\.heartbeatMs/],
    [{ redis: 'redis://127.0.0.1:1', keyPrefix: 'has space' }, /options\.keyPrefix/],
    [{ redis: 'redis://127.0.0.1:1', extra: true }, /options/],
  ])('refuses the options %o', (options, message) => {
    expect(() => new RedisTokenStore(options as never)).toThrow(ConfigError)
    expect(() => new RedisTokenStore(options as never)).toThrow(message)
  })
})

describe('RedisTokenStore: fail closed, recover without a restart', () => {
  test(
    'serves its cache at most a second after Redis stops answering, then fails until it answers again',
    async () => {
      const store = await open()
      const { record, hash } = await saved(store)
      await lookUp(store, hash)
      await sleep(300) // a few heartbeats: the cache's freshness now comes from them, not from the read
      server.pause()
      const start = performance.now()
      try {
        await waitFor(() => !answersFromCache(store, hash), PATIENCE)
        // The bound is checked on every lookup; the slack is this loop's polling under a busy machine
        // (half a second: a cache kept for twice its bound would still be caught).
        expect(performance.now() - start).toBeLessThan(SECOND + 500)
        // Past the cache, Redis's silence is a failure after commandTimeoutMs (200 ms here), not a wait
        // (for a reconnection or the 30 s patience); the slack is a busy machine's.
        const failing = performance.now()
        await expect(lookUp(store, hash)).rejects.toThrow(TokenStoreError)
        expect(performance.now() - failing).toBeLessThan(1500)
      } finally {
        server.resume()
      }
      await waitFor(
        async () => (await lookUp(store, hash).catch(() => undefined))?.id === record.id,
        3 * SECOND,
      )
      await waitFor(() => answersFromCache(store, hash), PATIENCE)
    },
    PATIENT_TEST,
  )

  test(
    'answers 503 through the policy while Redis is down, and recovers after a restart',
    async () => {
      const store = await open()
      const { value, record } = createApiToken({ userId: 'dave', name: 'ci', scopes: 'data.data', now: NOW })
      await store.save(record)
      const hash = hashTokenValue(value)
      const policy = createAccessPolicy({ tokens: store, storeTimeoutMs: 1000 })
      const request = { authorization: [`Bearer ${value}`], protocol: 'https', clientAddress: '127.0.0.1' }
      const outcome = async () => {
        const result = await policy.authenticate(request)
        return result.ok ? 'allow' : result.decision.code
      }
      expect(await outcome()).toBe('allow')
      await server.snapshot()
      await server.kill()
      const start = performance.now()
      await waitFor(async () => (await outcome()) === 'service_unavailable', PATIENCE)
      expect(performance.now() - start).toBeLessThan(SECOND)
      for (let i = 0; i < 20; i++) expect(await outcome()).toBe('service_unavailable')
      await expect(
        store.save(createApiToken({ userId: 'dave', name: 'x', scopes: '', now: NOW }).record),
      ).rejects.toThrow(TokenStoreError)
      await server.restart()
      await waitFor(async () => (await outcome()) === 'allow', PATIENCE)
      await waitFor(() => answersFromCache(store, hash), PATIENCE)
      // Scripts were lost with the restart; ioredis loads them again.
      await store.update(revokeToken(record, NOW + 1))
      expect(await outcome()).toBe('invalid_token')
    },
    PATIENT_TEST,
  )
})

describe('two saves of one token racing (two instances loading one seed)', () => {
  test('the refused one keeps the owner listing entry that the stored record needs', async () => {
    const store = await open()
    const first = createApiToken({ userId: 'racer', name: 'seed', scopes: 'data.data', now: NOW })
    await store.save(first.record)
    const indexes: string[] = []
    for (const key of await admin.keys('*racer*')) if ((await admin.type(key)) === 'zset') indexes.push(key)
    expect(indexes).toHaveLength(1)
    // The racing save added the owner entry first; the other save's record won.
    await admin.zrem(indexes[0]!, first.record.hash)
    const racing: TokenRecord = { ...first.record, id: `${first.record.id}-other` }
    await expect(store.save(racing)).rejects.toThrow(TokenStoreError)
    expect((await store.listByOwner('racer')).map((record) => record.id)).toEqual([first.record.id])
  })
})

describe('an owner set left by an earlier version', () => {
  test('is moved into the owner index at the first listing, and deleted', async () => {
    const store = await open()
    const { record } = createApiToken({ userId: 'upgrader', name: 'old', scopes: '', now: NOW })
    await store.save(record)
    await admin.zrem('dap:token-owner:upgrader', record.hash)
    await admin.sadd('dap:tokens-of:upgrader', record.hash, 'not a hash', '0'.repeat(64))
    expect(await store.listByOwner('upgrader')).toEqual([record])
    expect(await admin.exists('dap:tokens-of:upgrader')).toBe(0)
    expect(await admin.zscore('dap:token-owner:upgrader', record.hash)).toBe('inf')
  })

  test('an index that an ending token created keeps no expiry once a token without end is moved in', async () => {
    const store = await open()
    const { record: legacy } = createApiToken({ userId: 'migrant', name: 'old', scopes: '', now: NOW })
    await store.save(legacy)
    await admin.zrem('dap:token-owner:migrant', legacy.hash)
    await admin.sadd('dap:tokens-of:migrant', legacy.hash)
    // A token with an end, saved after the upgrade, creates the index with an expiry.
    const { record: ending } = createApiToken({
      userId: 'migrant',
      name: 'new',
      scopes: '',
      now: NOW,
      expiresAt: NOW + 86_400_000,
    })
    await store.save(ending)
    expect(await admin.pttl('dap:token-owner:migrant')).toBeGreaterThan(0)
    expect((await store.listByOwner('migrant')).map((record) => record.id).sort()).toEqual(
      [legacy.id, ending.id].sort(),
    )
    expect(await admin.pttl('dap:token-owner:migrant')).toBe(-1)
  })
})
