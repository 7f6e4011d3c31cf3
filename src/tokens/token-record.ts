import { z } from 'zod'
import { parseScopes, SCOPES, type Scope, ScopeSet } from '../decisions/scopes.js'
import { ConfigError, InvalidArgumentError, TokenFormatError } from '../errors.js'
import { parseAddressRule } from '../restrictions/ip-address.js'
import {
  isResourceIdentifier,
  MAX_AUDIENCE_SIZE,
  normalizeAudience,
  RESOURCE_IDENTIFIER_RULE,
} from './audience.js'
import { requireNow } from './clock.js'
import {
  generateRandomBase62,
  generateTokenValue,
  isWellFormedTokenValue,
  TOKEN_PREFIXES,
  type TokenKind,
  tokenKindOf,
  tokenValueHint,
} from './token-format.js'
import { hashTokenValue } from './token-hash.js'
import { checkTokenLifetime, DAY_MS, isLifetimeDays, MAX_TOKEN_LIFETIME_DAYS } from './token-lifetime.js'

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

/** Options of {@link createApiToken}. */
export type CreateApiTokenOptions = {
  readonly userId: string
  readonly name: string
  readonly scopes: TokenScopesInput
  /** Epoch ms after `now`; absent (and no `lifetimeDays`) means the token never expires. */
  readonly expiresAt?: number
  /**
   * The lifetime in whole days (1–36,500; the pages offer `TOKEN_LIFETIME_DAYS`), instead of
   * `expiresAt`: the token expires that long after `now`, and again after each rotation.
   */
  readonly lifetimeDays?: number
  /**
   * The deployment's cap, in days: an expiry is then required and may lie at most this long after
   * `now`; anything else is a `TokenLifetimeError` naming the cap.
   */
  readonly maxLifetimeDays?: number
  /** The clock, epoch ms. */
  readonly now: number
  /** A host-chosen id (url-safe, 1–64 characters); a random one by default. */
  readonly id?: string
}

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

/** Options of {@link createOAuthToken}. */
export type CreateOAuthTokenOptions = {
  readonly userId: string
  readonly scopes: TokenScopesInput
  readonly clientId?: string
  /** The resources the token is for (RFC 8707): 1–16 absolute URIs. Absent: any of the issuer's. */
  readonly audience?: readonly string[]
  /** The clock, epoch ms. */
  readonly now: number
  /** Lifetime in ms; one hour by default. */
  readonly ttlMs?: number
  readonly id?: string
}

/** Options of {@link importApiToken}. */
export type ImportApiTokenOptions = {
  readonly userId: string
  readonly name: string
  readonly scopes: TokenScopesInput
  /** An existing, well-formed `dap_` value. */
  readonly value: string
  /** Epoch ms; may lie in the past, which imports an already expired token. */
  readonly expiresAt?: number
  readonly now: number
  readonly id?: string
}

/** Default lifetime of an OAuth token: one hour (design §6). */
export const DEFAULT_OAUTH_TOKEN_TTL_MS = 3_600_000

/** The longest overlap {@link rotateToken} grants the replaced value: 30 days. */
export const MAX_ROTATION_OVERLAP_MS = 30 * DAY_MS

/** Longest revocation reason, in characters (code points). */
export const MAX_REVOKED_REASON_LENGTH = 500

/** Longest token name, in characters (code points). */
export const MAX_TOKEN_NAME_LENGTH = 100

const TOKEN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
const HASH_PATTERN = /^[0-9a-f]{64}$/
const HINT_PATTERN = /^da[po]_…[0-9A-Za-z]{4}$/
// RFC 6749 Appendix A.1: client_id = *VSCHAR; spaces are excluded here so that names stay trimmed.
const CLIENT_ID_PATTERN = /^[\x21-\x7e]{1,80}$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
const MAX_USER_ID_LENGTH = 256
const OAUTH_TOKEN_NAME = 'OAuth session'

