/**
 * The abuse limits' counts on Redis (`--store redis://…`): every instance sharing the store shares
 * them, so a client cannot multiply its allowance by spreading requests over instances. One Lua
 * script per hit (HINCRBY, then the window's id and expiry on the first hit): atomic, one round
 * trip, and answered before the guarded work begins. Every key expires with its window, and no key
 * is created for a network already refused (limits/abuse-limits.ts checks the network's own count
 * first), so one network holds at most a bounded number of keys. A Redis failure rejects, and the server answers 503
 * rather than let the request through unlimited.
 */
import { randomBytes } from 'node:crypto'
import { TokenStoreError } from 'data-access-policy'
import {
  closeRedisConnection,
  openRedisConnection,
  type RedisConnection,
  redisReady,
} from 'data-access-policy/redis'
import type { Hit, RateLimitStore } from './rate-limits.js'

// KEYS: the window, a hash { n: count, w: the window's id }. ARGV: the window in ms, an id for a
// new window. Counts one hit; the first hit of a window names it and sets its expiry, so the key
// disappears when the window ends. Answers { count, ms left in the window, the window's id }.
const HIT = `
local count = redis.call('HINCRBY', KEYS[1], 'n', 1)
if count == 1 then
  redis.call('HSET', KEYS[1], 'w', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl, redis.call('HGET', KEYS[1], 'w') }
`

// KEYS: the window. ARGV: the window's id. Takes one hit back, only from that same window.
const GIVE_BACK = `
if redis.call('HGET', KEYS[1], 'w') == ARGV[1] and tonumber(redis.call('HGET', KEYS[1], 'n')) > 0 then
  redis.call('HINCRBY', KEYS[1], 'n', -1)
end
return 0
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
  // The prefix changed with the key's type (a hash since the window has an id): a counter of the
  // earlier scheme is never read as one of this one.
  constructor(url: string, keyPrefix = 'dap:limit:') {
    this.#prefix = keyPrefix
    // The library's fail-fast connection (no offline queue, no retry while Redis is away).
    this.#client = openRedisConnection(url, COMMAND_TIMEOUT_MS, 'dap-rate-limits')
    // Failures surface as rejected commands; the connection's own errors need no listener's noise.
    this.#client.on('error', () => {})
    this.#client.defineCommand('dapRateLimitHit', { numberOfKeys: 1, lua: HIT })
    this.#client.defineCommand('dapRateLimitGiveBack', { numberOfKeys: 1, lua: GIVE_BACK })
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
      answer = await command.call(
        this.#client,
        this.#prefix + key,
        Math.max(1, Math.ceil(windowMs)),
        randomBytes(9).toString('base64url'),
      )
    } catch (error) {
      throw new TokenStoreError('cannot count a rate-limited request on Redis', { cause: error })
    }
    const [count, ttl, window] = Array.isArray(answer) ? answer : []
    if (typeof count !== 'number' || typeof ttl !== 'number' || typeof window !== 'string' || count < 1) {
      throw new TokenStoreError('Redis answered a malformed rate-limit count')
    }
    return { count, resetInMs: Math.max(1, ttl), window }
  }

  async giveBack(key: string, window: string): Promise<void> {
    try {
      const command = (this.#client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)
        .dapRateLimitGiveBack!
      await command.call(this.#client, this.#prefix + key, window)
    } catch (error) {
      throw new TokenStoreError('cannot give back a rate-limited request on Redis', { cause: error })
    }
  }

  async peek(key: string, _now: number): Promise<number> {
    let answer: unknown
    try {
      answer = await this.#client.hget(this.#prefix + key, 'n')
    } catch (error) {
      throw new TokenStoreError('cannot read a rate-limit count on Redis', { cause: error })
    }
    if (answer === null) return 0
    const count = typeof answer === 'string' && /^\d{1,15}$/.test(answer) ? Number(answer) : undefined
    if (count === undefined) throw new TokenStoreError('Redis answered a malformed rate-limit count')
    return count
  }

  async reset(key: string): Promise<void> {
    try {
      await this.#client.del(this.#prefix + key)
    } catch (error) {
      throw new TokenStoreError('cannot reset a rate-limit count on Redis', { cause: error })
    }
  }
}
