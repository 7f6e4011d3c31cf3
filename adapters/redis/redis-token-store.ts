import { Cluster, type Redis } from 'ioredis'
import { z } from 'zod'
import { configErrorFromZod } from '../../src/config-error.js'
import { parseScopes } from '../../src/decisions/scopes.js'
import { TokenStoreError } from '../../src/errors.js'
import { validateRecord } from '../../src/tokens/store-records.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import { type TokenRecord, tokenRecordSchema, touchToken } from '../../src/tokens/token-record.js'
import type { TokenStore, TokenWriteReceipt } from '../../src/tokens/token-store.js'
import { checkRotation, checkUpdate } from '../../src/tokens/token-store-rules.js'
import { ClusterInvalidationFeed } from './cluster-feed.js'
import {
  closeConnection,
  connectionOptionsShape,
  defineScript,
  duplicateConnection,
  type LuaScript,
  openConnection,
  type RedisConnection,
  type RedisTarget,
  replicasHaving,
  whenReady,
} from './connection.js'
import { type Freshness, InvalidationFeed } from './invalidation-feed.js'
import { RecordCache } from './record-cache.js'
import { decodeRecord, storeFailure } from './record-codec.js'
import {
  ALIAS_TOKEN,
  CLAIM_ID,
  DELETE_IF,
  RELEASE_ID,
  REPLACE_TOKEN,
  REPOINT_ID,
  SAVE_TOKEN,
} from './token-scripts.js'

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
}

const optionsSchema = z
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
  })
  .refine((options) => options.heartbeatMs * 2 <= options.maxStalenessMs, {
    path: ['heartbeatMs'],
    message: 'must be at most half of maxStalenessMs, or the cache would rarely be fresh',
  })

const HASH = /^[0-9a-f]{64}$/
// A rotation leaves `alias:NEWHASH` under the replaced value's hash for the overlap (rotate()).
const ALIAS_PREFIX = 'alias:'
// Compare-and-set retries before an update gives up; each lost round means another write landed.
const MAX_ATTEMPTS = 16
// A change too few replicas confirmed is confirmed again this many times, after a wait that doubles
// from the first to the longest (about 24 s in all): long enough for a killed node to rejoin as a
// replica after a restart, short enough that the operator hears of it while it still matters.
const CONFIRM_ATTEMPTS = 8
const CONFIRM_FIRST_DELAY_MS = 500
const CONFIRM_LONGEST_DELAY_MS = 4000

/** A read from Redis in flight; an invalidation that arrives meanwhile makes its answer uncacheable. */
interface PendingRead {
  cacheable: boolean
  promise: Promise<TokenRecord | undefined>
}

// How long Redis keeps a rotation's alias: the overlap, and a minute for the clocks of instances
// that disagree. Relative, because the records' clock (a host's, a test's) need not be Redis's; the
// overlap itself is enforced from the record (`previousHashExpiresAt`), not by this expiry.
const ALIAS_GRACE_MS = 60_000

function aliasLifetimeMs(record: TokenRecord): number {
  return record.previousHashExpiresAt! - (record.rotatedAt ?? record.previousHashExpiresAt!) + ALIAS_GRACE_MS
}

function compareByCreation(a: TokenRecord, b: TokenRecord): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)
}

// A record without its use (`lastUsedAt`, `lastUsedFrom`): every request may write those, without
// waiting for replicas, so they tell nothing about which change a record holds.
function withoutUse(record: TokenRecord): string {
  const { lastUsedAt: _, lastUsedFrom: __, ...rest } = record
  return JSON.stringify(rest)
}

// The record as it should stand for `wanted` (an update that replaced `before`) to count as still
// written, undefined when there is nothing left to confirm, or LOST. A revocation is written again
// if a failover lost it (it is permanent, so nothing later can have undone it). Any other change is
// rewritten as it stands while it is in place, and written again, over the current use, when the
// record is back to `before` and the change took rights away (narrower scopes, an earlier expiry):
// a failover lost it, and leaving it would silently restore what the owner removed. A change that
// granted more is not written again (LOST): the record back at `before` may be another instance's
// later change, and rewriting it would give back rights someone just took away. Anything else is a
// later change, which is confirmed on its own.
function reassert(
  current: TokenRecord,
  before: TokenRecord,
  wanted: TokenRecord,
): string | undefined | typeof LOST {
  if (wanted.revokedAt !== undefined) {
    return JSON.stringify(
      current.revokedAt === undefined ? { ...current, revokedAt: wanted.revokedAt } : current,
    )
  }
  const now = withoutUse(current)
  if (now === withoutUse(wanted)) return JSON.stringify(current)
  if (now !== withoutUse(before)) return undefined
  if (grantsMore(wanted, before)) return LOST
  const { lastUsedAt: _, lastUsedFrom: __, ...changed } = wanted
  const { lastUsedAt, lastUsedFrom } = current
  return JSON.stringify({
    ...changed,
    ...(lastUsedAt !== undefined && { lastUsedAt }),
    ...(lastUsedFrom !== undefined && { lastUsedFrom }),
  })
}

