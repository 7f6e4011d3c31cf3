import { TokenStoreError } from '../errors.js'
import { deepFreeze, live, requireStoreNow, validateRecord } from '../tokens/store-records.js'
import {
  type AuthorizationCodeRecord,
  authorizationCodeRecordSchema,
  type DeviceGrantRecord,
  deviceGrantRecordSchema,
  type RefreshFamilyRecord,
  refreshFamilyRecordSchema,
} from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'

type Counter = { readonly count: number; readonly resetAt: number }

// A full sweep of expired entries runs at most this often (by the injected clock), keeping saves O(1)
// amortized while bounding memory to what was retained in the last interval.
const SWEEP_INTERVAL_MS = 60_000

/**
 * The embedded OAuth state store: validated, frozen records in process memory, lost on restart and
 * not shared between instances. Entries past their `retainUntil` are ignored at once and swept out
 * at most a minute (of the injected clock) later.
 *
 * @example
 * const state = new MemoryOAuthStateStore()
 * await handleTokenRequest(params, { state, tokens, clients, now: Date.now() })
 */
export class MemoryOAuthStateStore implements OAuthStateStore {
  readonly #codes = new Map<string, AuthorizationCodeRecord>()
  readonly #grants = new Map<string, DeviceGrantRecord>()
  readonly #grantsByUserCode = new Map<string, string>()
  readonly #families = new Map<string, RefreshFamilyRecord>()
  readonly #familiesByTokenHash = new Map<string, string>()
  readonly #failures = new Map<string, Counter>()
  #nextSweepAt = 0

