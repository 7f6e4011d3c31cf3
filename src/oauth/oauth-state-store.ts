import type {
  AuthorizationCodeRecord,
  DeviceGrantRecord,
  RefreshFamilyRecord,
} from './oauth-state-records.js'

/**
 * Where OAuth state lives between requests: authorization codes, device grants, refresh-token
 * families and the wrong-user-code counters. Every method is async so that a shared store (Redis)
 * fits the same shape as {@link MemoryOAuthStateStore}; every failure is a `TokenStoreError`.
 *
 * Atomicity is one primitive, compare-and-set: each record carries a `version`, and `replace*`
 * stores `next` only if the stored record's version is `next.version - 1` (else it answers `false`
 * and the caller reads again). Consuming a code and redeeming a device code are such replacements,
 * so of two concurrent redemptions exactly one wins. The rules themselves live in the OAuth
 * functions, never in a store.
 *
 * Rules every implementation keeps (checked by the shared contract suite):
 * - records are validated with the record schemas on the way in and returned frozen;
 * - `find*` ignores (and may delete) a record whose `retainUntil` is not after `now`;
 * - keys and indexes (`hash`, `deviceCodeHash`, `userCodeHash`, `id`, `tokenHashes`) are unique;
 *   a replacement may not change a key or `userCodeHash`;
 * - a family's index holds exactly the hashes of its current `tokenHashes`.
 *
 * @example
 * const state: OAuthStateStore = new MemoryOAuthStateStore()
 */
export interface OAuthStateStore {
  /** Adds a code; an existing hash is a `TokenStoreError`. */
  saveAuthorizationCode(record: AuthorizationCodeRecord): Promise<void>
  findAuthorizationCode(hash: string, now: number): Promise<AuthorizationCodeRecord | undefined>
  /** Compare-and-set on `version`; `false` when the stored version is not `next.version - 1` or it is gone. */
  replaceAuthorizationCode(next: AuthorizationCodeRecord): Promise<boolean>

  /** Adds a grant; `false` (and nothing stored) when a retained grant already has its user code. */
  saveDeviceGrant(record: DeviceGrantRecord): Promise<boolean>
  findDeviceGrant(deviceCodeHash: string, now: number): Promise<DeviceGrantRecord | undefined>
  findDeviceGrantByUserCode(userCodeHash: string, now: number): Promise<DeviceGrantRecord | undefined>
  /** Compare-and-set on `version`. */
  replaceDeviceGrant(next: DeviceGrantRecord): Promise<boolean>

  /** Adds a family and indexes its token hashes; an existing id or hash is a `TokenStoreError`. */
  saveRefreshFamily(record: RefreshFamilyRecord): Promise<void>
  findRefreshFamily(id: string, now: number): Promise<RefreshFamilyRecord | undefined>
  /** The family that issued the refresh token with this hash, current or rotated. */
  findRefreshFamilyByTokenHash(hash: string, now: number): Promise<RefreshFamilyRecord | undefined>
  /** Compare-and-set on `version`; re-indexes `tokenHashes`. */
  replaceRefreshFamily(next: RefreshFamilyRecord): Promise<boolean>

  /** Wrong user-code entries counted under `key` in the current window (0 when none). */
  countUserCodeFailures(key: string, now: number): Promise<number>
  /**
   * Counts one more wrong entry under `key`, atomically, and answers the new count. The window opens
   * at the first failure and lasts `windowMs`; after it the count starts again from zero.
   */
  recordUserCodeFailure(key: string, now: number, windowMs: number): Promise<number>
}