// A lost change that is not written again: see reassert.
const LOST = Symbol('lost')

// Whether `wanted` lets the token do anything `before` did not: a scope `before` neither granted
// nor implied, or a later (or no) expiry.
function grantsMore(wanted: TokenRecord, before: TokenRecord): boolean {
  const had = parseScopes(before.scopes)
  return (
    wanted.scopes.some((scope) => !had.has(scope)) ||
    (wanted.expiresAt ?? Number.POSITIVE_INFINITY) > (before.expiresAt ?? Number.POSITIVE_INFINITY)
  )
}

/**
 * A {@link TokenStore} on a Redis server shared by every instance of a service (docs/deployment.md).
 *
 * Records live under the SHA-256 of their value (never the value); an id index and a per-owner set
 * serve the settings pages. Each instance keeps a bounded LRU cache of records, so most lookups
 * answer synchronously without a round trip. Every write publishes the record's hash in the same
 * atomic script, and every instance drops that entry when the message arrives:
 *
 * - a change is effective at once on the instance that made it, and within `maxStalenessMs`
 *   (1 s) on every other;
 * - a lost subscriber connection drops the whole cache, which stays bypassed until resubscribed;
 * - a cached record serves for at most `maxStalenessMs` after the last proof that Redis and the
 *   feed answer (a heartbeat round trip), so when Redis stops answering lookups fail (503) within a
 *   second; ioredis reconnects and the store recovers without a restart;
 * - a slow command fails after `commandTimeoutMs` (never while its answer waits to be read); an
 *   answer that is not a valid record fails;
 * - a write that too few replicas confirm (a cluster shard after a failover) is done and says so,
 *   `{ replicated: false }`, never a failure after it took effect (`minReplicas`, `onError`).
 *
 * The store opens its own two connections (commands, subscriber); {@link RedisTokenStore.close}
 * closes them.
 *
 * @example
 * const tokens = new RedisTokenStore({ redis: 'redis://127.0.0.1:6379' })
 * await tokens.ready()
 * const policy = createAccessPolicy({ tokens })
 * // on shutdown
 * await tokens.close()
 */
export class RedisTokenStore implements TokenStore {
  readonly #client: RedisConnection
  readonly #subscriber: Redis | undefined
  readonly #feed: Freshness | undefined
  readonly #cache: RecordCache<TokenRecord>
  readonly #pending = new Map<string, PendingRead>()
  readonly #touches = new Map<string, Promise<void>>()
  readonly #prefix: string
  readonly #channel: string
  readonly #instance: string
  readonly #maxStalenessMs: number
  readonly #commandTimeoutMs: number
  readonly #minReplicas: number
  readonly #onError: ((error: TokenStoreError) => void) | undefined
  // The waits of background confirmations, ended early by close().
  readonly #pauses = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>()
  // The latest change made here to each token whose changes are being confirmed in the background.
  readonly #latestChanges = new Map<string, { wanted: TokenRecord; confirming: number }>()
  #closed = false
  #confirming = 0
  readonly #save: LuaScript
  readonly #replace: LuaScript
  readonly #claimId: LuaScript
  readonly #releaseId: LuaScript
  readonly #alias: LuaScript
  readonly #repointId: LuaScript
  readonly #deleteIf: LuaScript

