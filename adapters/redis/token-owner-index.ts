/**
 * Each owner's index of token hashes: a sorted set scored by the records' end, which the settings
 * pages list and which tells, without reading every record, which of an owner's records have
 * reached their end. Every write to it removes a few of those, index entries and all, so that a
 * user's churn never outgrows what the pages show, whatever the Redis expiries say.
 */
import { tokenRecordSchema } from '../../src/tokens/token-record.js'
import { isTokenRetained } from '../../src/tokens/token-retention.js'
import { defineScript, type LuaScript, type RedisConnection } from './connection.js'
import { decodeRecord } from './record-codec.js'
import { ALIAS_PREFIX, endScore, HASH, RETENTION_GRACE_MS, type TokenKeys } from './token-keys.js'
import { DELETE_IF, INDEX_TOKEN, UNINDEX_IF_ENDED } from './token-scripts.js'

/**
 * The owner indexes of one store.
 *
 * @example
 * const owners = new OwnerIndex(client, keys, (hash) => reads.invalidate(hash))
 * const added = await owners.file('alice', record.hash, endScore(record), now)
 */
export class OwnerIndex {
  readonly #client: RedisConnection
  readonly #keys: TokenKeys
  readonly #removed: (hash: string) => void
  readonly #index: LuaScript
  readonly #unindexIfEnded: LuaScript
  readonly #deleteIf: LuaScript

  /** `removed` hears of each record removed, so that caches drop it. */
  constructor(client: RedisConnection, keys: TokenKeys, removed: (hash: string) => void) {
    this.#client = client
    this.#keys = keys
    this.#removed = removed
    this.#index = defineScript(client, 'dapIndexToken', INDEX_TOKEN)
    this.#unindexIfEnded = defineScript(client, 'dapUnindexIfEnded', UNINDEX_IF_ENDED)
    this.#deleteIf = defineScript(client, 'dapDeleteOwnedIf', DELETE_IF)
  }

  /**
   * Files `hash` (nothing when empty) in the owner's index with its end as `score`, takes `remove`
   * out (a rotation's replaced hash), moves the index's expiry to its latest end, and removes a few
   * of the owner's records whose end has come at `now`. Resolves whether the hash was added.
   */
  async file(userId: string, hash: string, score: string, now: number, remove = ''): Promise<boolean> {
    const owner = this.#keys.owner(userId)
    const answer = (await this.#index([owner], [hash, score, now, RETENTION_GRACE_MS, remove])) as unknown[]
    for (const ended of answer.slice(1)) {
      if (typeof ended === 'string' && HASH.test(ended)) await this.#remove(owner, ended, now)
    }
    return answer[0] === 1
  }

  /**
   * The owner's hashes. An owner set left by an earlier version (a plain set, no ends) is moved
   * into the index first, each hash scored by its record's end, so an upgrade lists every token.
   */
  async hashes(userId: string): Promise<string[]> {
    const owner = this.#keys.owner(userId)
    const legacy = this.#keys.legacyOwner(userId)
    for (const hash of await this.#client.smembers(legacy)) {
      const text = HASH.test(hash) ? await this.#client.get(this.#keys.record(hash)) : null
      if (text === null || text.startsWith(ALIAS_PREFIX)) continue
      await this.#client.zadd(owner, endScore(decodeRecord(tokenRecordSchema, text, 'token record')), hash)
    }
    await this.#client.del(legacy)
    return this.#client.zrange(owner, 0, -1)
  }

  /** Whether the record stored under `hash` belongs to `userId`; an unreadable one does not. */
  async ownsRecord(hash: string, userId: string): Promise<boolean> {
    const text = await this.#client.get(this.#keys.record(hash))
    if (text === null) return false
    try {
      return decodeRecord(tokenRecordSchema, text, 'token record').userId === userId
    } catch {
      return false
    }
  }

  /** Takes `hash` out of the owner's index. */
  async drop(userId: string, hash: string): Promise<void> {
    await this.#client.zrem(this.#keys.owner(userId), hash)
  }

  // Removes a record whose end has come, and its index entries, each only while it still holds what
  // was read: a record changed meanwhile (its end moved) is filed again under its new end instead.
  async #remove(owner: string, hash: string, now: number): Promise<void> {
    const key = this.#keys.record(hash)
    const text = await this.#client.get(key)
    if (text !== null && !text.startsWith(ALIAS_PREFIX)) {
      const record = decodeRecord(tokenRecordSchema, text, 'token record')
      if (isTokenRetained(record, now)) {
        await this.#client.zadd(owner, 'XX', endScore(record), hash)
        return
      }
      await this.#deleteIf([key], [text])
      await this.#deleteIf([this.#keys.id(record.id)], [hash])
      if (record.previousHash !== undefined) {
        await this.#deleteIf([this.#keys.record(record.previousHash)], [`${ALIAS_PREFIX}${hash}`])
      }
      this.#removed(hash)
    }
    await this.#unindexIfEnded([owner], [hash, now])
  }
}
