import { Cluster } from 'ioredis'
import { configErrorFromZod } from '../../src/config-error.js'
import { TokenStoreError } from '../../src/errors.js'
import { isEpochMilliseconds } from '../../src/tokens/clock.js'
import { validateRecord } from '../../src/tokens/store-records.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import { type TokenRecord, tokenRecordSchema, touchToken } from '../../src/tokens/token-record.js'
import { isTokenRetained, tokenRetainUntil } from '../../src/tokens/token-retention.js'
import type { TokenStore, TokenWriteReceipt } from '../../src/tokens/token-store.js'
import { checkRotation, checkUpdate } from '../../src/tokens/token-store-rules.js'
import {
  closeConnection,
  defineScript,
  type LuaScript,
  openConnection,
  type RedisConnection,
  replicasHaving,
  whenReady,
} from './connection.js'
import { decodeRecord, storeFailure } from './record-codec.js'
import { type RedisTokenStoreOptions, tokenStoreOptionsSchema } from './redis-token-store-options.js'
import { ChangeConfirmations } from './token-confirmation.js'
import { ALIAS_PREFIX, endScore, HASH, RETENTION_GRACE_MS, TokenKeys, timeToLive } from './token-keys.js'
import { OwnerIndex } from './token-owner-index.js'
import { TokenReads } from './token-reads.js'
import { defineScripts, INDEX_SCRIPTS, REPLACE_TOKEN, SAVE_TOKEN } from './token-scripts.js'

export type { RedisTokenStoreOptions }

// Compare-and-set retries before an update gives up; each lost round means another write landed.
const MAX_ATTEMPTS = 16

function compareByCreation(a: TokenRecord, b: TokenRecord): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)
}

