import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisDpopReplayCache } from '../../../adapters/redis/index.js'
import {
  DPOP_REPLAY_SKEW_SECONDS,
  MAX_DPOP_PROOF_LEEWAY_SECONDS,
  MAX_DPOP_PROOF_MAX_AGE_SECONDS,
  MAX_DPOP_REPLAY_SECONDS,
} from '../../../src/dpop/proof-window.js'
import { ConfigError, TokenStoreError } from '../../../src/errors.js'
import { createAccessPolicy } from '../../../src/index.js'
import { MemoryTokenStore } from '../../../src/tokens/memory-token-store.js'
import { createOAuthToken } from '../../../src/tokens/token-record.js'
import { dpopKey, dpopProof } from '../../dpop/proofs.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

// The DPoP replay cache on a real Redis: one use per proof across instances, keys that expire with
// the window, and a Redis that fails or is away is a failure (the policy's 503), never a yes.

let server: RedisServer
let admin: Redis
const closing: RedisDpopReplayCache[] = []

async function opened(options: Partial<ConstructorParameters<typeof RedisDpopReplayCache>[0]> = {}) {
  const cache = new RedisDpopReplayCache({ redis: server.url, ...options })
  closing.push(cache)
  await cache.ready()
  return cache
}

beforeAll(async () => {
  server = await startRedisServer()
  admin = new Redis(server.url)
})

afterAll(async () => {
  await Promise.all(closing.map((cache) => cache.close()))
  admin?.disconnect()
  await server?.stop()
})

describe('RedisDpopReplayCache', () => {
  test('a key is claimed once, by whichever instance comes first', async () => {
    const [one, two] = [await opened(), await opened()]
    const key = `jkt.${crypto.randomUUID()}`
    const expiresAt = Date.now() + 60_000
    const answers = await Promise.all([one.claim(key, expiresAt), two.claim(key, expiresAt)])
    expect(answers.sort()).toEqual([false, true])
    expect(await one.claim(key, expiresAt)).toBe(false)
    expect(await one.claim(`${key}-other`, expiresAt)).toBe(true)
  })

  test('keys live until the expiry, hashed under the prefix, and are bounded by the longest window', async () => {
    const cache = await opened({ keyPrefix: 'dpop-test:', now: () => 1_000_000 })
    await cache.claim('jkt.{a hash tag} and a long jti', 1_000_000 + 30_000)
    await cache.claim('jkt.far', 1_000_000 + 86_400_000)
    const keys = await admin.keys('dpop-test:dpop:*')
    expect(keys).toHaveLength(2)
    for (const key of keys) expect(key).toMatch(/^dpop-test:dpop:[A-Za-z0-9_-]{43}$/)
    const ttls = (await Promise.all(keys.map((key) => admin.pttl(key)))).sort((a, b) => a - b)
    expect(ttls[0]).toBeGreaterThan(0)
    expect(ttls[0]).toBeLessThanOrEqual(30_000)
    expect(ttls[1]).toBeLessThanOrEqual(MAX_DPOP_REPLAY_SECONDS * 1000)
    // The cap covers the longest window a host may set, with its leeway and the skew allowance.
    const longest = MAX_DPOP_PROOF_MAX_AGE_SECONDS + MAX_DPOP_PROOF_LEEWAY_SECONDS + DPOP_REPLAY_SKEW_SECONDS
    expect(ttls[1]).toBeGreaterThan(longest * 1000)
    expect(ttls[1]).toBeGreaterThan(30_000)
  })

  test('an expiry already past still records the key for a moment', async () => {
    const cache = await opened()
    const key = `jkt.${crypto.randomUUID()}`
    expect(await cache.claim(key, 0)).toBe(true)
  })

  test('a Redis that is away is a TokenStoreError, never a yes', async () => {
    const cache = new RedisDpopReplayCache({ redis: 'redis://127.0.0.1:1', commandTimeoutMs: 200 })
    closing.push(cache)
    await expect(cache.claim('jkt.jti', Date.now() + 60_000)).rejects.toBeInstanceOf(TokenStoreError)
  })

  test('bad options are ConfigErrors naming the option', () => {
    expect(() => new RedisDpopReplayCache({ redis: server.url, keyPrefix: '{x}' })).toThrow(ConfigError)
    expect(() => new RedisDpopReplayCache({ redis: server.url, keyPrefix: '{x}' })).toThrow(
      /options\.keyPrefix/,
    )
  })

  test('a proof accepted by one instance is refused by a second instance sharing the Redis', async () => {
    const key = await dpopKey()
    const tokens = new MemoryTokenStore()
    const resource = 'https://data.example.org/api/v1'
    const { record, value } = createOAuthToken({
      userId: 'alice',
      scopes: 'data.data',
      dpopJkt: key.jkt,
      now: Date.now(),
    })
    await tokens.save(record)
    const instances = [await opened(), await opened()].map((replayCache) =>
      createAccessPolicy({ tokens, resource, dpop: { replayCache } }),
    )
    const path = '/api/v1/datasets/acme/open'
    const proof = await dpopProof(key, {
      method: 'GET',
      url: `https://data.example.org${path}`,
      token: value,
    })
    const request = {
      authorization: [`DPoP ${value}`],
      dpop: [proof],
      method: 'GET',
      target: path,
      protocol: 'https',
      clientAddress: '203.0.113.7',
    }
    const first = await instances[0]!.authenticate(request)
    const second = await instances[1]!.authenticate(request)
    expect(first.ok).toBe(true)
    expect(second).toMatchObject({
      ok: false,
      decision: { code: 'invalid_dpop_proof', description: 'the proof was used before' },
    })
  })
})
