/**
 * The abuse limits' counts on Redis (`--store redis://…`): every instance sharing the store shares
 * them, so a client cannot multiply its allowance by spreading requests over instances. One Lua
 * script per hit (INCR, then the window's expiry on the first hit): atomic, one round trip, and
 * answered before the guarded work begins. A Redis failure rejects, and the server answers 503
 * rather than let the request through unlimited.
 */
import {
  closeRedisConnection,
  openRedisConnection,
  type RedisConnection,
  redisReady,
} from '../../../adapters/redis/index.js'
import { TokenStoreError } from '../../../src/index.js'
import type { Hit, RateLimitStore } from './rate-limits.js'

// KEYS: the counter. ARGV: the window in ms. Counts one hit; the first hit of a window sets its
// expiry, so the key disappears when the window ends. Answers { count, ms left in the window }.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`

const COMMAND_TIMEOUT_MS = 500

/**
 * Rate-limit counts on a Redis server.
 *
 * @example
 * const limits = new RedisRateLimitStore('redis://127.0.0.1:6379')
 * await limits.ready()
 * await limits.hit('token:192.0.2.7', 60_000, Date.now())
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #client: RedisConnection
  readonly #prefix: string

  /** `url`: `redis://…` or `redis-cluster://…` (every count is one key: any slot will do). */
  constructor(url: string, keyPrefix = 'dap:limits:') {
    this.#prefix = keyPrefix
    // The library's fail-fast connection (no offline queue, no retry while Redis is away).
    this.#client = openRedisConnection(url, COMMAND_TIMEOUT_MS, 'dap-rate-limits')
    // Failures surface as rejected commands; the connection's own errors need no listener's noise.
    this.#client.on('error', () => {})
    this.#client.defineCommand('dapRateLimitHit', { numberOfKeys: 1, lua: HIT })
  }

  /** Resolves once the connection is up; rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return redisReady(this.#client, timeoutMs)
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeRedisConnection(this.#client)
  }

  // Redis keeps its own clock for the window: `now` only matters to the memory store.
  async hit(key: string, windowMs: number, _now: number): Promise<Hit> {
    let answer: unknown
    try {
      const command = (this.#client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)
        .dapRateLimitHit!
      answer = await command.call(this.#client, this.#prefix + key, Math.max(1, Math.ceil(windowMs)))
    } catch (error) {
      throw new TokenStoreError('cannot count a rate-limited request on Redis', { cause: error })
    }
    const [count, ttl] = Array.isArray(answer) ? answer : []
    if (typeof count !== 'number' || typeof ttl !== 'number' || count < 1) {
      throw new TokenStoreError('Redis answered a malformed rate-limit count')
    }
    return { count, resetInMs: Math.max(1, ttl) }
  }

  async reset(key: string): Promise<void> {
    try {
      await this.#client.del(this.#prefix + key)
    } catch (error) {
      throw new TokenStoreError('cannot reset a rate-limit count on Redis', { cause: error })
    }
  }
}
