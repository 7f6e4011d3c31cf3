/**
 * Creating tokens: a new API token, a short-lived OAuth token, and the record of an API token whose
 * value already exists. Each checks the host's options field by field and hashes the value.
 */
import type { Scope } from '../decisions/scopes.js'
import { ConfigError, TokenFormatError } from '../errors.js'
import { normalizeAudience } from './audience.js'
import { requireNow } from './clock.js'
import {
  CLIENT_ID_PATTERN,
  type CreatedToken,
  chooseId,
  freezeRecord,
  grantedScopes,
  JWK_THUMBPRINT_PATTERN,
  normalizeName,
  requireExpiry,
  requireUserId,
  type TokenRecord,
  type TokenScopesInput,
} from './token-fields.js'
import {
  generateTokenValue,
  isWellFormedTokenValue,
  type TokenKind,
  tokenKindOf,
  tokenValueHint,
} from './token-format.js'
import { hashTokenValue } from './token-hash.js'
import { checkTokenLifetime, DAY_MS, isLifetimeDays, MAX_TOKEN_LIFETIME_DAYS } from './token-lifetime.js'

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

/** Options of {@link createOAuthToken}. */
export type CreateOAuthTokenOptions = {
  readonly userId: string
  readonly scopes: TokenScopesInput
  readonly clientId?: string
  /** The resources the token is for (RFC 8707): 1–16 absolute URIs. Absent: any of the issuer's. */
  readonly audience?: readonly string[]
  /**
   * The RFC 7638 thumbprint of the key the token is bound to (RFC 9449 `cnf.jkt`): 43 base64url
   * characters. A bound token is refused without a DPoP proof by that key. Absent: a bearer token.
   */
  readonly dpopJkt?: string
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

/** Default lifetime of an OAuth token: one hour (docs/tokens.md). */
export const DEFAULT_OAUTH_TOKEN_TTL_MS = 3_600_000

const OAUTH_TOKEN_NAME = 'OAuth session'

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
  readonly dpopJkt?: string | undefined
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
    ...(fields.dpopJkt !== undefined && { dpopJkt: fields.dpopJkt }),
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
 * @throws {ConfigError} naming `userId`, `clientId`, `audience`, `dpopJkt`, `ttlMs` or `id` when one is invalid.
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
  const dpopJkt = options.dpopJkt
  if (dpopJkt !== undefined && (typeof dpopJkt !== 'string' || !JWK_THUMBPRINT_PATTERN.test(dpopJkt))) {
    throw new ConfigError(
      ['dpopJkt'],
      `must be an RFC 7638 SHA-256 thumbprint (43 base64url characters), got ${JSON.stringify(dpopJkt)}`,
    )
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
    dpopJkt,
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
