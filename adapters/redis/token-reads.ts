/**
 * The token store's lookups by hash: each instance's bounded cache of records, kept fresh by the
 * invalidation feed, and Redis reads that concurrent misses share.
 */
import { Cluster, type Redis } from 'ioredis'
import { TokenStoreError } from '../../src/errors.js'
import { type TokenRecord, tokenRecordSchema } from '../../src/tokens/token-record.js'
import { isTokenRetained } from '../../src/tokens/token-retention.js'
import { ClusterInvalidationFeed } from './cluster-feed.js'
import { closeConnection, duplicateConnection, type RedisConnection } from './connection.js'
import { type Freshness, InvalidationFeed } from './invalidation-feed.js'
import { RecordCache } from './record-cache.js'
import { decodeRecord, storeFailure } from './record-codec.js'
import { ALIAS_PREFIX, HASH, type TokenKeys } from './token-keys.js'

/** A read from Redis in flight; an invalidation that arrives meanwhile makes its answer uncacheable. */
interface PendingRead {
  cacheable: boolean
  promise: Promise<TokenRecord | undefined>
}

/** Where the invalidation feed listens, and how often it proves itself. */
export interface FeedOptions {
  readonly channel: string
  readonly keyPrefix: string
  /** This instance's random name: it skips its own messages. */
  readonly instance: string
  readonly heartbeatMs: number
  readonly commandTimeoutMs: number
}

/**
 * Lookups by hash, cached per instance.
 *
 * @example
 * const reads = new TokenReads(client, keys, { cacheSize: 10_000, maxStalenessMs: 1000, now: Date.now })
 * reads.subscribe({ channel, keyPrefix, instance, heartbeatMs: 200, commandTimeoutMs: 500 })
 * const record = await reads.find(hash)
 */
export class TokenReads {
  readonly #client: RedisConnection
  readonly #keys: TokenKeys
  readonly #cache: RecordCache<TokenRecord>
  readonly #pending = new Map<string, PendingRead>()
  readonly #maxStalenessMs: number
  readonly #now: () => number
  #feed: Freshness | undefined
  #subscriber: Redis | undefined

  /** `now` is the store's clock: a record is answered until its end by it (`tokenRetainUntil`). */
  constructor(
    client: RedisConnection,
    keys: TokenKeys,
    options: { readonly cacheSize: number; readonly maxStalenessMs: number; readonly now: () => number },
  ) {
    const { cacheSize, maxStalenessMs, now } = options
    this.#now = now
    this.#client = client
    this.#keys = keys
    this.#cache = new RecordCache(cacheSize)
    this.#maxStalenessMs = maxStalenessMs
  }

