import { claimDpopProof, verifyDpopProof } from '../dpop/dpop-proof.js'
import { htuOf } from '../dpop/htu.js'
import { MAX_DPOP_PROOF_LEEWAY_SECONDS, MAX_DPOP_PROOF_MAX_AGE_SECONDS } from '../dpop/proof-window.js'
import type { DpopReplayCache } from '../dpop/replay-cache.js'
import { ConfigError, DpopProofError } from '../errors.js'
import type { OAuthClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'

/**
 * How the token endpoint checks DPoP proofs (RFC 9449 §5). Without it the endpoint does not
 * support DPoP: a `DPoP` header is ignored and every token is a bearer token.
 *
 * @example
 * const dpop: TokenEndpointDpopOptions = {
 *   url: 'https://data.example.org/oauth/token',
 *   replayCache: new MemoryDpopReplayCache(),
 * }
 */
export type TokenEndpointDpopOptions = {
  /**
   * The token endpoint's URL exactly as the issuer publishes it (`token_endpoint` of its RFC 8414
   * metadata): every proof's `htu` must be it. Never build it from the request's `Host` header,
   * which the client chooses.
   */
  readonly url: string
  /** Where used proofs are remembered, shared by every instance; its failure is a 503. */
  readonly replayCache: DpopReplayCache
  /** The allowed proof algorithms; `DPOP_ALGORITHMS` by default (publish the same list). */
  readonly algorithms?: readonly string[]
  /** The acceptance window after a proof's `iat`, in seconds (1–3600); 300 by default. */
  readonly maxAgeSeconds?: number
  /** How far ahead of the clock an `iat` may be, in seconds (0–300); 30 by default. */
  readonly leewaySeconds?: number
}

/** Checks the options once per request, so that a misconfigured host fails loudly, not open. */
export function requireDpopOptions(dpop: TokenEndpointDpopOptions | undefined): void {
  if (dpop === undefined) return
  if (typeof dpop.url !== 'string' || htuOf(dpop.url) !== dpop.url) {
    throw new ConfigError(
      ['dpop', 'url'],
      `must be the token endpoint's absolute http(s) URL without query or fragment, got ${JSON.stringify(dpop.url)}`,
    )
  }
  if (typeof dpop.replayCache?.claim !== 'function') {
    throw new ConfigError(['dpop', 'replayCache'], 'must be a DpopReplayCache (an object with claim)')
  }
  // Bounded like the policy's: a replay cache may cap what it remembers at the longest window.
  requireSeconds('maxAgeSeconds', dpop.maxAgeSeconds, 1, MAX_DPOP_PROOF_MAX_AGE_SECONDS)
  requireSeconds('leewaySeconds', dpop.leewaySeconds, 0, MAX_DPOP_PROOF_LEEWAY_SECONDS)
}

function requireSeconds(name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined || (Number.isSafeInteger(value) && value >= min && value <= max)) return
  throw new ConfigError(['dpop', name], `must be an integer of ${min}-${max} seconds, got ${String(value)}`)
}

/** The request's verified DPoP proof at the token endpoint, not yet recorded as used. */
export type TokenRequestProof = {
  /** The RFC 7638 thumbprint of the proof's key. */
  readonly jkt: string
  /**
   * Records the proof as used, refusing a replay (`invalid_dpop_proof`, 400) or answering
   * `temporarily_unavailable` (503) when the replay cache fails. A grant calls it once it has found
   * the grant good for the client, before it consumes the grant or issues anything: a request
   * refused for its grant then leaves nothing in the shared cache, which anyone could otherwise
   * fill with fresh proofs from fresh keys.
   */
  readonly claim: () => Promise<void>
}

/**
 * Verifies the request's DPoP proof (RFC 9449 §4.3) as the token endpoint sees it: one `DPoP`
 * header, `htm` `POST`, `htu` the published token endpoint URL, no access token (so no `ath`
 * check). Answers the proof, or `undefined` when the request has no proof or the endpoint does not
 * support DPoP. A bad proof is `invalid_dpop_proof` (400, §5). The replay check is the answer's
 * `claim`, left to the grant: nothing is issued on a proof not claimed.
 */
export async function verifyTokenRequestProof(
  proofs: readonly string[] | undefined,
  dpop: TokenEndpointDpopOptions | undefined,
  now: number,
): Promise<TokenRequestProof | undefined> {
  if (dpop === undefined || proofs === undefined || proofs.length === 0) return undefined
  if (proofs.length > 1) throw new OAuthError('invalid_dpop_proof', 'send at most one DPoP header')
  const window = {
    ...(dpop.maxAgeSeconds !== undefined && { maxAgeSeconds: dpop.maxAgeSeconds }),
    ...(dpop.leewaySeconds !== undefined && { leewaySeconds: dpop.leewaySeconds }),
  }
  const verified = await asOAuthError(() =>
    verifyDpopProof(
      proofs[0]!,
      { method: 'POST', url: dpop.url },
      { now, ...window, ...(dpop.algorithms !== undefined && { algorithms: dpop.algorithms }) },
    ),
  )
  return {
    jkt: verified.jkt,
    claim: () => asOAuthError(() => claimDpopProof(verified, dpop.replayCache, window)),
  }
}

async function asOAuthError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof DpopProofError) throw new OAuthError(error.error, error.message, { cause: error })
    throw new OAuthError('temporarily_unavailable', 'the DPoP replay cache is unavailable; try again later', {
      status: 503,
      cause: error,
    })
  }
}

/** A client registered with `dpopBound` sends a proof with every token request. */
export function requireClientProof(client: OAuthClient | undefined, jkt: string | undefined): void {
  if (client?.dpopBound === true && jkt === undefined) {
    throw new OAuthError(
      'invalid_dpop_proof',
      `client ${client.id} is registered for DPoP: every token request needs a DPoP proof`,
    )
  }
}

/**
 * When a grant is bound to a key (`expected`), the request's proof must be signed by it (RFC 9449
 * §5 for refresh tokens, §10 for `dpop_jkt`); `what` names the grant in the description.
 */
export function requireBoundKey(expected: string | undefined, jkt: string | undefined, what: string): void {
  if (expected === undefined) return
  if (jkt === undefined) {
    throw new OAuthError(
      'invalid_dpop_proof',
      `${what} is bound to a DPoP key: send a DPoP proof signed by it`,
    )
  }
  if (jkt !== expected) {
    throw new OAuthError(
      'invalid_dpop_proof',
      `the DPoP proof is signed by another key than ${what} is bound to`,
    )
  }
}
