import { z } from 'zod'
import { SCOPES, type Scope } from '../decisions/scopes.js'
import { isResourceIdentifier, MAX_AUDIENCE_SIZE, RESOURCE_IDENTIFIER_RULE } from '../tokens/audience.js'
import { JWK_THUMBPRINT_PATTERN } from '../tokens/token-fields.js'

/**
 * An issued authorization code, stored under the SHA-256 of its value. Single use: `redeemedAt` is
 * set by the first redemption; a later one sets `reusedAt` and revokes what the code issued.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 */
export type AuthorizationCodeRecord = {
  /** SHA-256 of the code, 64 lower-case hex digits: the key. */
  readonly hash: string
  /** Bumped by every change; stores replace a record only over the version it was read at. */
  readonly version: number
  readonly clientId?: string
  readonly userId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scopes: readonly Scope[]
  /** The resources the grant is for (RFC 8707), fixed at consent; absent: any of the issuer's. */
  readonly audience?: readonly string[]
  readonly createdAt: number
  /** The code cannot be redeemed from this instant on. */
  readonly expiresAt: number
  /** The store may forget the record from this instant on (after what it issued has expired). */
  readonly retainUntil: number
  readonly redeemedAt?: number
  readonly reusedAt?: number
  /** Ids of the access tokens the code issued, revoked if the code is used again. */
  readonly issuedTokenIds: readonly string[]
  /** The refresh-token family the code started, revoked if the code is used again. */
  readonly refreshFamilyId?: string
  /**
   * The `dpop_jkt` of the authorization request (RFC 9449 §10): the code is redeemed only with a
   * DPoP proof by the key of this thumbprint.
   */
  readonly dpopJkt?: string
}

/** Where a device grant stands. `redeemed`: its device code has been exchanged for a token. */
export type DeviceGrantStatus = 'pending' | 'approved' | 'denied' | 'redeemed'

/**
 * A device authorization grant (RFC 8628), stored under the SHA-256 of its device code and indexed by
 * the SHA-256 of its normalized user code.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-3.2
 */
export type DeviceGrantRecord = {
  /** SHA-256 of the device code: the key. */
  readonly deviceCodeHash: string
  /** SHA-256 of the normalized user code (8 letters, no dash); unique among retained grants. */
  readonly userCodeHash: string
  readonly version: number
  readonly clientId?: string
  readonly scopes: readonly Scope[]
  /** The resources the grant is for (RFC 8707), fixed at consent; absent: any of the issuer's. */
  readonly audience?: readonly string[]
  readonly codeChallenge: string
  readonly createdAt: number
  readonly expiresAt: number
  readonly retainUntil: number
  /** The current minimum polling interval in seconds: 5, plus 5 for every `slow_down`. */
  readonly interval: number
  readonly lastPolledAt?: number
  readonly status: DeviceGrantStatus
  /** The user who approved or denied. */
  readonly userId?: string
  readonly decidedAt?: number
  readonly redeemedAt?: number
}

/** An access token a refresh-token family issued, kept while it may still be active. */
export type IssuedAccessToken = { readonly id: string; readonly expiresAt: number }

/**
 * A chain of rotated refresh tokens (RFC 9700 §4.14.2). Only the last hash is redeemable; presenting
 * an earlier one revokes the family and the access tokens it issued.
 */
export type RefreshFamilyRecord = {
  /** `rf_` and 16 base62 characters: the key. */
  readonly id: string
  readonly version: number
  readonly clientId: string
  readonly userId: string
  readonly scopes: readonly Scope[]
  /** The family's audience, kept by every rotation: a refresh may narrow a token's, never this. */
  readonly audience?: readonly string[]
  /** SHA-256 of the refresh tokens issued, oldest first (the most recent ones); the last is current. */
  readonly tokenHashes: readonly string[]
  readonly accessTokens: readonly IssuedAccessToken[]
  readonly createdAt: number
  /** The current refresh token expires at this instant (it slides with every rotation). */
  readonly expiresAt: number
  readonly retainUntil: number
  readonly revokedAt?: number
  /**
   * The thumbprint of the key the family is bound to (RFC 9449 §5, public clients only): each
   * refresh needs a DPoP proof by that key.
   */
  readonly dpopJkt?: string
}