  /**
   * Opens the connections; lookups work at once (from Redis) and the cache joins in once the
   * subscription is confirmed. Await {@link RedisTokenStore.ready} before serving.
   *
   * @throws {ConfigError} naming the offending option.
   */
  constructor(options: RedisTokenStoreOptions) {
    const parsed = optionsSchema.safeParse(options)
    if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
    const {
      redis,
      keyPrefix,
      cacheSize,
      maxStalenessMs,
      heartbeatMs,
      commandTimeoutMs,
      minReplicas,
      onError,
    } = parsed.data
    this.#onError = onError
    const instance = generateRandomBase62(16)
    this.#instance = instance
    this.#prefix = keyPrefix
    this.#channel = `${keyPrefix}token-changes`
    this.#maxStalenessMs = maxStalenessMs
    this.#commandTimeoutMs = commandTimeoutMs
    this.#cache = new RecordCache(cacheSize)
    const client = openConnection(redis, commandTimeoutMs, `dap-tokens-${instance}`)
    this.#client = client
    this.#minReplicas = minReplicas ?? (client instanceof Cluster ? 1 : 0)
    client.on('error', () => {})
    this.#save = defineScript(client, 'dapSaveToken', SAVE_TOKEN)
    this.#replace = defineScript(client, 'dapReplaceToken', REPLACE_TOKEN)
    this.#claimId = defineScript(client, 'dapClaimTokenId', CLAIM_ID)
    this.#releaseId = defineScript(client, 'dapReleaseTokenId', RELEASE_ID)
    this.#alias = defineScript(client, 'dapAliasToken', ALIAS_TOKEN)
    this.#repointId = defineScript(client, 'dapRepointTokenId', REPOINT_ID)
    this.#deleteIf = defineScript(client, 'dapDeleteIf', DELETE_IF)
    if (cacheSize === 0) return
    const feed = {
      channel: this.#channel,
      heartbeatChannel: `${keyPrefix}heartbeat:${instance}`,
      heartbeatMs,
      onChange: (message: string) => this.#receive(message),
      onLost: () => this.#dropAll(),
    }
    if (client instanceof Cluster) {
      this.#feed = new ClusterInvalidationFeed({
        ...feed,
        cluster: client,
        keyPrefix,
        commandTimeoutMs,
        connectionName: `dap-tokens-sub-${instance}`,
      })
    } else {
      this.#subscriber = duplicateConnection(client, commandTimeoutMs, `dap-tokens-sub-${instance}`)
      this.#feed = new InvalidationFeed({
        ...feed,
        publish: (channel, message) => client.publish(channel, message),
        subscriber: this.#subscriber,
      })
    }
  }

  /**
   * Resolves once the command connection is up and (with the cache on) the invalidation feed is
   * subscribed; rejects after `timeoutMs`.
   */
  async ready(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    await whenReady(this.#client, timeoutMs)
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

  /**
   * How many changes took effect without enough replicas confirming them and are being confirmed in
   * the background: a health check can show it (0 on a healthy cluster).
   */
  get pendingConfirmations(): number {
    return this.#confirming
  }

  /** Stops the heartbeat and the background confirmations, and closes both connections. */
  async close(): Promise<void> {
    this.#closed = true
    for (const pause of this.#pauses) {
      clearTimeout(pause.timer)
      pause.resolve()
    }
    this.#pauses.clear()
    this.#feed?.stop()
    this.#dropAll()
    await Promise.all([
      closeConnection(this.#client),
      this.#subscriber === undefined ? undefined : closeConnection(this.#subscriber),
    ])
  }

  /**
   * The record whose value hashes to `hash`: synchronously from the cache when the entry is fresh,
   * else a promise of Redis's answer.
   */
  findByHash(hash: string): TokenRecord | undefined | Promise<TokenRecord | undefined> {
    const entry = this.#cache.get(hash)
    const feed = this.#feed
    // Fresh: read less than maxStalenessMs ago, or confirmed by a heartbeat since (invalidation-feed.ts).
    if (entry !== undefined && feed?.subscribed === true) {
      const confirmed = Math.max(entry.fetchedAt, feed.confirmedAt)
      if (performance.now() - confirmed < this.#maxStalenessMs) return entry.value
    }
    return this.#read(hash)
  }

  /** The record with this id, read from Redis. */
  async findById(id: string): Promise<TokenRecord | undefined> {
    const hash = await this.#hashOf(id)
    if (hash === undefined) return undefined
    const record = await this.#read(hash)
    // An index entry without its record is a save that has not finished (or failed half way).
    if (record === undefined) return undefined
    if (record.id !== id) {
      throw new TokenStoreError('Redis answered an id index that points to another record')
    }
    return record
  }

  /**
   * Validates and adds a new record; a duplicate id or hash is refused. The three keys may live on
   * three cluster nodes, so they are written in an order that keeps every state in between safe:
   * the id is claimed, the owner's set gains the hash, and the record — the only key a lookup by
   * value reads — comes last. A save that stops half way leaves index entries without a record,
   * which lookups and listings skip; a refused hash gives the claims back.
   *
   * Once the record is written the token exists, whatever the replicas say: too few confirmations
   * resolve `{ replicated: false }` and are reported to `onError`. A failover before they confirm
   * could only lose the new token, which then stops working; it cannot bring anything back.
   */
  async save(record: TokenRecord): Promise<TokenWriteReceipt> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'save')
    const recordKey = this.#recordKey(valid.hash)
    let answer: unknown
    try {
      const claimed = await this.#claimId([this.#idKey(valid.id)], [valid.hash])
      if (claimed === 0) throw new TokenStoreError(`cannot save: token id ${valid.id} already exists`)
      const listed = await this.#client.sadd(this.#ownerKey(valid.userId), valid.hash)
      answer = await this.#save(
        [recordKey],
        [JSON.stringify(valid), this.#channel, this.#message(valid.hash)],
      )
      // Refused: give back only what this call added (the existing record keeps its indexes). Two
      // saves of one token racing (two instances loading one seed) both add the owner entry, and
      // whichever added it first may be the one refused: the entry stays while the existing record
      // is this owner's, or the listing would lose a token that authenticates.
      if (answer === 'hash') {
        if (listed === 1 && !(await this.#recordOwnedBy(recordKey, valid.userId))) {
          await this.#client.srem(this.#ownerKey(valid.userId), valid.hash)
        }
        if (claimed === 1) await this.#releaseId([this.#idKey(valid.id)], [valid.hash])
      }
    } catch (error) {
      throw storeFailure('save a token', error)
    }
    if (answer === 'hash') throw new TokenStoreError('cannot save: a token with this hash already exists')
    if (answer !== 'ok') throw new TokenStoreError('Redis answered a save with something unexpected')
    this.#invalidate(valid.hash)
    const replicated = await this.#replicated(recordKey)
    if (!replicated) {
      this.#report(
        new TokenStoreError(
          `saved token ${valid.id}, but fewer than ${this.#minReplicas} replicas confirmed it: a failover before they do would lose it`,
        ),
      )
    }
    return { replicated }
  }

  // Whether the record stored under `recordKey` belongs to `userId`; an unreadable one does not.
  async #recordOwnedBy(recordKey: string, userId: string): Promise<boolean> {
    const text = await this.#client.get(recordKey)
    if (text === null) return false
    try {
      return decodeRecord(tokenRecordSchema, text, 'token record').userId === userId
    } catch {
      return false
    }
  }

  /**
   * Validates and replaces the record with the same id; immutable fields and a revocation stay.
   *
   * A change that took effect is never reported as a failure: with too few replicas confirming it,
   * it resolves `{ replicated: false }` (a revocation is done, every lookup refuses the token) and is
   * confirmed again in the background, written again if a failover lost it; `onError` hears of it
   * if it is never confirmed.
   */
  async update(record: TokenRecord): Promise<TokenWriteReceipt> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'update')
    const hash = await this.#hashOf(valid.id)
    if (hash === undefined) throw new TokenStoreError(`cannot update: no token with id ${valid.id}`)
    const next = JSON.stringify(valid)
    // What this change replaced: a background confirmation that finds it again knows the change was lost.
    let before: TokenRecord | undefined
    await this.#compareAndSet(hash, 'update a token', (current) => {
      checkUpdate(current, valid)
      before = current
      return next
    })
    const latest = this.#latestChanges.get(valid.id)
    if (latest !== undefined) latest.wanted = valid
    const replicated = await this.#replicated(this.#recordKey(hash))
    if (!replicated) this.#confirmLater(hash, before!, valid)
    return { replicated }
  }

  /**
   * Validates and stores a rotated record (`rotateToken`). The keys may live on several cluster
   * nodes, so the steps go in an order that keeps every state in between safe: the new record is
   * added under its hash (the new value works from here on) and to the owner's set; the replaced
   * record becomes `alias:NEWHASH` only if it is still exactly what was read (a revocation that
   * came first wins, and the new record is taken back), expiring with the overlap; the id index
   * moves; the older alias goes. A lookup of the replaced value follows the alias to the current
   * record, so a later revocation or scope change applies to both values at once.
   */
  async rotate(record: TokenRecord): Promise<TokenWriteReceipt> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'rotate')
    const oldHash = await this.#hashOf(valid.id)
    if (oldHash === undefined) throw new TokenStoreError(`cannot rotate: no token with id ${valid.id}`)
    const oldKey = this.#recordKey(oldHash)
    const newKey = this.#recordKey(valid.hash)
    let text: string | null
    try {
      text = await this.#client.get(oldKey)
    } catch (error) {
      throw storeFailure('rotate a token', error)
    }
    if (text === null || text.startsWith(ALIAS_PREFIX)) {
      throw new TokenStoreError(`cannot rotate token ${valid.id}: it was rotated or changed meanwhile`)
    }
    const current = decodeRecord(tokenRecordSchema, text, 'token record')
    checkRotation(current, valid)
    let saved: unknown
    let aliased: unknown
    try {
      saved = await this.#save([newKey], [JSON.stringify(valid), this.#channel, this.#message(valid.hash)])
      if (saved === 'ok') {
        await this.#client.sadd(this.#ownerKey(valid.userId), valid.hash)
        aliased = await this.#alias(
          [oldKey],
          [
            text,
            `${ALIAS_PREFIX}${valid.hash}`,
            String(aliasLifetimeMs(valid)),
            this.#channel,
            this.#message(oldHash),
          ],
        )
        if (aliased !== 1) {
          // Changed meanwhile (revoked, renamed, rotated): the new record never becomes the token.
          await this.#deleteIf([newKey], [JSON.stringify(valid)])
          await this.#client.srem(this.#ownerKey(valid.userId), valid.hash)
        } else {
          await this.#repointId([this.#idKey(valid.id)], [oldHash, valid.hash])
          await this.#client.srem(this.#ownerKey(valid.userId), oldHash)
          if (current.previousHash !== undefined) {
            await this.#deleteIf([this.#recordKey(current.previousHash)], [`${ALIAS_PREFIX}${oldHash}`])
          }
        }
      }
    } catch (error) {
      throw storeFailure('rotate a token', error)
    }
    if (saved === 'hash') throw new TokenStoreError('cannot rotate: a token with this hash already exists')
    if (saved !== 'ok') throw new TokenStoreError('Redis answered a rotation with something unexpected')
    this.#invalidate(valid.hash)
    this.#invalidate(oldHash)
    if (aliased !== 1) {
      throw new TokenStoreError(`cannot rotate token ${valid.id}: it was rotated or changed meanwhile`)
    }
    // Done, and answered as done: the new value is shown once, so failing now would leave the owner
    // without it. A failover that lost the rotation would bring back the replaced value (whose
    // overlap the owner chose to end), so a shortfall is reported, as for a save.
    const replicated = await this.#replicated(newKey)
    if (!replicated) {
      this.#report(
        new TokenStoreError(
          `token ${valid.id} was rotated, but fewer than ${this.#minReplicas} replicas confirmed it: a failover could undo it`,
        ),
      )
    }
    return { replicated }
  }

  /** The user's tokens, oldest first. */
  async listByOwner(userId: string): Promise<readonly TokenRecord[]> {
    let texts: (string | null)[]
    try {
      const hashes = await this.#client.smembers(this.#ownerKey(userId))
      if (hashes.length === 0) return Object.freeze([])
      // One GET per record: on a cluster they live in different slots (ioredis pipelines them).
      texts = await Promise.all(hashes.map((hash) => this.#client.get(this.#recordKey(hash))))
    } catch (error) {
      throw storeFailure('list tokens', error)
    }
    // A hash without its record is a save that has not finished: not a token yet. An alias is a
    // rotation half way: its token is listed under its new hash.
    const present = texts.filter((text): text is string => text !== null && !text.startsWith(ALIAS_PREFIX))
    const records = present.map((text) => {
      const record = decodeRecord(tokenRecordSchema, text, 'token record')
      if (record.userId !== userId) throw new TokenStoreError('Redis answered another owner’s record')
      return record
    })
    return Object.freeze(records.sort(compareByCreation))
  }

  /**
   * Sets `lastUsedAt` to `now` unless it is already later, and `lastUsedFrom` to `network` with it.
   * Only those fields are written, over the exact record read, so a late touch never undoes a
   * concurrent revocation or scope change.
   */
  async touch(id: string, now: number, network?: string): Promise<void> {
    if (!Number.isSafeInteger(now) || now < 0) {
      throw new TokenStoreError('cannot touch: now must be epoch milliseconds')
    }
    // Requests that arrive together touch once: the writes would all be (nearly) the same.
    const running = this.#touches.get(id)
    if (running !== undefined) return running
    const touching = this.#touch(id, now, network).finally(() => this.#touches.delete(id))
    this.#touches.set(id, touching)
    return touching
  }

  async #touch(id: string, now: number, network: string | undefined): Promise<void> {
    const hash = await this.#hashOf(id)
    if (hash === undefined) throw new TokenStoreError('cannot touch: no token with this id')
    // No replica confirmation: a failover that lost a lastUsedAt would cost nothing.
    await this.#compareAndSet(hash, 'touch a token', (current) =>
      current.lastUsedAt !== undefined && current.lastUsedAt >= now
        ? undefined
        : JSON.stringify(
            validateRecord(tokenRecordSchema, touchToken(current, now, network), 'token record', 'touch'),
          ),
    )
  }

  /**
   * Reads the record, lets `change` check it and produce the new JSON (`undefined`: nothing to
   * write), and writes only over the exact text read; reads again when another write came first.
   * Resolves whether it wrote.
   */
  async #compareAndSet(
    hash: string,
    action: string,
    change: (current: TokenRecord) => string | undefined,
  ): Promise<boolean> {
    const key = this.#recordKey(hash)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let text: string | null
      try {
        text = await this.#client.get(key)
      } catch (error) {
        throw storeFailure(action, error)
      }
      if (text === null) throw new TokenStoreError('Redis answered an id index with a missing record')
      // The id index still names a hash that a rotation has just made an alias: read again.
      if (text.startsWith(ALIAS_PREFIX)) {
        const target = text.slice(ALIAS_PREFIX.length)
        if (!HASH.test(target)) throw new TokenStoreError('Redis answered a malformed alias')
        return this.#compareAndSet(target, action, change)
      }
      const next = change(decodeRecord(tokenRecordSchema, text, 'token record'))
      if (next === undefined) return false
      let replaced: unknown
      try {
        replaced = await this.#replace([key], [text, next, this.#channel, this.#message(hash)])
      } catch (error) {
        throw storeFailure(action, error)
      }
      if (replaced === 1) {
        this.#invalidate(hash)
        return true
      }
    }
    throw new TokenStoreError(`cannot ${action}: it kept changing concurrently`)
  }

  // Whether `minReplicas` replicas hold every write made so far on the master of `key`. A WAIT that
  // fails (the master went away after the write) is no confirmation either.
  async #replicated(key: string): Promise<boolean> {
    if (this.#minReplicas === 0) return true
    try {
      const acknowledged = await replicasHaving(this.#client, key, this.#minReplicas, this.#commandTimeoutMs)
      return acknowledged >= this.#minReplicas
    } catch {
      return false
    }
  }

  // Confirms a change in the background until enough replicas hold it, writing it again where a
  // failover lost it; bounded, and reported to onError if it never is.
  #confirmLater(hash: string, before: TokenRecord, wanted: TokenRecord): void {
    const latest = this.#latestChanges.get(wanted.id) ?? { wanted, confirming: 0 }
    latest.wanted = wanted
    latest.confirming++
    this.#latestChanges.set(wanted.id, latest)
    // A later change made here replaced this one, even one that put `before` back (which would
    // otherwise read as this change lost): it has its own confirmation.
    const replaced = () => wanted.revokedAt === undefined && latest.wanted !== wanted
    const confirm = async (): Promise<void> => {
      for (let attempt = 0; attempt < CONFIRM_ATTEMPTS && !this.#closed; attempt++) {
        await this.#pause(Math.min(CONFIRM_FIRST_DELAY_MS * 2 ** attempt, CONFIRM_LONGEST_DELAY_MS))
        if (this.#closed) break
        try {
          let lost = false
          const written = await this.#compareAndSet(hash, 'confirm a token change', (current) => {
            if (replaced()) return undefined
            const next = reassert(current, before, wanted)
            lost = next === LOST
            return next === LOST ? undefined : next
          })
          if (lost) {
            this.#report(
              new TokenStoreError(
                `a change of token ${wanted.id} that granted more was undone by a failover and is not written again (it may have been changed back since): make it again if it is still wanted`,
              ),
            )
            return
          }
          // A later change replaced this one: its own write asked the replicas, and a shortfall
          // there is confirmed on its own.
          if (!written) return
          if (await this.#replicated(this.#recordKey(hash))) return
        } catch {
          // Redis is away or failing over: the next attempt asks again.
        }
      }
      const change = `a change of token ${wanted.id}${wanted.revokedAt === undefined ? '' : ' (its revocation)'}`
      const when = this.#closed ? 'before the store closed' : `after ${CONFIRM_ATTEMPTS} attempts`
      this.#report(
        new TokenStoreError(
          `${change} took effect, but fewer than ${this.#minReplicas} replicas confirmed it ${when}: a failover could undo it`,
        ),
      )
    }
    this.#confirming++
    void confirm().finally(() => {
      this.#confirming--
      if (--latest.confirming === 0) this.#latestChanges.delete(wanted.id)
    })
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const pause = {
        timer: setTimeout(() => {
          this.#pauses.delete(pause)
          resolve()
        }, ms),
        resolve,
      }
      pause.timer.unref?.()
      this.#pauses.add(pause)
    })
  }

  // The host's hook: whatever it throws or rejects stays here.
  #report(error: TokenStoreError): void {
    if (this.#onError === undefined) return
    try {
      const result: unknown = this.#onError(error)
      if (result instanceof Promise) result.catch(() => {})
    } catch {
      // Nowhere left to report it.
    }
  }

  async #hashOf(id: string): Promise<string | undefined> {
    let hash: string | null
    try {
      hash = await this.#client.get(this.#idKey(id))
    } catch (error) {
      throw storeFailure('look up a token id', error)
    }
    if (hash === null) return undefined
    if (!HASH.test(hash)) throw new TokenStoreError('Redis answered a malformed id index entry')
    return hash
  }

  // One read per hash at a time: concurrent misses on the same token share it.
  #read(hash: string): Promise<TokenRecord | undefined> {
    const running = this.#pending.get(hash)
    if (running !== undefined) return running.promise
    if (!HASH.test(hash)) return Promise.resolve(undefined)
    const sentAt = performance.now()
    const read: PendingRead = { cacheable: this.#feed?.subscribed === true, promise: undefined as never }
    const settle = () => {
      if (this.#pending.get(hash) === read) this.#pending.delete(hash)
    }
    read.promise = this.#client.get(this.#recordKey(hash)).then(
      (text) => {
        settle()
        if (text === null) return undefined
        if (text.startsWith(ALIAS_PREFIX)) return this.#readAlias(hash, text.slice(ALIAS_PREFIX.length))
        const record = decodeRecord(tokenRecordSchema, text, 'token record')
        if (record.hash !== hash)
          throw new TokenStoreError('Redis answered a record stored under another hash')
        // The answer reflects every change made before `sentAt`; a later one has invalidated the read.
        if (read.cacheable && this.#feed?.subscribed === true) this.#cache.set(hash, record, sentAt)
        return record
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
  async #readAlias(hash: string, target: string): Promise<TokenRecord | undefined> {
    if (!HASH.test(target)) throw new TokenStoreError('Redis answered a malformed alias')
    let text: string | null
    try {
      text = await this.#client.get(this.#recordKey(target))
    } catch (error) {
      throw storeFailure('look up a token', error)
    }
    if (text === null || text.startsWith(ALIAS_PREFIX)) return undefined
    const record = decodeRecord(tokenRecordSchema, text, 'token record')
    return record.previousHash === hash ? record : undefined
  }

  #message(hash: string): string {
    return `${hash} ${this.#instance}`
  }

  // Another instance changed a record: drop it here. Anything unexpected on the channel drops all.
  #receive(message: string): void {
    const [hash, writer] = message.split(' ')
    if (writer === this.#instance) return
    if (hash !== undefined && HASH.test(hash)) this.#invalidate(hash)
    else this.#dropAll()
  }

  #invalidate(hash: string): void {
    this.#cache.delete(hash)
    const read = this.#pending.get(hash)
    if (read !== undefined) {
      // Later lookups must not join a read that may predate the change.
      read.cacheable = false
      this.#pending.delete(hash)
    }
  }

  #dropAll(): void {
    this.#cache.clear()
    for (const read of this.#pending.values()) read.cacheable = false
    this.#pending.clear()
  }

  #recordKey(hash: string): string {
    return `${this.#prefix}token:${hash}`
  }

  #idKey(id: string): string {
    return `${this.#prefix}token-id:${id}`
  }

  #ownerKey(userId: string): string {
    return `${this.#prefix}tokens-of:${userId}`
  }
}
