import { sha256 } from '@noble/hashes/sha2.js'
import { z } from 'zod'
import { configErrorFromZod } from '../../src/config-error.js'
import { functionShape } from '../../src/config-shapes.js'
import { MAX_DPOP_REPLAY_SECONDS } from '../../src/dpop/proof-window.js'
import type { DpopReplayCache } from '../../src/dpop/replay-cache.js'
import { encodeBase64Url } from '../../src/tokens/base64url.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import {
  closeConnection,
  connectionOptionsShape,
  openConnection,
  type RedisConnection,
  type RedisTarget,
  whenReady,
} from './connection.js'
import { storeFailure } from './record-codec.js'

/** Options of {@link RedisDpopReplayCache}. */
export interface RedisDpopReplayCacheOptions {
  /**
   * Where Redis is: `redis://HOST:PORT` or ioredis options for one server;
   * `redis-cluster://HOST:PORT,HOST:PORT` or `{ cluster: [...seeds], options }` for a Redis Cluster.
   */
  readonly redis: RedisTarget
  /** Prefix of every key; default `dap:`. Keys are `PREFIXdpop:<SHA-256 of the proof's key and jti>`. */
  readonly keyPrefix?: string
  /** How long one Redis command may take before it fails, in ms; default 500. */
  readonly commandTimeoutMs?: number
  /** The clock, epoch ms, that turns an expiry into a TTL; `Date.now` by default. */
  readonly now?: () => number
}

const optionsSchema = z.strictObject({
  ...connectionOptionsShape,
  now: functionShape<() => number>().default(() => Date.now),
})

// No proof is remembered longer than the longest window allows (an hour, with the leeway and the
// skew allowance between instances): a key whose TTL would be longer is an expiry from a broken
// clock, and is kept no longer than that.
const MAX_TTL_MS = MAX_DPOP_REPLAY_SECONDS * 1000

const encoder = new TextEncoder()

/**
 * A {@link DpopReplayCache} on Redis shared by every instance of a service, so that a DPoP proof
 * used on one instance is refused on all the others (RFC 9449 §11.1). One `SET key 1 NX PX ttl` per
 * proof: atomic, one key per command (Redis Cluster routes it to its slot's master), and gone when
 * the proof could no longer be accepted anyway, so Redis holds at most one key per proof of the
 * window. A timeout or a lost connection is a `TokenStoreError`: the request is a 503, never an
 * allow.
 *
 * @example
 * const replayCache = new RedisDpopReplayCache({ redis: 'redis://127.0.0.1:6379' })
 * await replayCache.ready()
 * const policy = createAccessPolicy({ tokens, resource, dpop: { replayCache } })
 */
export class RedisDpopReplayCache implements DpopReplayCache {
  readonly #client: RedisConnection
  readonly #prefix: string
  readonly #now: () => number

  /** Opens the connection. @throws {ConfigError} naming the offending option. */
  constructor(options: RedisDpopReplayCacheOptions) {
    const parsed = optionsSchema.safeParse(options)
    if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
    const { redis, keyPrefix, commandTimeoutMs, now } = parsed.data
    this.#prefix = `${keyPrefix}dpop:`
    this.#now = now
    this.#client = openConnection(redis, commandTimeoutMs, `dap-dpop-${generateRandomBase62(16)}`)
    this.#client.on('error', () => {})
  }

  /** Resolves once the connection is up; rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return whenReady(this.#client, timeoutMs)
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeConnection(this.#client)
  }

  /**
   * Records `key` until `expiresAt` and answers true, or answers false when it is recorded already.
   *
   * @throws {TokenStoreError} when Redis fails or does not answer in time.
   */
  async claim(key: string, expiresAt: number): Promise<boolean> {
    // Hashed: a jti is the client's text, of any length and any characters (a `{…}` would be a hash tag).
    const name = `${this.#prefix}${encodeBase64Url(sha256(encoder.encode(key)))}`
    const ttl = Math.min(Math.max(Math.ceil(expiresAt - this.#now()), 1), MAX_TTL_MS)
    let answer: string | null
    try {
      answer = await this.#client.set(name, '1', 'PX', ttl, 'NX')
    } catch (error) {
      throw storeFailure('record a DPoP proof', error)
    }
    return answer === 'OK'
  }
}
