import { TokenStoreError } from '../errors.js'
import { validateRecord } from './store-records.js'
import { type TokenRecord, tokenRecordSchema, touchToken } from './token-record.js'
import type { TokenStore } from './token-store.js'
import { checkRotation, checkUpdate } from './token-store-rules.js'

function compareByCreation(a: TokenRecord, b: TokenRecord): number {
  // Ids are unique within a store, so two records never compare equal.
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)
}

/**
 * The embedded token store: validated, frozen records in process memory, lost on restart and not
 * shared between instances.
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

  /** The record whose value hashes to `hash`, whatever its status; answers synchronously. */
  findByHash(hash: string): TokenRecord | undefined {
    return this.#byHash.get(hash)
  }

  /** The record with this id, whatever its status. */
  async findById(id: string): Promise<TokenRecord | undefined> {
    return this.#byId.get(id)
  }

  /** Validates and adds a new record; a duplicate id or hash is refused. */
  async save(record: TokenRecord): Promise<void> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'save')
    if (this.#byId.has(valid.id))
      throw new TokenStoreError(`cannot save: token id ${valid.id} already exists`)
    if (this.#byHash.has(valid.hash))
      throw new TokenStoreError('cannot save: a token with this hash already exists')
    this.#put(valid)
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
    const current = this.#byId.get(valid.id)
    if (current === undefined) throw new TokenStoreError(`cannot update: no token with id ${valid.id}`)
    checkUpdate(current, valid)
    this.#put(valid)
  }

  /**
   * Validates and stores a rotated record (`rotateToken`): both its hash and, for the overlap, its
   * previous hash find it; the hash replaced before that is forgotten.
   */
  async rotate(record: TokenRecord): Promise<void> {
    const valid = validateRecord(tokenRecordSchema, record, 'token record', 'rotate')
    const current = this.#byId.get(valid.id)
    if (current === undefined) throw new TokenStoreError(`cannot rotate: no token with id ${valid.id}`)
    checkRotation(current, valid)
    if (this.#byHash.has(valid.hash))
      throw new TokenStoreError('cannot rotate: a token with this hash already exists')
    if (current.previousHash !== undefined) this.#byHash.delete(current.previousHash)
    this.#put(valid)
  }

  /** The user's tokens, oldest first. */
  async listByOwner(userId: string): Promise<readonly TokenRecord[]> {
    const ids = this.#idsByOwner.get(userId)
    if (ids === undefined) return Object.freeze([])
    const records: TokenRecord[] = []
    for (const id of ids) records.push(this.#byId.get(id)!)
    return Object.freeze(records.sort(compareByCreation))
  }

  /** Sets `lastUsedAt` to `now` unless it is already later, and `lastUsedFrom` to `network` with it. */
  async touch(id: string, now: number, network?: string): Promise<void> {
    if (!Number.isSafeInteger(now) || now < 0)
      throw new TokenStoreError('cannot touch: now must be epoch milliseconds')
    const current = this.#byId.get(id)
    if (current === undefined) throw new TokenStoreError('cannot touch: no token with this id')
    if (current.lastUsedAt !== undefined && current.lastUsedAt >= now) return
    this.#put(validateRecord(tokenRecordSchema, touchToken(current, now, network), 'token record', 'touch'))
  }

  #put(record: TokenRecord): void {
    this.#byId.set(record.id, record)
    this.#byHash.set(record.hash, record)
    if (record.previousHash !== undefined) this.#byHash.set(record.previousHash, record)
  }
}
