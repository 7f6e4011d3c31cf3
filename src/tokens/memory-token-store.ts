import { ConfigError, TokenStoreError } from '../errors.js'
import { isEpochMilliseconds } from './clock.js'
import { EndQueue } from './end-queue.js'
import { validateRecord } from './store-records.js'
import { type TokenRecord, tokenRecordSchema, touchToken } from './token-record.js'
import { isTokenRetained, tokenRetainUntil } from './token-retention.js'
import type { TokenStore } from './token-store.js'
import { checkRotation, checkUpdate } from './token-store-rules.js'

// Records past their end that one operation removes at most: more than any operation adds (one),
// so the store keeps up with any churn, and few enough that no call ever pauses for a long sweep.
const SWEEP_BATCH = 8

function compareByCreation(a: TokenRecord, b: TokenRecord): number {
  // Ids are unique within a store, so two records never compare equal.
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)
}

/** Options of {@link MemoryTokenStore}. */
export interface MemoryTokenStoreOptions {
  /**
   * The clock that decides when a record's end has come (`tokenRetainUntil`), epoch ms; `Date.now`
   * by default. Give the policy's clock, so that tests which move time move both.
   */
  readonly now?: () => number
}

/**
 * The embedded token store: validated, frozen records in process memory, lost on restart and not
 * shared between instances.
 *
 * Every record has an end (`tokenRetainUntil`: as long as the settings pages show it, a live token
 * without expiry excepted): from then on no lookup or listing returns it, and each operation
 * removes a few records whose end has come, earliest first, from every index. Memory stays bounded
 * by the live tokens and those still on display, without a timer or a sweep of the whole store.
 *
 * @example
 * const tokens = new MemoryTokenStore()
 * const now = Date.now()
 * const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now })
 * await tokens.save(record)
 * const found = await tokens.findByHash(hashTokenValue(value))
 */
export class MemoryTokenStore implements TokenStore {
  readonly #byId = new Map<string, TokenRecord>()
  readonly #byHash = new Map<string, TokenRecord>()
  readonly #idsByOwner = new Map<string, Set<string>>()
  readonly #ends = new EndQueue()
  readonly #clock: () => number

  /**
   * @throws {ConfigError} naming `now` when it is not a function.
   */
  constructor(options: MemoryTokenStoreOptions = {}) {
    const clock = options.now ?? Date.now
    if (typeof clock !== 'function') throw new ConfigError(['now'], 'must be a function')
    this.#clock = clock
  }

  /** The number of records held, those past their end and not yet removed included. */
  get size(): number {
    return this.#byId.size
  }

  /** The record whose value hashes to `hash`, whatever its status; answers synchronously. */
  findByHash(hash: string): TokenRecord | undefined {
    const now = this.#now()
    return this.#retained(this.#byHash.get(hash), now)
  }

  /** The record with this id, whatever its status. */
  async findById(id: string): Promise<TokenRecord | undefined> {
    const now = this.#now()
    return this.#retained(this.#byId.get(id), now)
  }

  /** Validates and adds a new record; a duplicate id or hash is refused. */
  async save(record: TokenRecord): Promise<void> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'save')
    const now = this.#now()
    if (this.#retained(this.#byId.get(valid.id), now) !== undefined)
      throw new TokenStoreError(`cannot save: token id ${valid.id} already exists`)
    if (this.#retained(this.#byHash.get(valid.hash), now) !== undefined)
      throw new TokenStoreError('cannot save: a token with this hash already exists')
    this.#put(valid, undefined)
    let ids = this.#idsByOwner.get(valid.userId)
    if (ids === undefined) {
      ids = new Set()
      this.#idsByOwner.set(valid.userId, ids)
    }
    ids.add(valid.id)
  }

  /** Validates and replaces the record with the same id; immutable fields and a revocation stay. */
  async update(record: TokenRecord): Promise<void> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'update')
    const current = this.#retained(this.#byId.get(valid.id), this.#now())
    if (current === undefined) throw new TokenStoreError(`cannot update: no token with id ${valid.id}`)
    checkUpdate(current, valid)
    this.#put(valid, current)
  }

  /**
   * Validates and stores a rotated record (`rotateToken`): both its hash and, for the overlap, its
   * previous hash find it; the hash replaced before that is forgotten.
   */
  async rotate(record: TokenRecord): Promise<void> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'rotate')
    const now = this.#now()
    const current = this.#retained(this.#byId.get(valid.id), now)
    if (current === undefined) throw new TokenStoreError(`cannot rotate: no token with id ${valid.id}`)
    checkRotation(current, valid)
    if (this.#retained(this.#byHash.get(valid.hash), now) !== undefined)
      throw new TokenStoreError('cannot rotate: a token with this hash already exists')
    if (current.previousHash !== undefined) this.#byHash.delete(current.previousHash)
    this.#put(valid, current)
  }

  /** The user's tokens, oldest first. */
  async listByOwner(userId: string): Promise<readonly TokenRecord[]> {
    const now = this.#now()
    const ids = this.#idsByOwner.get(userId)
    if (ids === undefined) return Object.freeze([])
    const records: TokenRecord[] = []
    for (const id of [...ids]) {
      const record = this.#retained(this.#byId.get(id), now)
      if (record !== undefined) records.push(record)
    }
    return Object.freeze(records.sort(compareByCreation))
  }

  /** Sets `lastUsedAt` to `now` unless it is already later, and `lastUsedFrom` to `network` with it. */
  async touch(id: string, now: number, network?: string): Promise<void> {
    if (!isEpochMilliseconds(now)) throw new TokenStoreError('cannot touch: now must be epoch milliseconds')
    const current = this.#retained(this.#byId.get(id), this.#now())
    if (current === undefined) throw new TokenStoreError('cannot touch: no token with this id')
    if (current.lastUsedAt !== undefined && current.lastUsedAt >= now) return
    const touched = touchToken(current, now, network)
    this.#put(validateRecord(tokenRecordSchema, touched, 'token record', 'touch'), current)
  }

  // The store's clock, after removing a few records whose end has come.
  #now(): number {
    const now = this.#clock()
    if (!isEpochMilliseconds(now))
      throw new TokenStoreError('the store’s clock must answer epoch milliseconds')
    for (let swept = 0; swept < SWEEP_BATCH; swept++) {
      const due = this.#ends.popDue(now)
      if (due === undefined) break
      // A stale entry (the record's end moved later, or it is gone already) is dropped.
      this.#retained(this.#byId.get(due.key), now)
    }
    return now
  }

  // The record while it is retained at `now`; one past its end is removed here and then.
  #retained(record: TokenRecord | undefined, now: number): TokenRecord | undefined {
    if (record === undefined || isTokenRetained(record, now)) return record
    this.#remove(record)
    return undefined
  }

  #put(record: TokenRecord, replaced: TokenRecord | undefined): void {
    this.#byId.set(record.id, record)
    this.#byHash.set(record.hash, record)
    if (record.previousHash !== undefined) this.#byHash.set(record.previousHash, record)
    const end = tokenRetainUntil(record)
    if (end !== undefined && (replaced === undefined || end !== tokenRetainUntil(replaced)))
      this.#ends.push(end, record.id)
  }

  #remove(record: TokenRecord): void {
    // Hashes are unique among the records held, so both entries are this record's.
    this.#byId.delete(record.id)
    this.#byHash.delete(record.hash)
    if (record.previousHash !== undefined) this.#byHash.delete(record.previousHash)
    const ids = this.#idsByOwner.get(record.userId)!
    ids.delete(record.id)
    if (ids.size === 0) this.#idsByOwner.delete(record.userId)
  }
}