const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 in lower-case hex')
const epochMsSchema = z
  .number()
  .refine((n) => Number.isSafeInteger(n) && n >= 0, 'must be epoch milliseconds')
const versionSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)
const clientIdSchema = z.string().regex(/^[\x21-\x7e]{1,80}$/, 'must be 1-80 visible ASCII characters')
const userIdSchema = z.string().min(1).max(256)
const tokenIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/)
const familyIdSchema = z.string().regex(/^rf_[0-9A-Za-z]{16}$/)
const challengeSchema = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be an S256 code challenge')
const scopesSchema = z.array(z.enum(SCOPES)).readonly()
const jktSchema = z
  .string()
  .regex(JWK_THUMBPRINT_PATTERN, 'must be a JWK SHA-256 thumbprint: 43 base64url characters')
const audienceSchema = z
  .array(z.string().refine(isResourceIdentifier, RESOURCE_IDENTIFIER_RULE))
  .min(1)
  .max(MAX_AUDIENCE_SIZE)
  .readonly()

/** Validates an {@link AuthorizationCodeRecord}; stores check records with it on the way in and out. */
export const authorizationCodeRecordSchema: z.ZodType<AuthorizationCodeRecord> = z
  .strictObject({
    hash: hashSchema,
    version: versionSchema,
    clientId: clientIdSchema.exactOptional(),
    userId: userIdSchema,
    redirectUri: z.string().min(1).max(2048),
    codeChallenge: challengeSchema,
    scopes: scopesSchema,
    audience: audienceSchema.exactOptional(),
    createdAt: epochMsSchema,
    expiresAt: epochMsSchema,
    retainUntil: epochMsSchema,
    redeemedAt: epochMsSchema.exactOptional(),
    reusedAt: epochMsSchema.exactOptional(),
    issuedTokenIds: z.array(tokenIdSchema).readonly(),
    refreshFamilyId: familyIdSchema.exactOptional(),
    dpopJkt: jktSchema.exactOptional(),
  })
  .readonly()

/** Validates a {@link DeviceGrantRecord}. */
export const deviceGrantRecordSchema: z.ZodType<DeviceGrantRecord> = z
  .strictObject({
    deviceCodeHash: hashSchema,
    userCodeHash: hashSchema,
    version: versionSchema,
    clientId: clientIdSchema.exactOptional(),
    scopes: scopesSchema,
    audience: audienceSchema.exactOptional(),
    codeChallenge: challengeSchema,
    createdAt: epochMsSchema,
    expiresAt: epochMsSchema,
    retainUntil: epochMsSchema,
    interval: z.number().int().min(1).max(3600),
    lastPolledAt: epochMsSchema.exactOptional(),
    status: z.enum(['pending', 'approved', 'denied', 'redeemed']),
    userId: userIdSchema.exactOptional(),
    decidedAt: epochMsSchema.exactOptional(),
    redeemedAt: epochMsSchema.exactOptional(),
  })
  .readonly()

/** Validates a {@link RefreshFamilyRecord}. */
export const refreshFamilyRecordSchema: z.ZodType<RefreshFamilyRecord> = z
  .strictObject({
    id: familyIdSchema,
    version: versionSchema,
    clientId: clientIdSchema,
    userId: userIdSchema,
    scopes: scopesSchema,
    audience: audienceSchema.exactOptional(),
    tokenHashes: z.array(hashSchema).min(1).readonly(),
    accessTokens: z
      .array(z.strictObject({ id: tokenIdSchema, expiresAt: epochMsSchema }).readonly())
      .readonly(),
    createdAt: epochMsSchema,
    expiresAt: epochMsSchema,
    retainUntil: epochMsSchema,
    revokedAt: epochMsSchema.exactOptional(),
    dpopJkt: jktSchema.exactOptional(),
  })
  .readonly()
