import {
  type GrantContext,
  issueTokens,
  revokeAccessTokens,
  revokeRefreshFamily,
  type TokenResponseBody,
} from './issue-tokens.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import type { AuthorizationCodeRecord } from './oauth-state-records.js'
import { readCodeVerifier } from './pkce-syntax.js'
import { hashSecret } from './random-secret.js'
import { narrowAudience, readRequestedResources } from './resource-indicators.js'
import { requireBoundKey } from './token-endpoint-dpop.js'
import { updateRecord } from './update-record.js'
import { requireMatchingVerifier } from './verify-pkce.js'

// Private grant handler of the token endpoint; see handleTokenRequest.

type Consumed =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'unclaimed' }
  | { readonly kind: 'fresh'; readonly code: AuthorizationCodeRecord }
  | { readonly kind: 'reused'; readonly code: AuthorizationCodeRecord }

function invalidGrant(description: string): OAuthError {
  return new OAuthError('invalid_grant', description)
}

// A code this request may redeem: its DPoP proof is claimed before the code is consumed, and only
// then, so that a request naming no such code leaves nothing in the replay cache.
function redeemableBy(context: GrantContext, code: AuthorizationCodeRecord): boolean {
  return context.now < code.expiresAt && code.clientId === context.client?.id
}

// Marks the code redeemed, or, when it already was, marks it reused: one compare-and-set, so of two
// concurrent redemptions exactly one is fresh. A code this request may redeem is left untouched
// (`unclaimed`) until the request's proof is claimed; one it may not is consumed all the same.
function consume(context: GrantContext, hash: string, claimed: boolean): Promise<Consumed> {
  const { state, now } = context
  // A redeemed code is kept until what it may issue has expired, so that a reuse can still revoke it.
  const retainFor = Math.max(
    context.accessTokenTtlMs,
    context.client?.offline ? context.refreshTokenTtlMs : 0,
  )
  return updateRecord<AuthorizationCodeRecord, Consumed>(
    () => state.findAuthorizationCode(hash, now),
    (next) => state.replaceAuthorizationCode(next),
    (code) => {
      if (code === undefined) return { result: { kind: 'unknown' } }
      if (code.redeemedAt !== undefined) {
        if (code.reusedAt !== undefined) return { result: { kind: 'reused', code } }
        return {
          result: { kind: 'reused', code },
          next: { ...code, version: code.version + 1, reusedAt: now },
        }
      }
      if (!claimed && redeemableBy(context, code)) return { result: { kind: 'unclaimed' } }
      const next = {
        ...code,
        version: code.version + 1,
        redeemedAt: now,
        retainUntil: Math.max(code.retainUntil, now + retainFor),
      }
      return { result: { kind: 'fresh', code }, next }
    },
  )
}

// Records on the code what it issued. `false` when the code was reused meanwhile: the caller must
// then revoke what it just issued, since the reuse could not see it.
function recordIssued(
  context: GrantContext,
  hash: string,
  tokenId: string,
  familyId: string | undefined,
  expiresAt: number,
): Promise<boolean> {
  const { state, now } = context
  return updateRecord<AuthorizationCodeRecord, boolean>(
    () => state.findAuthorizationCode(hash, now),
    (next) => state.replaceAuthorizationCode(next),
    (code) => {
      if (code === undefined || code.reusedAt !== undefined) return { result: false }
      const next: AuthorizationCodeRecord = {
        ...code,
        version: code.version + 1,
        issuedTokenIds: [...code.issuedTokenIds, tokenId],
        ...(familyId !== undefined && { refreshFamilyId: familyId }),
        retainUntil: Math.max(code.retainUntil, expiresAt),
      }
      return { result: true, next }
    },
  )
}

async function revokeIssuedBy(context: GrantContext, code: AuthorizationCodeRecord): Promise<void> {
  await revokeAccessTokens(context.tokens, code.issuedTokenIds, context.now)
  if (code.refreshFamilyId !== undefined) await revokeRefreshFamily(context, code.refreshFamilyId)
}

// Consumes the code, claiming the request's DPoP proof first when the code is one it may redeem: a
// replayed proof is refused with the code still unused. Twice at most: once claimed, a code is
// never `unclaimed`.
async function consumeClaimed(
  context: GrantContext,
  hash: string,
): Promise<Exclude<Consumed, { readonly kind: 'unclaimed' }>> {
  for (let claimed = false; ; claimed = true) {
    const consumed = await consume(context, hash, claimed)
    if (consumed.kind !== 'unclaimed') return consumed
    await context.claimDpopProof()
  }
}

function checkBindings(
  context: GrantContext,
  code: AuthorizationCodeRecord,
  params: OAuthParams,
  verifier: string | undefined,
): void {
  if (!(context.now < code.expiresAt)) throw invalidGrant('the authorization code has expired')
  if (code.clientId !== context.client?.id)
    throw invalidGrant('the authorization code was issued to another client')
  if (readParam(params, 'redirect_uri') !== code.redirectUri) {
    throw invalidGrant('redirect_uri differs from the authorization request')
  }
  requireMatchingVerifier(verifier, code.codeChallenge)
  // RFC 9449 §10: a code requested with dpop_jkt is redeemed only with a proof by that key.
  requireBoundKey(code.dpopJkt, context.dpopJkt, 'the authorization code')
}

/**
 * The `authorization_code` grant (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6). The code is consumed by the
 * first attempt that names it, whatever the outcome: the client, redirect URI and verifier are
 * checked afterwards, so a code never survives a failed attempt. The one exception is the DPoP
 * proof's replay check, made when the code is found good for the client and before it is consumed:
 * a replayed proof (or a replay cache that fails) leaves the code unused. A reused code is `invalid_grant`
 * and revokes every token it issued (RFC 6749 §4.1.2). `resource` may narrow the token's audience
 * to part of what the code grants (RFC 8707 §2.2); naming anything else is `invalid_target`.
 */
export async function redeemAuthorizationCode(
  context: GrantContext,
  params: OAuthParams,
): Promise<TokenResponseBody> {
  const value = readParam(params, 'code')
  if (value === undefined) throw new OAuthError('invalid_request', 'code is required')
  const verifier = readCodeVerifier(params)
  // Read now, so that a repeated parameter or an unknown resource is refused before the code is consumed.
  readParam(params, 'redirect_uri')
  readRequestedResources(params, context.resources)
  const hash = hashSecret(value)
  const consumed = await consumeClaimed(context, hash)
  if (consumed.kind === 'unknown') throw invalidGrant('unknown authorization code')
  if (consumed.kind === 'reused') {
    await revokeIssuedBy(context, consumed.code)
    throw invalidGrant('the authorization code was already used; the tokens it issued are revoked')
  }
  const code = consumed.code
  checkBindings(context, code, params, verifier)
  // RFC 8707 §2.2: the token may be for fewer resources than the user approved, never more.
  const audience = narrowAudience(params, context.resources, code.audience)
  const issued = await issueTokens(
    context,
    { userId: code.userId, scopes: code.scopes, audience: code.audience },
    audience,
  )
  if (!(await recordIssued(context, hash, issued.accessToken.id, issued.refreshFamilyId, issued.expiresAt))) {
    await revokeAccessTokens(context.tokens, [issued.accessToken.id], context.now)
    if (issued.refreshFamilyId !== undefined) await revokeRefreshFamily(context, issued.refreshFamilyId)
    throw invalidGrant('the authorization code was used again while it was redeemed')
  }
  return issued.body
}
