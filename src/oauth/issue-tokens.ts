import type { Scope } from '../decisions/scopes.js'
import { createOAuthToken, revokeToken } from '../tokens/token-record.js'
import type { TokenStore } from '../tokens/token-store.js'
import type { OAuthClient } from './oauth-client.js'
import type { IssuedAccessToken, RefreshFamilyRecord } from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { generateFamilyId, generateOpaqueSecret, hashSecret } from './random-secret.js'
import type { CompiledResources } from './resource-indicators.js'
import { updateRecord } from './update-record.js'

// Private helpers of the token endpoint; not part of the public API.

/** The successful token response (RFC 6749 §5.1). */
export type TokenResponseBody = {
  readonly access_token: string
  /** `DPoP` for a token bound to the key of the request's DPoP proof (RFC 9449 §5), else `Bearer`. */
  readonly token_type: 'Bearer' | 'DPoP'
  /** Lifetime of the access token in seconds. */
  readonly expires_in: number
  /** The scopes of the access token, space-delimited, `public` first. */
  readonly scope: string
  /** Only for a registered client with offline access. */
  readonly refresh_token?: string
}

/** What every grant handler of the token endpoint needs. */
export type GrantContext = {
  /** The authenticated client; `undefined` for a session client (no `client_id`). */
  readonly client: OAuthClient | undefined
  readonly state: OAuthStateStore
  readonly tokens: TokenStore
  readonly now: number
  readonly accessTokenTtlMs: number
  readonly refreshTokenTtlMs: number
  /** The resources a `resource` parameter may name; `undefined` when the host declared none. */
  readonly resources: CompiledResources | undefined
  /** The thumbprint of the request's verified DPoP proof key; `undefined` without a proof. */
  readonly dpopJkt: string | undefined
  /**
   * Records the request's DPoP proof as used (RFC 9449 §11.1), refusing a replay; does nothing
   * without a proof. A grant calls it once it has found the grant good for this client (it exists,
   * is the client's and has not expired), before it consumes the grant or issues anything: a
   * refused request then takes no room in the replay cache, and a replayed proof spends no grant.
   */
  readonly claimDpopProof: () => Promise<void>
}

/** Tokens issued for one grant: the response body and what to record for a later revocation. */
export type IssuedTokens = {
  readonly body: TokenResponseBody
  readonly accessToken: IssuedAccessToken
  readonly refreshFamilyId?: string
  /** When everything issued has expired. */
  readonly expiresAt: number
}

// Rotated-out refresh tokens are indexed up to this many per family, so a client refreshing in a
// loop cannot grow its record without bound. Reuse detection does not depend on it: every refresh
// token names its family (below), so an old one is recognised however many rotations ago it was.
export const MAX_REMEMBERED_REFRESH_TOKENS = 64

const FAMILY_PREFIX = 'rf_'
const FAMILY_PART = 16
const REFRESH_TOKEN = /^[0-9A-Za-z]{48}$/

/**
 * A new refresh token of a family: the random part of the family id (not a secret on its own: it
 * only says which family to revoke when the token comes back), then 32 random characters.
 */
export function generateRefreshToken(familyId: string): string {
  return `${familyId.slice(FAMILY_PREFIX.length)}${generateOpaqueSecret()}`
}

/** The family a refresh token names, or `undefined` for a value of another shape. */
export function familyIdOfRefreshToken(value: string): string | undefined {
  return REFRESH_TOKEN.test(value) ? `${FAMILY_PREFIX}${value.slice(0, FAMILY_PART)}` : undefined
}

/** What a grant gives: the user, scopes and audience of the tokens issued from it. */
export type Grant = {
  readonly userId: string
  readonly scopes: readonly Scope[]
  readonly audience: readonly string[] | undefined
}

/**
 * Creates and saves an OAuth access token (`dao_`), without a refresh token; bound to the request's
 * DPoP key when it came with a proof (RFC 9449 §5).
 */
export async function issueAccessToken(
  context: GrantContext,
  grant: Grant,
): Promise<{ readonly value: string; readonly token: IssuedAccessToken }> {
  const { record, value } = createOAuthToken({
    userId: grant.userId,
    scopes: grant.scopes,
    ...(grant.audience !== undefined && { audience: grant.audience }),
    ...(context.client !== undefined && { clientId: context.client.id }),
    ...(context.dpopJkt !== undefined && { dpopJkt: context.dpopJkt }),
    now: context.now,
    ttlMs: context.accessTokenTtlMs,
  })
  await context.tokens.save(record)
  return { value, token: { id: record.id, expiresAt: record.expiresAt! } }
}

