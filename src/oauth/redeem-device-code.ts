import { type GrantContext, issueTokens, type TokenResponseBody } from './issue-tokens.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import type { DeviceGrantRecord } from './oauth-state-records.js'
import { readCodeVerifier } from './pkce-syntax.js'
import { type DevicePollAnswer, pollDeviceGrant } from './poll-device-grant.js'
import { hashSecret } from './random-secret.js'
import { narrowAudience } from './resource-indicators.js'
import { updateRecord } from './update-record.js'
import { requireMatchingVerifier } from './verify-pkce.js'

// Private grant handler of the token endpoint; see handleTokenRequest.

const DESCRIPTIONS: Readonly<Record<Exclude<DevicePollAnswer, 'issue'>, string>> = {
  authorization_pending: 'the user has not yet approved the request',
  slow_down: 'polling too fast; the interval is now 5 seconds longer',
  access_denied: 'the user denied the request',
  expired_token: 'the device code has expired; start a new device authorization',
  invalid_grant: 'the device code was already redeemed',
}

// Checked inside the compare-and-set, before the grant is marked redeemed: a poll that fails them
// changes nothing, and a `resource` outside the grant's audience issues nothing (RFC 8707 §2.2).
function checkBindings(
  context: GrantContext,
  grant: DeviceGrantRecord,
  verifier: string | undefined,
  params: OAuthParams,
): readonly string[] | undefined {
  if (grant.clientId !== context.client?.id) {
    throw new OAuthError('invalid_grant', 'the device code was issued to another client')
  }
  requireMatchingVerifier(verifier, grant.codeChallenge)
  return narrowAudience(params, context.resources, grant.audience)
}

type PollOutcome =
  | { readonly answer: 'claim' }
  | {
      readonly answer: DevicePollAnswer
      readonly grant: DeviceGrantRecord
      readonly audience: readonly string[] | undefined
    }

// One poll, applied by compare-and-set. A poll that would redeem the grant before the request's
// DPoP proof is claimed changes nothing and answers `claim`.
function poll(
  context: GrantContext,
  hash: string,
  verifier: string | undefined,
  params: OAuthParams,
  claimed: boolean,
): Promise<PollOutcome | undefined> {
  const { state, now } = context
  return updateRecord<DeviceGrantRecord, PollOutcome | undefined>(
    () => state.findDeviceGrant(hash, now),
    (next) => state.replaceDeviceGrant(next),
    (grant) => {
      if (grant === undefined) return { result: undefined }
      const audience = checkBindings(context, grant, verifier, params)
      const { answer, next } = pollDeviceGrant(grant, now)
      if (answer === 'issue' && !claimed) return { result: { answer: 'claim' } }
      const result = { answer, grant, audience }
      return next === undefined ? { result } : { result, next }
    },
  )
}

// Polls, claiming the request's DPoP proof first when the poll would redeem the grant: a replayed
// proof leaves it approved, and pending polls leave nothing in the replay cache. Twice at most:
// once claimed, a poll never answers `claim`.
async function pollClaimed(
  context: GrantContext,
  hash: string,
  verifier: string | undefined,
  params: OAuthParams,
): Promise<Exclude<PollOutcome, { readonly answer: 'claim' }> | undefined> {
  for (let claimed = false; ; claimed = true) {
    const outcome = await poll(context, hash, verifier, params, claimed)
    if (outcome?.answer !== 'claim') return outcome
    await context.claimDpopProof()
  }
}

/**
 * The device-code grant (RFC 8628 §3.4–3.5, with the contract's PKCE). Every poll proves possession
 * of the verifier first, so a stolen device code alone learns nothing and changes nothing; then
 * {@link pollDeviceGrant} decides, applied by compare-and-set so that the code redeems once.
 */
export async function redeemDeviceCode(
  context: GrantContext,
  params: OAuthParams,
): Promise<TokenResponseBody> {
  const deviceCode = readParam(params, 'device_code')
  if (deviceCode === undefined) throw new OAuthError('invalid_request', 'device_code is required')
  const verifier = readCodeVerifier(params)
  const hash = hashSecret(deviceCode)
  const outcome = await pollClaimed(context, hash, verifier, params)
  if (outcome === undefined) throw new OAuthError('invalid_grant', 'unknown device code')
  const { answer, grant, audience } = outcome
  if (answer !== 'issue') throw new OAuthError(answer, DESCRIPTIONS[answer])
  // An approved grant always names the user who approved it.
  const issued = await issueTokens(
    context,
    { userId: grant.userId!, scopes: grant.scopes, audience: grant.audience },
    audience,
  )
  return issued.body
}