/**
 * A {@link TokenStore} on a Redis server shared by every instance of a service (docs/deployment.md).
 *
 * Records live under the SHA-256 of their value (never the value); an id index and a per-owner
 * index serve the settings pages. Every key ends with its record (`tokenRetainUntil`: as long as
 * the settings pages show it; a live token without expiry has no end): its Redis expiry is set in
 * the same script as each write, and a write to an owner's index removes a few of that owner's
 * records whose end has come. Each instance keeps a bounded LRU cache of records, so most lookups
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
  readonly #reads: TokenReads
  readonly #touches = new Map<string, Promise<void>>()
  readonly #keys: TokenKeys
  readonly #channel: string
  readonly #instance: string
  readonly #commandTimeoutMs: number
  readonly #minReplicas: number
  readonly #onError: ((error: TokenStoreError) => void) | undefined
  readonly #clock: () => number
  readonly #confirmations: ChangeConfirmations
  readonly #save: LuaScript
  readonly #replace: LuaScript
  readonly #scripts: Record<keyof typeof INDEX_SCRIPTS, LuaScript>
  readonly #owners: OwnerIndex

  /**
   * Opens the connections; lookups work at once (from Redis) and the cache joins in once the
   * subscription is confirmed. Await {@link RedisTokenStore.ready} before serving.
   *
   * @throws {ConfigError} naming the offending option.
   */
  constructor(options: RedisTokenStoreOptions) {
    const parsed = tokenStoreOptionsSchema.safeParse(options)
    if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
    const { redis, keyPrefix, cacheSize, maxStalenessMs, heartbeatMs, commandTimeoutMs, minReplicas } =
      parsed.data
    this.#onError = parsed.data.onError
    this.#clock = parsed.data.now ?? Date.now
    const instance = generateRandomBase62(16)
    this.#instance = instance
    this.#keys = new TokenKeys(keyPrefix)
    this.#channel = `${keyPrefix}token-changes`
    this.#commandTimeoutMs = commandTimeoutMs
    const client = openConnection(redis, commandTimeoutMs, `dap-tokens-${instance}`)
    this.#client = client
    this.#reads = new TokenReads(client, this.#keys, { cacheSize, maxStalenessMs, now: () => this.#now() })
    this.#minReplicas = minReplicas ?? (client instanceof Cluster ? 1 : 0)
    this.#confirmations = new ChangeConfirmations({
      minReplicas: this.#minReplicas,
      compareAndSet: (hash, action, change) => this.#compareAndSet(hash, action, change),
      replicated: (hash) => this.#replicated(this.#keys.record(hash)),
      report: (error) => this.#report(error),
    })
    client.on('error', () => {})
    this.#save = defineScript(client, 'dapSaveToken', SAVE_TOKEN)
    this.#replace = defineScript(client, 'dapReplaceToken', REPLACE_TOKEN)
    this.#scripts = defineScripts(client, INDEX_SCRIPTS)
    this.#owners = new OwnerIndex(client, this.#keys, (hash) => this.#reads.invalidate(hash))
    if (cacheSize > 0) {
      this.#reads.subscribe({ channel: this.#channel, keyPrefix, instance, heartbeatMs, commandTimeoutMs })
    }
  }

  /**
   * Resolves once the command connection is up and (with the cache on) the invalidation feed is
   * subscribed; rejects after `timeoutMs`.
   */
  async ready(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    await whenReady(this.#client, timeoutMs)
    await this.#reads.whenSubscribed(deadline, timeoutMs)
  }

  /**
   * How many changes took effect without enough replicas confirming them and are being confirmed in
   * the background: a health check can show it (0 on a healthy cluster).
   */
  get pendingConfirmations(): number {
    return this.#confirmations.pending
  }

  /** Stops the heartbeat and the background confirmations, and closes both connections. */
  async close(): Promise<void> {
    this.#confirmations.close()
    await Promise.all([this.#reads.stop(), closeConnection(this.#client)])
  }

  /**
   * The record whose value hashes to `hash`, until its end: synchronously from the cache when the
   * entry is fresh, else a promise of Redis's answer.
   */
  findByHash(hash: string): TokenRecord | undefined | Promise<TokenRecord | undefined> {
    return this.#reads.find(hash)
  }

  /** The record with this id, read from Redis, until its end. */
  async findById(id: string): Promise<TokenRecord | undefined> {
    const hash = await this.#hashOf(id)
    if (hash === undefined) return undefined
    const record = await this.#reads.find(hash)
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
   * the id is claimed, the owner's index gains the hash, and the record — the only key a lookup by
   * value reads — comes last, each with the record's end as its expiry. A save that stops half way
   * leaves index entries without a record, which lookups and listings skip; a refused hash gives
   * the claims back.
   *
   * Once the record is written the token exists, whatever the replicas say: too few confirmations
   * resolve `{ replicated: false }` and are reported to `onError`. A failover before they confirm
   * could only lose the new token, which then stops working; it cannot bring anything back.
   */
  async save(record: TokenRecord): Promise<TokenWriteReceipt> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'save')
    const now = this.#now()
    const ttl = timeToLive(valid, now)
    const recordKey = this.#keys.record(valid.hash)
    let answer: unknown
    try {
      const claimed = await this.#scripts.claimId([this.#keys.id(valid.id)], [valid.hash, ttl])
      if (claimed === 0) throw new TokenStoreError(`cannot save: token id ${valid.id} already exists`)
      const listed = await this.#owners.file(valid.userId, valid.hash, endScore(valid), now)
      answer = await this.#save(
        [recordKey],
        [JSON.stringify(valid), this.#channel, this.#message(valid.hash), ttl],
      )
      // Refused: give back only what this call added (the existing record keeps its indexes). Two
      // saves of one token racing (two instances loading one seed) both add the owner entry, and
      // whichever added it first may be the one refused: the entry stays while the existing record
      // is this owner's, or the listing would lose a token that authenticates.
      if (answer === 'hash') {
        if (listed && !(await this.#owners.ownsRecord(valid.hash, valid.userId))) {
          await this.#owners.drop(valid.userId, valid.hash)
        }
        if (claimed === 1) await this.#scripts.releaseId([this.#keys.id(valid.id)], [valid.hash])
      }
    } catch (error) {
      throw storeFailure('save a token', error)
    }
    if (answer === 'hash') throw new TokenStoreError('cannot save: a token with this hash already exists')
    if (answer !== 'ok') throw new TokenStoreError('Redis answered a save with something unexpected')
    this.#reads.invalidate(valid.hash)
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

  /**
   * Validates and replaces the record with the same id; immutable fields and a revocation stay.
   * A change that moves the record's end (a revocation) moves the expiry of its keys with it.
   *
   * A change that took effect is never reported as a failure: with too few replicas confirming it,
   * it resolves `{ replicated: false }` (a revocation is done, every lookup refuses the token) and is
   * confirmed again in the background, written again if a failover lost it; `onError` hears of it
   * if it is never confirmed.
   */
  async update(record: TokenRecord): Promise<TokenWriteReceipt> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'update')
    const now = this.#now()
    const hash = await this.#hashOf(valid.id)
    if (hash === undefined) throw new TokenStoreError(`cannot update: no token with id ${valid.id}`)
    const next = JSON.stringify(valid)
    // What this change replaced: a background confirmation that finds it again knows the change was lost.
    let before: TokenRecord | undefined
    await this.#compareAndSet(hash, 'update a token', (current) => {
      if (!isTokenRetained(current, now))
        throw new TokenStoreError(`cannot update: no token with id ${valid.id}`)
      checkUpdate(current, valid)
      before = current
      return next
    })
    this.#confirmations.changed(valid)
    if (tokenRetainUntil(before!) !== tokenRetainUntil(valid)) {
      // The change is done (its record key already ends with it): a failure here is reported, not
      // answered, and the index keys keep their earlier expiry until the next write.
      try {
        await this.#scripts.expireIf([this.#keys.id(valid.id)], [hash, timeToLive(valid, now)])
        await this.#owners.file(valid.userId, hash, endScore(valid), now)
      } catch (error) {
        this.#report(storeFailure('move the expiry of a changed token’s indexes', error))
      }
    }
    const replicated = await this.#replicated(this.#keys.record(hash))
    if (!replicated) this.#confirmations.confirmLater(hash, before!, valid)
    return { replicated }
  }

  /**
   * Validates and stores a rotated record (`rotateToken`). The keys may live on several cluster
   * nodes, so the steps go in an order that keeps every state in between safe: the new record is
   * added under its hash (the new value works from here on) and to the owner's index; the replaced
   * record becomes `alias:NEWHASH` only if it is still exactly what was read (a revocation that
   * came first wins, and the new record is taken back), expiring with the overlap; the id index
   * moves; the older alias goes. A lookup of the replaced value follows the alias to the current
   * record, so a later revocation or scope change applies to both values at once.
   */
  async rotate(record: TokenRecord): Promise<TokenWriteReceipt> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'rotate')
    const now = this.#now()
    const ttl = timeToLive(valid, now)
    const oldHash = await this.#hashOf(valid.id)
    if (oldHash === undefined) throw new TokenStoreError(`cannot rotate: no token with id ${valid.id}`)
    const oldKey = this.#keys.record(oldHash)
    const newKey = this.#keys.record(valid.hash)
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
    if (!isTokenRetained(current, now))
      throw new TokenStoreError(`cannot rotate: no token with id ${valid.id}`)
    checkRotation(current, valid)
    let saved: unknown
    let aliased: unknown
    try {
      saved = await this.#save(
        [newKey],
        [JSON.stringify(valid), this.#channel, this.#message(valid.hash), ttl],
      )
      if (saved === 'ok') {
        await this.#owners.file(valid.userId, valid.hash, endScore(valid), now)
        // The replaced value's alias ends with the overlap, and a grace for the clocks: the overlap
        // itself is enforced from the record (`previousHashExpiresAt`), not by this expiry.
        const aliasTtl = Math.max(1, valid.previousHashExpiresAt! - now + RETENTION_GRACE_MS)
        const message = this.#message(oldHash)
        aliased = await this.#scripts.alias(
          [oldKey],
          [text, `${ALIAS_PREFIX}${valid.hash}`, aliasTtl, this.#channel, message],
        )
        if (aliased !== 1) {
          // Changed meanwhile (revoked, renamed, rotated): the new record never becomes the token.
          await this.#scripts.deleteIf([newKey], [JSON.stringify(valid)])
          await this.#owners.drop(valid.userId, valid.hash)
        } else {
          await this.#scripts.repointId([this.#keys.id(valid.id)], [oldHash, valid.hash, ttl])
          await this.#owners.drop(valid.userId, oldHash)
          if (current.previousHash !== undefined) {
            await this.#scripts.deleteIf(
              [this.#keys.record(current.previousHash)],
              [`${ALIAS_PREFIX}${oldHash}`],
            )
          }
        }
      }
    } catch (error) {
      throw storeFailure('rotate a token', error)
    }
    if (saved === 'hash') throw new TokenStoreError('cannot rotate: a token with this hash already exists')
    if (saved !== 'ok') throw new TokenStoreError('Redis answered a rotation with something unexpected')
    this.#reads.invalidate(valid.hash)
    this.#reads.invalidate(oldHash)
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

  /** The user's tokens until their end, oldest first; a few whose end has come are removed. */
  async listByOwner(userId: string): Promise<readonly TokenRecord[]> {
    const now = this.#now()
    let texts: (string | null)[]
    try {
      await this.#owners.file(userId, '', '', now)
      const hashes = await this.#owners.hashes(userId)
      if (hashes.length === 0) return Object.freeze([])
      // One GET per record: on a cluster they live in different slots (ioredis pipelines them).
      texts = await Promise.all(hashes.map((hash) => this.#client.get(this.#keys.record(hash))))
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
    const kept = records.filter((record) => isTokenRetained(record, now))
    return Object.freeze(kept.sort(compareByCreation))
  }

  /**
   * Sets `lastUsedAt` to `now` unless it is already later, and `lastUsedFrom` to `network` with it.
   * Only those fields are written, over the exact record read, so a late touch never undoes a
   * concurrent revocation or scope change.
   */
  async touch(id: string, now: number, network?: string): Promise<void> {
    if (!isEpochMilliseconds(now)) throw new TokenStoreError('cannot touch: now must be epoch milliseconds')
    // Requests that arrive together touch once: the writes would all be (nearly) the same.
    const running = this.#touches.get(id)
    if (running !== undefined) return running
    const touching = this.#touch(id, now, network).finally(() => this.#touches.delete(id))
    this.#touches.set(id, touching)
    return touching
  }

  async #touch(id: string, now: number, network: string | undefined): Promise<void> {
    const clock = this.#now()
    const hash = await this.#hashOf(id)
    if (hash === undefined) throw new TokenStoreError('cannot touch: no token with this id')
    // No replica confirmation: a failover that lost a lastUsedAt would cost nothing.
    await this.#compareAndSet(hash, 'touch a token', (current) => {
      if (!isTokenRetained(current, clock)) throw new TokenStoreError('cannot touch: no token with this id')
      if (current.lastUsedAt !== undefined && current.lastUsedAt >= now) return undefined
      const touched = touchToken(current, now, network)
      return JSON.stringify(validateRecord(tokenRecordSchema, touched, 'token record', 'touch'))
    })
  }

  /**
   * Reads the record, lets `change` check it and produce the new JSON (`undefined`: nothing to
   * write), and writes only over the exact text read, with the expiry of the new record's end;
   * reads again when another write came first. Resolves whether it wrote.
   */
  async #compareAndSet(
    hash: string,
    action: string,
    change: (current: TokenRecord) => string | undefined,
  ): Promise<boolean> {
    const key = this.#keys.record(hash)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let text: string | null
      try {
        text = await this.#client.get(key)
      } catch (error) {
        throw storeFailure(action, error)
      }
      // Gone at its end while the id index, which expires a moment later, still named it.
      if (text === null) throw new TokenStoreError(`cannot ${action}: no token with this id`)
      // The id index still names a hash that a rotation has just made an alias: read again.
      if (text.startsWith(ALIAS_PREFIX)) {
        const target = text.slice(ALIAS_PREFIX.length)
        if (!HASH.test(target)) throw new TokenStoreError('Redis answered a malformed alias')
        return this.#compareAndSet(target, action, change)
      }
      const next = change(decodeRecord(tokenRecordSchema, text, 'token record'))
      if (next === undefined) return false
      const ttl = timeToLive(JSON.parse(next) as TokenRecord, this.#now())
      let replaced: unknown
      try {
        replaced = await this.#replace([key], [text, next, this.#channel, this.#message(hash), ttl])
      } catch (error) {
        throw storeFailure(action, error)
      }
      if (replaced === 1) {
        this.#reads.invalidate(hash)
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

  // The store's clock, checked.
  #now(): number {
    const now = this.#clock()
    if (!isEpochMilliseconds(now))
      throw new TokenStoreError('the store’s clock must answer epoch milliseconds')
    return now
  }

  async #hashOf(id: string): Promise<string | undefined> {
    let hash: string | null
    try {
      hash = await this.#client.get(this.#keys.id(id))
    } catch (error) {
      throw storeFailure('look up a token id', error)
    }
    if (hash === null) return undefined
    if (!HASH.test(hash)) throw new TokenStoreError('Redis answered a malformed id index entry')
    return hash
  }

  #message(hash: string): string {
    return `${hash} ${this.#instance}`
  }
}