  /**
   * Turns the cache on: it serves only while the invalidation feed is subscribed, on its own
   * connection (one per master on a cluster).
   */
  subscribe(options: FeedOptions): void {
    const { channel, keyPrefix, instance, heartbeatMs, commandTimeoutMs } = options
    const client = this.#client
    const feed = {
      channel,
      heartbeatChannel: `${keyPrefix}heartbeat:${instance}`,
      heartbeatMs,
      onChange: (message: string) => this.receive(message, instance),
      onLost: () => this.dropAll(),
    }
    if (client instanceof Cluster) {
      const connectionName = `dap-tokens-sub-${instance}`
      this.#feed = new ClusterInvalidationFeed({
        ...feed,
        cluster: client,
        keyPrefix,
        commandTimeoutMs,
        connectionName,
      })
    } else {
      const subscriber = duplicateConnection(client, commandTimeoutMs, `dap-tokens-sub-${instance}`)
      this.#subscriber = subscriber
      this.#feed = new InvalidationFeed({
        ...feed,
        publish: (to, message) => client.publish(to, message),
        subscriber,
      })
    }
  }

  /** Resolves once the feed (if any) is subscribed; rejects at `deadline` (a `Date.now()` reading). */
  async whenSubscribed(deadline: number, timeoutMs: number): Promise<void> {
    if (this.#feed === undefined) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TokenStoreError(`Redis subscription not ready within ${timeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      )
    })
    try {
      await Promise.race([this.#feed.whenSubscribed(), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Stops the feed, forgets every record and closes the subscriber connection. */
  async stop(): Promise<void> {
    this.#feed?.stop()
    this.dropAll()
    if (this.#subscriber !== undefined) await closeConnection(this.#subscriber)
  }

  /**
   * The record whose value hashes to `hash`, until its end: synchronously from the cache when the
   * entry is fresh, else a promise of Redis's answer.
   */
  find(hash: string): TokenRecord | undefined | Promise<TokenRecord | undefined> {
    const now = this.#now()
    const entry = this.#cache.get(hash)
    const feed = this.#feed
    // Fresh: read less than maxStalenessMs ago, or confirmed by a heartbeat since (invalidation-feed.ts).
    if (entry !== undefined && feed?.subscribed === true) {
      const confirmed = Math.max(entry.fetchedAt, feed.confirmedAt)
      if (performance.now() - confirmed < this.#maxStalenessMs) {
        return isTokenRetained(entry.value, now) ? entry.value : undefined
      }
    }
    return this.#read(hash, now)
  }

  /** Another instance changed a record: drop it here. Anything unexpected on the channel drops all. */
  receive(message: string, instance: string): void {
    const [hash, writer] = message.split(' ')
    if (writer === instance) return
    if (hash !== undefined && HASH.test(hash)) this.invalidate(hash)
    else this.dropAll()
  }

  /** Forgets the record under `hash`, and lets no read in flight cache it. */
  invalidate(hash: string): void {
    this.#cache.delete(hash)
    const read = this.#pending.get(hash)
    if (read !== undefined) {
      // Later lookups must not join a read that may predate the change.
      read.cacheable = false
      this.#pending.delete(hash)
    }
  }

  /** Forgets every record. */
  dropAll(): void {
    this.#cache.clear()
    for (const read of this.#pending.values()) read.cacheable = false
    this.#pending.clear()
  }

  // One read per hash at a time: concurrent misses on the same token share it.
  #read(hash: string, now: number): Promise<TokenRecord | undefined> {
    const running = this.#pending.get(hash)
    if (running !== undefined) return running.promise
    if (!HASH.test(hash)) return Promise.resolve(undefined)
    const sentAt = performance.now()
    const read: PendingRead = { cacheable: this.#feed?.subscribed === true, promise: undefined as never }
    const settle = () => {
      if (this.#pending.get(hash) === read) this.#pending.delete(hash)
    }
    read.promise = this.#client.get(this.#keys.record(hash)).then(
      (text) => {
        settle()
        if (text === null) return undefined
        if (text.startsWith(ALIAS_PREFIX)) return this.#readAlias(hash, text.slice(ALIAS_PREFIX.length), now)
        const record = decodeRecord(tokenRecordSchema, text, 'token record')
        if (record.hash !== hash)
          throw new TokenStoreError('Redis answered a record stored under another hash')
        // The answer reflects every change made before `sentAt`; a later one has invalidated the read.
        if (read.cacheable && this.#feed?.subscribed === true) this.#cache.set(hash, record, sentAt)
        return isTokenRetained(record, now) ? record : undefined
      },
      (error: unknown) => {
        settle()
        throw storeFailure('look up a token', error)
      },
    )
    this.#pending.set(hash, read)
    return read.promise
  }

  // The value a rotation replaced: the current record, read from Redis every time (never cached:
  // a change to it publishes only its own hash), if it still names `hash` as its previous one.
  async #readAlias(hash: string, target: string, now: number): Promise<TokenRecord | undefined> {
    if (!HASH.test(target)) throw new TokenStoreError('Redis answered a malformed alias')
    let text: string | null
    try {
      text = await this.#client.get(this.#keys.record(target))
    } catch (error) {
      throw storeFailure('look up a token', error)
    }
    if (text === null || text.startsWith(ALIAS_PREFIX)) return undefined
    const record = decodeRecord(tokenRecordSchema, text, 'token record')
    return record.previousHash === hash && isTokenRetained(record, now) ? record : undefined
  }
}
