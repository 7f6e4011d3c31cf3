/**
 * How long a store keeps a token record: exactly as long as the settings pages show it. A revoked
 * token stays listed under "Recently revoked" for {@link REVOKED_DISPLAY_MS}, an expired one stays
 * listed as expired for {@link EXPIRED_DISPLAY_MS}; after that nobody can see or use it, so every
 * store removes it. One rule for the pages and the stores, so that neither keeps what the other
 * has dropped.
 */

import { DAY_MS } from './token-lifetime.js'
import type { TokenRecord } from './token-record.js'

/** How long a revoked token is shown (and kept) after its revocation: 30 days. */
export const REVOKED_DISPLAY_MS = 30 * DAY_MS

/** How long an expired token is shown (and kept) after its expiry: 30 days. */
export const EXPIRED_DISPLAY_MS = 30 * DAY_MS

type Retainable = Pick<TokenRecord, 'expiresAt' | 'revokedAt' | 'previousHashExpiresAt'>

/**
 * The instant (epoch ms) from which a store no longer keeps the record: the latest of its
 * revocation plus {@link REVOKED_DISPLAY_MS}, its expiry plus {@link EXPIRED_DISPLAY_MS} and the end
 * of a rotation's overlap. `undefined` for a live token without expiry, which is kept for good.
 *
 * @example
 * tokenRetainUntil({ expiresAt: now + 3_600_000 }) // now + 3_600_000 + EXPIRED_DISPLAY_MS
 * tokenRetainUntil({}) // undefined: never expires, never revoked
 */
export function tokenRetainUntil(record: Retainable): number | undefined {
  const { expiresAt, revokedAt, previousHashExpiresAt } = record
  if (expiresAt === undefined && revokedAt === undefined) return undefined
  return Math.max(
    revokedAt === undefined ? 0 : revokedAt + REVOKED_DISPLAY_MS,
    expiresAt === undefined ? 0 : expiresAt + EXPIRED_DISPLAY_MS,
    previousHashExpiresAt ?? 0,
  )
}

/**
 * Whether a store still keeps the record at `now`: before its {@link tokenRetainUntil}.
 *
 * @example
 * isTokenRetained(revokeToken(record, now), now + REVOKED_DISPLAY_MS - 1) // true
 * isTokenRetained(revokeToken(record, now), now + REVOKED_DISPLAY_MS)     // false: removed
 */
export function isTokenRetained(record: Retainable, now: number): boolean {
  const end = tokenRetainUntil(record)
  // Written as "before": a NaN clock keeps nothing with an end, which fails closed (unknown token).
  return end === undefined || now < end
}

/**
 * Whether the settings pages list a revoked token as "Recently revoked" at `now`.
 *
 * @example
 * isRecentlyRevoked(revokeToken(record, now), now + DAY_MS) // true
 * isRecentlyRevoked(record, now)                             // false: not revoked
 */
export function isRecentlyRevoked(record: Pick<TokenRecord, 'revokedAt'>, now: number): boolean {
  return record.revokedAt !== undefined && now - record.revokedAt < REVOKED_DISPLAY_MS
}