function countCodePoints(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

function describeBadName(name: string): string | undefined {
  if (name === '') return 'must not be empty'
  if (countCodePoints(name) > MAX_TOKEN_NAME_LENGTH)
    return `must be at most ${MAX_TOKEN_NAME_LENGTH} characters`
  if (CONTROL_CHARACTER.test(name)) return 'must not contain control characters'
  return undefined
}

function describeBadReason(reason: string): string | undefined {
  if (reason.trim() === '') return 'must not be empty'
  if (countCodePoints(reason) > MAX_REVOKED_REASON_LENGTH)
    return `must be at most ${MAX_REVOKED_REASON_LENGTH} characters`
  if (CONTROL_CHARACTER.test(reason)) return 'must not contain control characters'
  return undefined
}

// A stored name is already normalized: trimmed, where user input is trimmed for the caller.
function describeBadStoredName(name: string): string | undefined {
  if (name !== name.trim()) return 'must not start or end with white space'
  return describeBadName(name)
}

function isCanonicalScopeList(scopes: readonly Scope[]): boolean {
  let previous = -1
  for (const scope of scopes) {
    const index = SCOPES.indexOf(scope)
    if (index <= previous) return false
    previous = index
  }
  return scopes[0] === 'public'
}

const epochMsSchema = z.int().nonnegative()

/**
 * Validates a stored token record: exact field shapes, canonical scopes, unknown keys rejected.
 *
 * @example
 * const record = tokenRecordSchema.parse(JSON.parse(stored))
 */
export const tokenRecordSchema: z.ZodType<TokenRecord> = z
  .strictObject({
    id: z.string().regex(TOKEN_ID_PATTERN),
    kind: z.enum(['api', 'oauth']),
    userId: z.string().min(1).max(MAX_USER_ID_LENGTH),
    name: z.string().superRefine((name, ctx) => {
      const problem = describeBadStoredName(name)
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
    }),
    scopes: z
      .array(z.enum(SCOPES))
      .readonly()
      .refine(isCanonicalScopeList, 'must start with "public" and follow contract order without duplicates'),
    hash: z.string().regex(HASH_PATTERN, 'must be a SHA-256 in lower-case hex'),
    hint: z.string().regex(HINT_PATTERN, 'must be a prefix, "…" and four base62 characters'),
    createdAt: epochMsSchema,
    expiresAt: epochMsSchema.exactOptional(),
    revokedAt: epochMsSchema.exactOptional(),
    revokedReason: z
      .string()
      .superRefine((reason, ctx) => {
        const problem = describeBadReason(reason)
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
      })
      .exactOptional(),
    lastUsedAt: epochMsSchema.exactOptional(),
    lastUsedFrom: z
      .string()
      .max(64)
      .refine((network) => parseAddressRule(network).ok, 'must be an IPv4 address or an IPv6 network')
      .exactOptional(),
    clientId: z.string().regex(CLIENT_ID_PATTERN).exactOptional(),
    audience: z
      .array(z.string().refine(isResourceIdentifier, RESOURCE_IDENTIFIER_RULE))
      .min(1)
      .max(MAX_AUDIENCE_SIZE)
      .readonly()
      .exactOptional(),
    lifetimeDays: z.int().min(1).max(MAX_TOKEN_LIFETIME_DAYS).exactOptional(),
    rotatedAt: epochMsSchema.exactOptional(),
    previousHash: z.string().regex(HASH_PATTERN, 'must be a SHA-256 in lower-case hex').exactOptional(),
    previousHashExpiresAt: epochMsSchema.exactOptional(),
  })
  .superRefine((record, ctx) => {
    if (!record.hint.startsWith(TOKEN_PREFIXES[record.kind])) {
      ctx.addIssue({
        code: 'custom',
        path: ['hint'],
        message: `must start with ${TOKEN_PREFIXES[record.kind]}`,
      })
    }
    if (record.clientId !== undefined && record.kind !== 'oauth') {
      ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'only OAuth tokens have a client id' })
    }
    if (record.audience !== undefined && record.kind !== 'oauth') {
      ctx.addIssue({ code: 'custom', path: ['audience'], message: 'only OAuth tokens have an audience' })
    }
    if ((record.previousHash === undefined) !== (record.previousHashExpiresAt === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['previousHashExpiresAt'],
        message: 'previousHash and previousHashExpiresAt come together',
      })
    }
    if (record.previousHash !== undefined && record.previousHash === record.hash) {
      ctx.addIssue({ code: 'custom', path: ['previousHash'], message: 'must differ from hash' })
    }
    if (record.revokedReason !== undefined && record.revokedAt === undefined) {
      ctx.addIssue({ code: 'custom', path: ['revokedReason'], message: 'only a revoked token has a reason' })
    }
    if (record.kind !== 'api') {
      for (const field of ['lifetimeDays', 'rotatedAt', 'previousHash'] as const) {
        if (record[field] !== undefined) {
          ctx.addIssue({ code: 'custom', path: [field], message: 'only API tokens have it' })
        }
      }
    }
  })
  .readonly()