  async saveAuthorizationCode(record: AuthorizationCodeRecord): Promise<void> {
    const valid = validateRecord(authorizationCodeRecordSchema, record, 'authorization code record')
    this.#sweep(valid.createdAt)
    if (this.#codes.has(valid.hash)) throw new TokenStoreError('an authorization code with this hash exists')
    this.#codes.set(valid.hash, deepFreeze(valid))
  }

  async findAuthorizationCode(hash: string, now: number): Promise<AuthorizationCodeRecord | undefined> {
    requireStoreNow(now)
    return live(this.#codes.get(hash), now)
  }

  async replaceAuthorizationCode(next: AuthorizationCodeRecord): Promise<boolean> {
    const valid = validateRecord(authorizationCodeRecordSchema, next, 'authorization code record')
    const current = this.#codes.get(valid.hash)
    if (current === undefined || current.version !== valid.version - 1) return false
    this.#codes.set(valid.hash, deepFreeze(valid))
    return true
  }

  async saveDeviceGrant(record: DeviceGrantRecord): Promise<boolean> {
    const valid = validateRecord(deviceGrantRecordSchema, record, 'device grant record')
    this.#sweep(valid.createdAt)
    if (this.#grants.has(valid.deviceCodeHash))
      throw new TokenStoreError('a device grant with this hash exists')
    const holder = this.#grantsByUserCode.get(valid.userCodeHash)
    if (holder !== undefined && live(this.#grants.get(holder), valid.createdAt) !== undefined) return false
    this.#grants.set(valid.deviceCodeHash, deepFreeze(valid))
    this.#grantsByUserCode.set(valid.userCodeHash, valid.deviceCodeHash)
    return true
  }

  async findDeviceGrant(deviceCodeHash: string, now: number): Promise<DeviceGrantRecord | undefined> {
    requireStoreNow(now)
    return live(this.#grants.get(deviceCodeHash), now)
  }

  async findDeviceGrantByUserCode(userCodeHash: string, now: number): Promise<DeviceGrantRecord | undefined> {
    requireStoreNow(now)
    const deviceCodeHash = this.#grantsByUserCode.get(userCodeHash)
    return deviceCodeHash === undefined ? undefined : live(this.#grants.get(deviceCodeHash), now)
  }

  async replaceDeviceGrant(next: DeviceGrantRecord): Promise<boolean> {
    const valid = validateRecord(deviceGrantRecordSchema, next, 'device grant record')
    const current = this.#grants.get(valid.deviceCodeHash)
    if (current === undefined || current.version !== valid.version - 1) return false
    if (current.userCodeHash !== valid.userCodeHash) {
      throw new TokenStoreError('a device grant cannot change its user code')
    }
    this.#grants.set(valid.deviceCodeHash, deepFreeze(valid))
    return true
  }

  async saveRefreshFamily(record: RefreshFamilyRecord): Promise<void> {
    const valid = validateRecord(refreshFamilyRecordSchema, record, 'refresh family record')
    this.#sweep(valid.createdAt)
    if (this.#families.has(valid.id)) throw new TokenStoreError(`refresh family ${valid.id} exists`)
    this.#requireFreeHashes(valid)
    this.#families.set(valid.id, deepFreeze(valid))
    for (const hash of valid.tokenHashes) this.#familiesByTokenHash.set(hash, valid.id)
  }

  async findRefreshFamily(id: string, now: number): Promise<RefreshFamilyRecord | undefined> {
    requireStoreNow(now)
    return live(this.#families.get(id), now)
  }

  async findRefreshFamilyByTokenHash(hash: string, now: number): Promise<RefreshFamilyRecord | undefined> {
    requireStoreNow(now)
    const id = this.#familiesByTokenHash.get(hash)
    return id === undefined ? undefined : live(this.#families.get(id), now)
  }

  async replaceRefreshFamily(next: RefreshFamilyRecord): Promise<boolean> {
    const valid = validateRecord(refreshFamilyRecordSchema, next, 'refresh family record')
    const current = this.#families.get(valid.id)
    if (current === undefined || current.version !== valid.version - 1) return false
    this.#requireFreeHashes(valid)
    for (const hash of current.tokenHashes) this.#familiesByTokenHash.delete(hash)
    this.#families.set(valid.id, deepFreeze(valid))
    for (const hash of valid.tokenHashes) this.#familiesByTokenHash.set(hash, valid.id)
    return true
  }

  async countUserCodeFailures(key: string, now: number): Promise<number> {
    requireStoreNow(now)
    const counter = this.#failures.get(key)
    return counter !== undefined && now < counter.resetAt ? counter.count : 0
  }

  async recordUserCodeFailure(key: string, now: number, windowMs: number): Promise<number> {
    requireStoreNow(now)
    if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
      throw new TokenStoreError('windowMs must be a positive integer')
    }
    this.#sweep(now)
    const counter = this.#failures.get(key)
    const next =
      counter !== undefined && now < counter.resetAt
        ? { count: counter.count + 1, resetAt: counter.resetAt }
        : { count: 1, resetAt: now + windowMs }
    this.#failures.set(key, next)
    return next.count
  }

  #requireFreeHashes(family: RefreshFamilyRecord): void {
    for (const hash of family.tokenHashes) {
      const owner = this.#familiesByTokenHash.get(hash)
      if (owner !== undefined && owner !== family.id) {
        throw new TokenStoreError('a refresh token hash belongs to another family')
      }
    }
  }

  #sweep(now: number): void {
    if (now < this.#nextSweepAt) return
    this.#nextSweepAt = now + SWEEP_INTERVAL_MS
    for (const [hash, code] of this.#codes) if (now >= code.retainUntil) this.#codes.delete(hash)
    for (const [hash, grant] of this.#grants) {
      if (now < grant.retainUntil) continue
      this.#grants.delete(hash)
      if (this.#grantsByUserCode.get(grant.userCodeHash) === hash)
        this.#grantsByUserCode.delete(grant.userCodeHash)
    }
    for (const [id, family] of this.#families) {
      if (now < family.retainUntil) continue
      this.#families.delete(id)
      for (const hash of family.tokenHashes) this.#familiesByTokenHash.delete(hash)
    }
    for (const [key, counter] of this.#failures) if (now >= counter.resetAt) this.#failures.delete(key)
  }
}
