import { parseScopes, type Scope } from '../decisions/scopes.js'
import {
  familyBinding,
  familyIdOfRefreshToken,
  type GrantContext,
  generateRefreshToken,
  issueAccessToken,
  MAX_REMEMBERED_REFRESH_TOKENS,
  revokeAccessTokens,
  revokeRefreshFamily,
  type TokenResponseBody,
  tokenResponseBody,
} from './issue-tokens.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import type { IssuedAccessToken, RefreshFamilyRecord } from './oauth-state-records.js'
import { hashSecret } from './random-secret.js'
import { parseRequestedScopes } from './requested-scopes.js'
import { narrowAudience } from './resource-indicators.js'
import { requireBoundKey } from './token-endpoint-dpop.js'
import { updateRecord } from './update-record.js'

// Private grant handler of the token endpoint; see handleTokenRequest.

type Rotation = 'rotated' | 'reused' | 'revoked' | 'expired' | 'unknown'

function invalidGrant(description: string): OAuthError {
  return new OAuthError('invalid_grant', description)
}

// RFC 6749 §6: a refresh may narrow the scopes, never widen them (implied scopes count as granted).
function narrowScopes(family: RefreshFamilyRecord, scope: string | undefined): readonly Scope[] {
  if (scope === undefined) return family.scopes
  const requested = parseRequestedScopes(scope).granted
  const granted = parseScopes(family.scopes)
  const extra = requested.find((name) => !granted.has(name))
  if (extra !== undefined) throw new OAuthError('invalid_scope', `scope ${extra} was not granted`)
  return requested
}

// The rule of one refresh: revoked, then reused (an earlier token of the family: revoke it all,
// RFC 9700 §4.14.2), then expired, else rotate to `newHash`, remembering the access token issued.
function rotate(
  family: RefreshFamilyRecord | undefined,
  hash: string,
  now: number,
  rotation?: {
    readonly newHash: string
    readonly token: IssuedAccessToken
    readonly ttlMs: number
    readonly dpopJkt: string | undefined
  },
): { readonly result: Rotation; readonly next?: RefreshFamilyRecord } {
  if (family === undefined) return { result: 'unknown' }
  if (family.revokedAt !== undefined) return { result: 'revoked' }
  const version = family.version + 1
  if (family.tokenHashes.at(-1) !== hash)
    return { result: 'reused', next: { ...family, version, revokedAt: now } }
  if (!(now < family.expiresAt)) return { result: 'expired' }
  if (rotation === undefined) return { result: 'rotated' }
  const expiresAt = now + rotation.ttlMs
  const accessTokens = [...family.accessTokens.filter((token) => now < token.expiresAt), rotation.token]
  const next: RefreshFamilyRecord = {
    ...family,
    version,
    tokenHashes: [...family.tokenHashes, rotation.newHash].slice(-MAX_REMEMBERED_REFRESH_TOKENS),
    accessTokens,
    expiresAt,
    retainUntil: Math.max(expiresAt, ...accessTokens.map((token) => token.expiresAt)),
    ...(rotation.dpopJkt !== undefined && { dpopJkt: rotation.dpopJkt }),
  }
  return { result: 'rotated', next }
}

const FAILURES: Readonly<Record<Exclude<Rotation, 'rotated'>, string>> = {
  unknown: 'unknown refresh token',
  revoked: 'the refresh token was revoked',
  reused: 'the refresh token was already used; its family is revoked',
  expired: 'the refresh token has expired',
}

async function failRotation(context: GrantContext, result: Exclude<Rotation, 'rotated'>, familyId: string) {
  // The family's compare-and-set recorded the revocation; the access tokens it issued go too.
  if (result === 'reused') await revokeRefreshFamily(context, familyId)
  return invalidGrant(FAILURES[result])
}

/**
 * The `refresh_token` grant (RFC 6749 §6) for registered offline clients, with rotation: each refresh
 * token works once and is replaced; presenting a rotated one revokes the whole family and every
 * access token it issued (RFC 9700 §4.14.2). `scope` and `resource` may narrow the new access
 * token's scopes and audience, never widen them (`invalid_scope`, `invalid_target`). A family bound
 * to a DPoP key refreshes only with a proof by it (`invalid_dpop_proof`, nothing rotated); an unbound
 * one refreshed with a proof gets a bound access token, and a public client's family is bound from
 * then on (RFC 9449 §5).
 */
export async function refreshAccessToken(
  context: GrantContext,
  params: OAuthParams,
): Promise<TokenResponseBody> {
  const client = context.client
  const value = readParam(params, 'refresh_token')
  if (value === undefined) throw new OAuthError('invalid_request', 'refresh_token is required')
  const scope = readParam(params, 'scope')
  // No client_id at all: what the client must fix is its authentication (RFC 6749 §6 requires it
  // for a refresh), so it hears invalid_client, not that it may not refresh.
  if (client === undefined) {
    throw new OAuthError('invalid_client', 'client authentication is required to refresh a token')
  }
  if (!client.offline) {
    throw new OAuthError('unauthorized_client', 'only registered clients with offline access refresh tokens')
  }
  const { state, now } = context
  const hash = hashSecret(value)
  // A token rotated out long ago is no longer indexed, but it still names its family: finding the
  // family that way makes it a reuse, which revokes the family for as long as the family lives.
  const familyId = familyIdOfRefreshToken(value)
  const family =
    (await state.findRefreshFamilyByTokenHash(hash, now)) ??
    (familyId === undefined ? undefined : await state.findRefreshFamily(familyId, now))
  if (family === undefined) throw invalidGrant(FAILURES.unknown)
  if (family.clientId !== client.id) throw invalidGrant('the refresh token was issued to another client')
  // RFC 9449 §5: a bound family refreshes only with a proof by its key; nothing changes otherwise.
  requireBoundKey(family.dpopJkt, context.dpopJkt, 'the refresh token')
  const scopes = narrowScopes(family, scope)
  // RFC 8707 §2.2: the new token may be for part of the family's audience; the family keeps it all.
  const audience = narrowAudience(params, context.resources, family.audience)
  // Check before issuing anything, so that a dead refresh token creates no access token.
  const precheck = rotate(family, hash, now)
  if (precheck.result !== 'rotated') throw await failRotation(context, precheck.result, family.id)
  // The family is good for this client: only now is the proof recorded as used (a replay is
  // refused with nothing rotated), so a refused refresh takes no room in the replay cache.
  await context.claimDpopProof()

  // The new access token is saved before the rotation is recorded: a concurrent reuse that revokes
  // the family then finds it, and if the rotation loses, it is revoked here.
  const { value: accessToken, token } = await issueAccessToken(context, {
    userId: family.userId,
    scopes,
    audience,
  })
  const refreshToken = generateRefreshToken(family.id)
  const newHash = hashSecret(refreshToken)
  // A public client's unbound family that refreshes with a proof is bound from now on: the refresh
  // token issued here was requested with a proof (RFC 9449 §5). A bound one keeps its key.
  const dpopJkt = family.dpopJkt ?? familyBinding(client, context.dpopJkt)
  const rotation = { newHash, token, ttlMs: context.refreshTokenTtlMs, dpopJkt }
  const result = await updateRecord<RefreshFamilyRecord, Rotation>(
    () => state.findRefreshFamily(family.id, now),
    (next) => state.replaceRefreshFamily(next),
    (current) => rotate(current, hash, now, rotation),
  )
  if (result !== 'rotated') {
    await revokeAccessTokens(context.tokens, [token.id], now)
    throw await failRotation(context, result, family.id)
  }
  return tokenResponseBody(context, accessToken, scopes, refreshToken)
}