function normalizeName(name: unknown): string {
  if (typeof name !== 'string') throw new ConfigError(['name'], 'must be a string')
  const trimmed = name.trim()
  const problem = describeBadName(trimmed)
  if (problem !== undefined) throw new ConfigError(['name'], problem)
  return trimmed
}

function grantedScopes(scopes: TokenScopesInput): readonly Scope[] {
  return (scopes instanceof ScopeSet ? scopes : parseScopes(scopes)).granted
}

function requireUserId(userId: unknown): string {
  if (typeof userId !== 'string' || userId === '' || userId.length > MAX_USER_ID_LENGTH) {
    throw new ConfigError(['userId'], `must be a string of 1–${MAX_USER_ID_LENGTH} characters`)
  }
  return userId
}

function chooseId(id: string | undefined): string {
  if (id === undefined) return `tok_${generateRandomBase62(16)}`
  if (typeof id !== 'string' || !TOKEN_ID_PATTERN.test(id)) {
    throw new ConfigError(['id'], 'must be 1–64 characters from A-Z, a-z, 0-9, "_" and "-"')
  }
  return id
}

function requireExpiry(expiresAt: number, after: number | undefined): number {
  if (!Number.isSafeInteger(expiresAt) || expiresAt < 0) {
    throw new ConfigError(['expiresAt'], 'must be epoch milliseconds')
  }
  // Stryker disable next-line ConditionalExpression: equivalent because `expiresAt <= undefined` is false
  if (after !== undefined && expiresAt <= after) throw new ConfigError(['expiresAt'], 'must be after now')
  return expiresAt
}

// Every record leaves this module frozen, its scope list included, so callers can share it freely.
function freezeRecord(record: TokenRecord): TokenRecord {
  const scopes = Object.isFrozen(record.scopes) ? record.scopes : Object.freeze([...record.scopes])
  return Object.freeze({ ...record, scopes })
}

type RecordFields = {
  readonly id: string
  readonly kind: TokenKind
  readonly userId: string
  readonly name: string
  readonly scopes: readonly Scope[]
  readonly now: number
  readonly expiresAt: number | undefined
  readonly clientId?: string | undefined
  readonly audience?: readonly string[] | undefined
  readonly lifetimeDays?: number | undefined
}

// An API token's fields from the host's options, checked in this order; a given expiry must lie
// after `expiryAfter` (an import may carry one already past).
function apiTokenFields(options: CreateApiTokenOptions, expiryAfter: number | undefined): RecordFields {
  return {
    id: chooseId(options.id),
    kind: 'api',
    userId: requireUserId(options.userId),
    name: normalizeName(options.name),
    scopes: grantedScopes(options.scopes),
    now: options.now,
    expiresAt: options.expiresAt === undefined ? undefined : requireExpiry(options.expiresAt, expiryAfter),
  }
}

function buildRecord(value: string, fields: RecordFields): TokenRecord {
  return freezeRecord({
    id: fields.id,
    kind: fields.kind,
    userId: fields.userId,
    name: fields.name,
    scopes: fields.scopes,
    hash: hashTokenValue(value),
    hint: tokenValueHint(value),
    createdAt: fields.now,
    ...(fields.expiresAt !== undefined && { expiresAt: fields.expiresAt }),
    ...(fields.clientId !== undefined && { clientId: fields.clientId }),
    ...(fields.audience !== undefined && { audience: fields.audience }),
    ...(fields.lifetimeDays !== undefined && { lifetimeDays: fields.lifetimeDays }),
  })
}

