// The cost of a token lookup per request on the shared Redis store, with and without the
// per-instance cache, in-process against a running redis-server (start a private one on a free
// loopback port with test/adapters/redis/redis-server.ts). Bounded: ~1,000 tokens, a few thousand
// round trips in all.

import { RedisTokenStore } from '../adapters/redis/index.js'
import { MemoryTokenStore } from '../src/tokens/memory-token-store.js'
import { generateRandomBase62 } from '../src/tokens/token-format.js'
import { hashTokenValue } from '../src/tokens/token-hash.js'
import { createApiToken } from '../src/tokens/token-record.js'
import type { TokenStore } from '../src/tokens/token-store.js'
import { compareAsync, type Measurement } from './harness.js'

const TOKENS = 1000

/**
 * Measures one lookup (`findByHash`) per request on the memory store, the Redis store with its
 * cache, and the Redis store without (one GET round trip per request): what the store adds to the
 * authentication figure of the in-process benchmark, measured once, there.
 * Keys go under a fresh random prefix, so the bench may share a Redis with anything else.
 *
 * @example
 * const rows = await benchRedisLookup('redis://127.0.0.1:6379')
 */
export async function benchRedisLookup(url: string): Promise<Measurement[]> {
  const keyPrefix = `bench-${generateRandomBase62(8)}:`
  const cached = new RedisTokenStore({ redis: url, keyPrefix })
  const uncached = new RedisTokenStore({ redis: url, keyPrefix, cacheSize: 0 })
  const memory = new MemoryTokenStore()
  try {
    await Promise.all([cached.ready(), uncached.ready()])
    const values: string[] = []
    for (let i = 0; i < TOKENS; i++) {
      const { record, value } = createApiToken({
        userId: `user${i}`,
        name: 't',
        scopes: 'data.data',
        now: Date.now(),
      })
      await cached.save(record)
      await memory.save(record)
      values.push(value)
    }
    const hashes = values.map(hashTokenValue)
    // Every token is in the cache before measuring: the cached rows show the steady state.
    for (const hash of hashes) await cached.findByHash(hash)
    const lookup = (store: TokenStore) => async (i: number) => store.findByHash(hashes[i % TOKENS]!)
    const fast = await compareAsync(
      [
        { name: 'lookup: MemoryTokenStore', run: lookup(memory) },
        { name: 'lookup: RedisTokenStore, cached (per-instance LRU)', run: lookup(cached) },
      ],
      { iterations: 5_000, rounds: 9 },
    )
    const slow = await compareAsync(
      [{ name: 'lookup: RedisTokenStore, no cache (one GET round trip)', run: lookup(uncached) }],
      { iterations: 500, rounds: 5 },
    )
    return [...fast, ...slow]
  } finally {
    await Promise.all([cached.close(), uncached.close()])
  }
}

/**
 * Measures one lookup (`findByHash`) on a Redis Cluster: with the per-instance cache (kept fresh by
 * a feed on every master) and without it (one GET to the master that owns the token's slot). The
 * tokens spread over every master. Smaller than {@link benchRedisLookup}: each save waits for a
 * replica.
 *
 * @example
 * const rows = await benchRedisClusterLookup('redis-cluster://127.0.0.1:7000')
 */
export async function benchRedisClusterLookup(url: string): Promise<Measurement[]> {
  const keyPrefix = `bench-${generateRandomBase62(8)}:`
  const cached = new RedisTokenStore({ redis: url, keyPrefix })
  const uncached = new RedisTokenStore({ redis: url, keyPrefix, cacheSize: 0 })
  const count = 300
  try {
    await Promise.all([cached.ready(), uncached.ready()])
    const hashes: string[] = []
    for (let i = 0; i < count; i++) {
      const { record, value } = createApiToken({
        userId: `user${i}`,
        name: 't',
        scopes: 'data.data',
        now: Date.now(),
      })
      await cached.save(record)
      hashes.push(hashTokenValue(value))
    }
    for (const hash of hashes) await cached.findByHash(hash)
    const lookup = (store: TokenStore) => async (i: number) => store.findByHash(hashes[i % count]!)
    const fast = await compareAsync(
      [{ name: 'lookup on a cluster: cached (per-instance LRU)', run: lookup(cached) }],
      {
        iterations: 5_000,
        rounds: 9,
      },
    )
    const slow = await compareAsync(
      [{ name: 'lookup on a cluster: no cache (one GET to the owning master)', run: lookup(uncached) }],
      { iterations: 500, rounds: 5 },
    )
    return [...fast, ...slow]
  } finally {
    await Promise.all([cached.close(), uncached.close()])
  }
}
