/**
 * The token record's shape and the rules for its fields (names, reasons, ids, owners, scopes,
 * expiry), shared by the schema that reads stored records and the functions that make new ones.
 */
import type { Scope, ScopeSet } from '../decisions/scopes.js'
import { isScopeSet, parseScopes, SCOPES } from '../decisions/scopes.js'
import { ConfigError } from '../errors.js'
import { generateRandomBase62, type TokenKind } from './token-format.js'

/**
 * A stored token: who owns it, what it may do and its lifecycle dates (epoch milliseconds). It holds
 * the SHA-256 of the value, never the value itself.
 */
export type TokenRecord = {
  /** Random url-safe identifier, `tok_` + 16 base62 characters unless chosen by the host. */
  readonly id: string
  readonly kind: TokenKind
  /** The owner user. */
  readonly userId: string
  /** Display name: trimmed, 1–100 characters, no control characters. */
  readonly name: string
  /** Granted scopes: always `public` first, contract order, no duplicates. */
  readonly scopes: readonly Scope[]
  /** SHA-256 of the token value, 64 lower-case hex digits. */
  readonly hash: string
  /** Non-secret reminder for display: prefix, `…`, the value's last four characters. */
  readonly hint: string
  readonly createdAt: number
  /** The token is expired from this instant on. */
  readonly expiresAt?: number
  readonly revokedAt?: number
  /** Why the token was revoked, when a reason was given ("found public at https://…"); plain text. */
  readonly revokedReason?: string
  readonly lastUsedAt?: number
  /**
   * The network of the request that recorded `lastUsedAt`, as the limits count networks: an IPv4
   * address, or an IPv6 prefix such as `2001:db8:1:2::/64` (`networkOfAddress`).
   */
  readonly lastUsedFrom?: string
  /** The OAuth client the token was issued to, if any. */
  readonly clientId?: string
  /**
   * The resources (RFC 8707 resource identifiers) the token may be used at: a policy whose
   * `resource` is not among them refuses it. Absent: any resource of the issuer (API tokens).
   */
  readonly audience?: readonly string[]
  /**
   * The RFC 7638 JWK SHA-256 thumbprint (base64url, 43 characters) of the key the token is bound to
   * (RFC 9449 §6, the `cnf.jkt` of RFC 7800): the token is then refused unless each request carries a
   * DPoP proof signed by that key. Absent: a bearer token.
   */
  readonly dpopJkt?: string
  /**
   * The lifetime the token was created with, in days: each rotation gives the new value that long
   * again. Absent for a token created with a fixed date or no expiry, which rotation keeps.
   */
  readonly lifetimeDays?: number
  /** When the value was last replaced by {@link rotateToken}. */
  readonly rotatedAt?: number
  /**
   * SHA-256 of the value the last rotation replaced, which keeps authenticating until
   * `previousHashExpiresAt` (the overlap) unless the token is revoked or expires first.
   */
  readonly previousHash?: string
  /**
   * The previous value is refused from this instant on (at once for a rotation without overlap).
   * Present exactly when `previousHash` is.
   */
  readonly previousHashExpiresAt?: number
}

/** Where a token stands at a given instant; only `active` tokens authenticate. */
export type TokenStatus = 'active' | 'expired' | 'revoked'

/** Scopes as a {@link ScopeSet}, an OAuth scope string or an array of names. */
export type TokenScopesInput = ScopeSet | string | readonly string[]

/** A freshly created token: the record to store and the value to show once. */
export type CreatedToken = {
  readonly record: TokenRecord
  /** The token value. It exists only here: show it once, store only `record`. */
  readonly value: string
}

/** Longest revocation reason, in characters (code points). */
export const MAX_REVOKED_REASON_LENGTH = 500

/** Longest token name, in characters (code points). */
export const MAX_TOKEN_NAME_LENGTH = 100

/** A token id: url-safe, 1–64 characters. */
export const TOKEN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
/** A SHA-256 as stored: 64 lower-case hex digits. */
export const HASH_PATTERN = /^[0-9a-f]{64}$/
/** An RFC 7638 JWK SHA-256 thumbprint (`cnf.jkt`, `dpop_jkt`): 32 bytes, base64url without padding. */
export const JWK_THUMBPRINT_PATTERN = /^[A-Za-z0-9_-]{43}$/
/** A value hint: the kind's prefix, `…` and the value's last four characters. */
export const HINT_PATTERN = /^da[po]_…[0-9A-Za-z]{4}$/
/**
 * An OAuth client id. RFC 6749 Appendix A.1: client_id = *VSCHAR; spaces are excluded here so that
 * names stay trimmed.
 */
