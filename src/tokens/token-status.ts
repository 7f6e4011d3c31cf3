/** Where a token, or one of its values, stands at an instant. */
import type { TokenRecord, TokenStatus } from './token-fields.js'

/**
 * Where a token stands at `now`: revoked wins over expired; expired from `expiresAt` on (inclusive).
 *
 * @example
 * tokenStatus(record, record.expiresAt) // 'expired'
 */
export function tokenStatus(record: TokenRecord, now: number): TokenStatus {
  if (record.revokedAt !== undefined) return 'revoked'
  // Written as "not before" so that a NaN clock fails closed (expired) instead of open.
  if (record.expiresAt !== undefined && !(now < record.expiresAt)) return 'expired'
  return 'active'
}

/**
 * Where the value whose SHA-256 is `hash` stands at `now`: the token's status for its current
 * value; for the value a rotation replaced, that status until the overlap ends and `expired` from
 * `previousHashExpiresAt` on; `undefined` when `hash` is neither of the token's values.
 *
 * @example
 * tokenStatusOfHash(rotated, hashTokenValue(oldValue), now) // 'active' during the overlap
 * tokenStatusOfHash(rotated, hashTokenValue(oldValue), rotated.previousHashExpiresAt) // 'expired'
 */
export function tokenStatusOfHash(record: TokenRecord, hash: string, now: number): TokenStatus | undefined {
  if (hash === record.hash) return tokenStatus(record, now)
  if (record.previousHash === undefined || hash !== record.previousHash) return undefined
  const status = tokenStatus(record, now)
  if (status !== 'active') return status
  return now < record.previousHashExpiresAt! ? 'active' : 'expired'
}
