/** The options of the Redis token store, and how they are checked. */
import { z } from 'zod'
import type { TokenStoreError } from '../../src/errors.js'
import { connectionOptionsShape, type RedisTarget } from './connection.js'

/** Options of {@link RedisTokenStore}. */
export interface RedisTokenStoreOptions {
  /**
   * Where Redis is: `redis://HOST:PORT` or ioredis options (TLS, Sentinel, password) for one
   * server; `redis-cluster://HOST:PORT,HOST:PORT` or `{ cluster: [...seeds], options }` for a
   * Redis Cluster.
   */
  readonly redis: RedisTarget
  /** Prefix of every key and channel; default `dap:`. Instances that share tokens use the same one. */
  readonly keyPrefix?: string
  /** Records cached per instance, least recently used evicted first; default 10,000; 0 turns the cache off. */
  readonly cacheSize?: number
  /**
   * The longest a cached record may be out of date, in ms; default 1000. It bounds both how late a
   * change made on another instance takes effect here and how long the cache serves after Redis
   * stops answering.
   */
  readonly maxStalenessMs?: number
  /** How often this instance checks its invalidation feed end to end, in ms; default 200. */
  readonly heartbeatMs?: number
  /** How long one Redis command may take before it fails (and the request gets 503), in ms; default 500. */
  readonly commandTimeoutMs?: number
  /**
   * How many replicas must confirm a saved or changed record (Redis `WAIT`, for up to
   * `commandTimeoutMs`) before the write counts as replicated. Default 1 on a cluster, so that no
   * failover brings back a revoked token; 0 on one server. A write that took effect with fewer is
   * still done (every lookup sees it), and the call says so rather than failing: `save` and
   * `update` resolve with `{ replicated: false }`, a new token's shortfall goes to `onError`, and a
   * change (a revocation) is confirmed again in the background — written again if a failover lost
   * it — and reported to `onError` if it never is.
   */
  readonly minReplicas?: number
  /**
   * Told of what went wrong without failing a call: a write that too few replicas confirmed, a
   * change never confirmed in the background. Wire it to the policy's `onError`; a hook that throws
   * or rejects changes nothing.
   */
  readonly onError?: (error: TokenStoreError) => void
  /**
   * The clock that decides when a record's end has come (`tokenRetainUntil`), epoch ms; `Date.now`
   * by default. Keys get their Redis expiry relative to it, and lookups stop answering a record at
   * its end by it. Give the policy's clock.
   */
  readonly now?: () => number
}

/** Checks {@link RedisTokenStoreOptions} and fills in the defaults. */
export const tokenStoreOptionsSchema = z
  .strictObject({
    ...connectionOptionsShape,
    cacheSize: z.int().min(0).max(10_000_000).default(10_000),
    maxStalenessMs: z.int().min(10).max(60_000).default(1000),
    heartbeatMs: z.int().min(5).max(30_000).default(200),
    minReplicas: z.int().min(0).max(16).optional(),
    onError: z
      .custom<(error: TokenStoreError) => void>((value) => typeof value === 'function', {
        message: 'must be a function',
      })
      .optional(),
    now: z
      .custom<() => number>((value) => typeof value === 'function', { message: 'must be a function' })
      .optional(),
  })
  .refine((options) => options.heartbeatMs * 2 <= options.maxStalenessMs, {
    path: ['heartbeatMs'],
    message: 'must be at most half of maxStalenessMs, or the cache would rarely be fresh',
  })