export const CLIENT_ID_PATTERN = /^[\x21-\x7e]{1,80}$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
/** Longest owner id, in UTF-16 code units. */
export const MAX_USER_ID_LENGTH = 256

export function countCodePoints(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

/** What is wrong with a (trimmed) token name, or `undefined` when nothing is. */
export function describeBadName(name: string): string | undefined {
  if (name === '') return 'must not be empty'
  if (countCodePoints(name) > MAX_TOKEN_NAME_LENGTH)
    return `must be at most ${MAX_TOKEN_NAME_LENGTH} characters`
  if (CONTROL_CHARACTER.test(name)) return 'must not contain control characters'
  return undefined
}

/** What is wrong with a revocation reason, or `undefined` when nothing is. */
export function describeBadReason(reason: string): string | undefined {
  if (reason.trim() === '') return 'must not be empty'
  if (countCodePoints(reason) > MAX_REVOKED_REASON_LENGTH)
    return `must be at most ${MAX_REVOKED_REASON_LENGTH} characters`
  if (CONTROL_CHARACTER.test(reason)) return 'must not contain control characters'
  return undefined
}

/**
 * What is wrong with a stored name. A stored name is already normalized: trimmed, where user input
 * is trimmed for the caller.
 */
export function describeBadStoredName(name: string): string | undefined {
  if (name !== name.trim()) return 'must not start or end with white space'
  return describeBadName(name)
}

/** Whether a stored scope list starts with `public` and follows the scope order without duplicates. */
export function isCanonicalScopeList(scopes: readonly Scope[]): boolean {
  let previous = -1
  for (const scope of scopes) {
    const index = SCOPES.indexOf(scope)
    if (index <= previous) return false
    previous = index
  }
  return scopes[0] === 'public'
}

/** The trimmed name, or a `ConfigError` naming `name`. */
export function normalizeName(name: unknown): string {
  if (typeof name !== 'string') throw new ConfigError(['name'], 'must be a string')
  const trimmed = name.trim()
  const problem = describeBadName(trimmed)
  if (problem !== undefined) throw new ConfigError(['name'], problem)
  return trimmed
}

/** The granted scopes of any accepted scope input, in canonical order. */
export function grantedScopes(scopes: TokenScopesInput): readonly Scope[] {
  // A look-alike built on ScopeSet's prototype is parsed like any other input (and refused).
  return (isScopeSet(scopes) ? scopes : parseScopes(scopes)).granted
}

/** The owner id, or a `ConfigError` naming `userId`. */
export function requireUserId(userId: unknown): string {
  if (typeof userId !== 'string' || userId === '' || userId.length > MAX_USER_ID_LENGTH) {
    throw new ConfigError(['userId'], `must be a string of 1–${MAX_USER_ID_LENGTH} characters`)
  }
  return userId
}

/** The host's id when valid, else a `ConfigError` naming `id`; a random `tok_` id when none is given. */
export function chooseId(id: string | undefined): string {
  if (id === undefined) return `tok_${generateRandomBase62(16)}`
  if (typeof id !== 'string' || !TOKEN_ID_PATTERN.test(id)) {
    throw new ConfigError(['id'], 'must be 1–64 characters from A-Z, a-z, 0-9, "_" and "-"')
  }
  return id
}

/** The expiry when it is epoch milliseconds after `after` (when given), else a `ConfigError` naming `expiresAt`. */
export function requireExpiry(expiresAt: number, after: number | undefined): number {
  if (!Number.isSafeInteger(expiresAt) || expiresAt < 0) {
    throw new ConfigError(['expiresAt'], 'must be epoch milliseconds')
  }
  // Without `after` (an import) every epoch passes: nothing is at or below -Infinity.
  if (expiresAt <= (after ?? Number.NEGATIVE_INFINITY)) {
    throw new ConfigError(['expiresAt'], 'must be after now')
  }
  return expiresAt
}

/**
 * Freezes a record and its scope list: every record leaves the token modules frozen, so callers can
 * share it freely.
 */
export function freezeRecord(record: TokenRecord): TokenRecord {
  const scopes = Object.isFrozen(record.scopes) ? record.scopes : Object.freeze([...record.scopes])
  return Object.freeze({ ...record, scopes })
}