/**
 * Creates an API token: the record to store and the value, which exists only in this result.
 *
 * @throws {ConfigError} naming `name`, `userId`, `expiresAt`, `lifetimeDays`, `maxLifetimeDays` or
 *   `id` when one is invalid.
 * @throws {TokenLifetimeError} when the expiry breaks `maxLifetimeDays`; the message names the cap.
 * @throws {ScopeError} naming an unknown or malformed scope.
 * @example
 * const now = Date.now()
 * const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now })
 * record.scopes // ['public', 'data.data']
 */
export function createApiToken(options: CreateApiTokenOptions): CreatedToken {
  requireNow(options.now)
  const { lifetimeDays, now } = options
  let fields = apiTokenFields(options, now)
  if (lifetimeDays !== undefined) {
    if (!isLifetimeDays(lifetimeDays)) {
      throw new ConfigError(
        ['lifetimeDays'],
        `must be a whole number of days from 1 to ${MAX_TOKEN_LIFETIME_DAYS}`,
      )
    }
    if (options.expiresAt !== undefined) {
      throw new ConfigError(['lifetimeDays'], 'give either lifetimeDays or expiresAt, not both')
    }
    fields = { ...fields, expiresAt: now + lifetimeDays * DAY_MS, lifetimeDays }
  }
  checkTokenLifetime(fields.expiresAt, now, options.maxLifetimeDays)
  const value = generateTokenValue('api')
  return Object.freeze({ record: buildRecord(value, fields), value })
}

/**
 * Creates a short-lived OAuth token, named after its client when it has one.
 *
 * @throws {ConfigError} naming `userId`, `clientId`, `audience`, `ttlMs` or `id` when one is invalid.
 * @throws {ScopeError} naming an unknown or malformed scope.
 * @example
 * const { record } = createOAuthToken({ userId: 'alice', scopes: ['data.metadata'], clientId: 'cli', now })
 * record.name // 'OAuth session (cli)'
 * record.expiresAt === now + 3_600_000 // true
 */
export function createOAuthToken(options: CreateOAuthTokenOptions): CreatedToken {
  requireNow(options.now)
  const ttlMs = options.ttlMs ?? DEFAULT_OAUTH_TOKEN_TTL_MS
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0 || !Number.isSafeInteger(options.now + ttlMs)) {
    throw new ConfigError(['ttlMs'], 'must be a positive integer number of milliseconds')
  }
  const clientId = options.clientId
  if (clientId !== undefined && (typeof clientId !== 'string' || !CLIENT_ID_PATTERN.test(clientId))) {
    throw new ConfigError(['clientId'], 'must be 1–80 visible ASCII characters')
  }
  const fields: RecordFields = {
    id: chooseId(options.id),
    kind: 'oauth',
    userId: requireUserId(options.userId),
    name: clientId === undefined ? OAUTH_TOKEN_NAME : `${OAUTH_TOKEN_NAME} (${clientId})`,
    scopes: grantedScopes(options.scopes),
    now: options.now,
    expiresAt: options.now + ttlMs,
    clientId,
    audience: options.audience === undefined ? undefined : normalizeAudience(options.audience),
  }
  const value = generateTokenValue('oauth')
  return Object.freeze({ record: buildRecord(value, fields), value })
}

/**
 * Builds the record of an API token whose value already exists (a seed file, a migration).
 *
 * @throws {TokenFormatError} when the value is not a well-formed `dap_` value (the message omits it).
 * @throws {ConfigError} naming `name`, `userId`, `expiresAt` or `id` when one is invalid.
 * @example
 * const record = importApiToken({ userId: 'alice', name: 'ci', scopes: [], value: seed.value, now })
 */
export function importApiToken(options: ImportApiTokenOptions): TokenRecord {
  requireNow(options.now)
  const value = options.value
  if (!isWellFormedTokenValue(value) || tokenKindOf(value) !== 'api') {
    throw new TokenFormatError('value is not a well-formed API token (dap_ + 32 base62 + checksum)')
  }
  return buildRecord(value, apiTokenFields(options, undefined))
}

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