/** The §5.1 body of an access token, with a refresh token if there is one. */
export function tokenResponseBody(
  context: GrantContext,
  accessToken: string,
  scopes: readonly Scope[],
  refreshToken?: string,
): TokenResponseBody {
  return {
    access_token: accessToken,
    token_type: context.dpopJkt === undefined ? 'Bearer' : 'DPoP',
    expires_in: Math.floor(context.accessTokenTtlMs / 1000),
    scope: scopes.join(' '),
    ...(refreshToken !== undefined && { refresh_token: refreshToken }),
  }
}

/**
 * The key a refresh family is bound to (RFC 9449 §5): the proof's, for a public client. A
 * confidential client's refresh tokens are bound to its credentials instead, which lets it rotate
 * its DPoP key at a refresh.
 */
export function familyBinding(client: OAuthClient, dpopJkt: string | undefined): string | undefined {
  return client.secretHash === undefined ? dpopJkt : undefined
}

/**
 * Issues an access token for `audience` (the grant's, or the subset the token request named), and
 * for a registered offline client a refresh token starting a new family that keeps the grant's
 * whole audience (offline use needs a registered client; no client, no refresh).
 */
export async function issueTokens(
  context: GrantContext,
  grant: Grant,
  audience: readonly string[] | undefined,
): Promise<IssuedTokens> {
  const { userId, scopes } = grant
  const { value, token } = await issueAccessToken(context, { userId, scopes, audience })
  const client = context.client
  if (client === undefined || !client.offline) {
    return { body: tokenResponseBody(context, value, scopes), accessToken: token, expiresAt: token.expiresAt }
  }
  const familyId = generateFamilyId()
  const dpopJkt = familyBinding(client, context.dpopJkt)
  const refreshToken = generateRefreshToken(familyId)
  const refreshExpiresAt = context.now + context.refreshTokenTtlMs
  const expiresAt = Math.max(refreshExpiresAt, token.expiresAt)
  const family: RefreshFamilyRecord = {
    id: familyId,
    version: 0,
    clientId: client.id,
    userId,
    scopes,
    ...(grant.audience !== undefined && { audience: grant.audience }),
    tokenHashes: [hashSecret(refreshToken)],
    accessTokens: [token],
    createdAt: context.now,
    expiresAt: refreshExpiresAt,
    retainUntil: expiresAt,
    ...(dpopJkt !== undefined && { dpopJkt }),
  }
  try {
    await context.state.saveRefreshFamily(family)
  } catch (error) {
    // Nothing may stay usable from a grant that failed half way.
    await revokeAccessTokens(context.tokens, [token.id], context.now)
    throw error
  }
  return {
    body: tokenResponseBody(context, value, scopes, refreshToken),
    accessToken: token,
    refreshFamilyId: family.id,
    expiresAt,
  }
}

/** Revokes access tokens by id; unknown and already revoked ones are skipped. */
export async function revokeAccessTokens(
  tokens: TokenStore,
  ids: readonly string[],
  now: number,
): Promise<void> {
  for (const id of ids) {
    const record = await tokens.findById(id)
    if (record !== undefined && record.revokedAt === undefined) await tokens.update(revokeToken(record, now))
  }
}

/** Revokes a refresh-token family (its refresh token can no longer rotate) and every access token it issued. */
export async function revokeRefreshFamily(
  context: Pick<GrantContext, 'state' | 'tokens' | 'now'>,
  familyId: string,
): Promise<void> {
  const { state, now } = context
  const family = await updateRecord(
    () => state.findRefreshFamily(familyId, now),
    (next) => state.replaceRefreshFamily(next),
    (current) => {
      if (current === undefined || current.revokedAt !== undefined) return { result: current }
      const next: RefreshFamilyRecord = { ...current, version: current.version + 1, revokedAt: now }
      return { result: next, next }
    },
  )
  if (family !== undefined) {
    await revokeAccessTokens(
      context.tokens,
      family.accessTokens.map((token) => token.id),
      now,
    )
  }
}
