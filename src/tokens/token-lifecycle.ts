/**
 * The changes a token goes through after creation: rename, rescope, revoke, record a use and rotate
 * the value. Each returns a new frozen record; the caller saves it with its store.
 */
import { InvalidArgumentError } from '../errors.js'
import { requireNow } from './clock.js'
import {
  type CreatedToken,
  describeBadReason,
  freezeRecord,
  grantedScopes,
  normalizeName,
  type TokenRecord,
  type TokenScopesInput,
} from './token-fields.js'
import { generateTokenValue, tokenValueHint } from './token-format.js'
import { hashTokenValue } from './token-hash.js'
import { DAY_MS } from './token-lifetime.js'
import { tokenStatus } from './token-status.js'

/** Options of {@link rotateToken}. */
export type RotateTokenOptions = {
  /**
   * How long the replaced value keeps working, in ms: 0 (it stops at once) up to
   * {@link MAX_ROTATION_OVERLAP_MS}. The pages offer none, 1 hour, 24 hours and 7 days.
   */
  readonly overlapMs: number
  /** The clock, epoch ms. */
  readonly now: number
}

/** The longest overlap {@link rotateToken} grants the replaced value: 30 days. */
export const MAX_ROTATION_OVERLAP_MS = 30 * DAY_MS
/**
 * Renames a token; the name is trimmed and must then be 1–100 characters.
 *
 * @throws {ConfigError} naming `name`.
 * @example
 * renameToken(record, '  nightly export ').name // 'nightly export'
 */
export function renameToken(record: TokenRecord, name: string): TokenRecord {
  return freezeRecord({ ...record, name: normalizeName(name) })
}

/**
 * Replaces a token's scopes; `public` always stays. Effective from the next request.
 *
 * @throws {ScopeError} naming an unknown or malformed scope.
 * @example
 * rescopeToken(record, 'data.overview').scopes // ['public', 'data.overview']
 */
export function rescopeToken(record: TokenRecord, scopes: TokenScopesInput): TokenRecord {
  return freezeRecord({ ...record, scopes: grantedScopes(scopes) })
}

/**
 * Revokes a token, and with it every value it has (a rotation's previous value too), optionally
 * saying why. Idempotent: a second revocation keeps the first `revokedAt` and reason.
 *
 * @throws {InvalidArgumentError} when `reason` is empty, longer than 500 characters or holds control characters.
 * @example
 * tokenStatus(revokeToken(record, now), now) // 'revoked'
 * revokeToken(record, now, 'found public at https://github.com/acme/app/blob/main/.env').revokedReason
 */
export function revokeToken(record: TokenRecord, now: number, reason?: string): TokenRecord {
  requireNow(now)
  if (reason !== undefined) {
    const problem = typeof reason === 'string' ? describeBadReason(reason) : 'must be a string'
    if (problem !== undefined) throw new InvalidArgumentError(`reason ${problem}`)
  }
  if (record.revokedAt !== undefined) return freezeRecord({ ...record })
  return freezeRecord({ ...record, revokedAt: now, ...(reason !== undefined && { revokedReason: reason }) })
}

/**
 * Records a use of the token, and the network it came from when given (`networkOfAddress`).
 * `lastUsedAt` never moves backwards, so late, reordered writes are harmless; the network goes with
 * the use that is kept.
 *
 * @example
 * touchToken(record, now).lastUsedAt // now
 * touchToken(record, now, '203.0.113.7').lastUsedFrom // '203.0.113.7'
 */
export function touchToken(record: TokenRecord, now: number, network?: string): TokenRecord {
  requireNow(now)
  if (record.lastUsedAt !== undefined && record.lastUsedAt >= now) return freezeRecord({ ...record })
  const { lastUsedFrom: _, ...rest } = record
  return freezeRecord({ ...rest, lastUsedAt: now, ...(network !== undefined && { lastUsedFrom: network }) })
}

/**
 * Gives an API token a new value, shown once like a new token's: same id, name, owner, scopes and
 * expiry policy (a token created with `lifetimeDays` gets that long again from `now`; a fixed date
 * or no expiry stays). The replaced value keeps authenticating for `overlapMs` — time to deploy the
 * new one without an outage — unless the token is revoked or expires first; only the latest
 * replaced value is kept, so a second rotation ends the first one's overlap. Save the result with
 * the store's `rotate`.
 *
 * @throws {InvalidArgumentError} naming `overlapMs` or `now`, or when the token is not an active API token.
 * @example
 * const { record: rotated, value } = rotateToken(record, { overlapMs: 3_600_000, now })
 * await store.rotate(rotated) // the old value works for one more hour, `value` from now on
 */
export function rotateToken(record: TokenRecord, options: RotateTokenOptions): CreatedToken {
  const { overlapMs, now } = options
  requireNow(now)
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_ROTATION_OVERLAP_MS) {
    throw new InvalidArgumentError(
      `overlapMs must be a whole number of milliseconds from 0 to ${MAX_ROTATION_OVERLAP_MS} (30 days)`,
    )
  }
  if (record.kind !== 'api') throw new InvalidArgumentError('only API tokens can be rotated')
  if (tokenStatus(record, now) !== 'active') {
    throw new InvalidArgumentError('only an active token can be rotated; create a new one instead')
  }
  const value = generateTokenValue('api')
  const { previousHash: _, previousHashExpiresAt: __, ...rest } = record
  const lifetimeDays = record.lifetimeDays
  return Object.freeze({
    record: freezeRecord({
      ...rest,
      hash: hashTokenValue(value),
      hint: tokenValueHint(value),
      rotatedAt: now,
      ...(lifetimeDays !== undefined && { expiresAt: now + lifetimeDays * DAY_MS }),
      // Kept even without an overlap (then expired at once): a store can tell a stale rotation by it.
      previousHash: record.hash,
      previousHashExpiresAt: now + overlapMs,
    }),
    value,
  })
}
