/**
 * The DPoP half of authentication (RFC 9449 §7): the `DPoP` scheme of the `Authorization` header,
 * the URL a proof must name, and the denials of DPoP-bound tokens. Only requests that carry the
 * `DPoP` scheme, or a bound token, come here: the bearer path pays nothing for it.
 */
import { type Deny, deny } from '../decisions/decision.js'
import { type DpopProofRequest, verifyDpopProof } from '../dpop/dpop-proof.js'
import type { DpopNonces } from '../dpop/nonces.js'
import type { DpopReplayCache } from '../dpop/replay-cache.js'
import { DpopProofError } from '../errors.js'
import { type BearerCredentials, NONE, parseSchemeToken } from './bearer.js'
import { errorDescription } from './http-denial.js'

/** How a policy checks DPoP proofs: compiled once from its `dpop` option. Internal to the package. */
export interface DpopCheck {
  readonly algorithms: readonly string[]
  readonly maxAgeSeconds: number
  readonly leewaySeconds: number
  readonly replayCache: DpopReplayCache
  readonly nonces?: DpopNonces | undefined
  /**
   * What a request's path is appended to for its public URL (`https://data.example.org`, or with the
   * prefix a proxy strips), when the host declared one; `null` when its declared one is unusable
   * (a function's bad answer), which refuses the proof rather than trusting `Host`.
   */
  readonly base: () => string | undefined | null
}

/** What the `DPoP` scheme of one `Authorization` value carries: what the `Bearer` one does. */
export type DpopCredentials = BearerCredentials

/**
 * Parses one `Authorization` value for the `DPoP` scheme (RFC 9449 §7.1): `DPoP` in any case, one
 * or more SP, a token68 and nothing else. Any other scheme is `none`.
 *
 * @example
 * parseDpopHeader('DPoP dao_…') // { kind: 'token', token: 'dao_…' }
 * parseDpopHeader('Bearer dao_…') // { kind: 'none' }
 */
export function parseDpopHeader(value: string): DpopCredentials {
  // A value a store or adapter handed over that is not a string carries no DPoP credentials.
  return typeof value === 'string' ? parseSchemeToken(value, 'dpop') : NONE
}

/** The request facts a proof is checked against, as an adapter read them. */
export interface DpopRequestFacts {
  readonly dpop?: readonly string[] | undefined
  readonly method?: string | undefined
  readonly protocol?: string | undefined
  readonly host?: string | undefined
  readonly target?: string | undefined
}

/**
 * The absolute URL of the request, as a proof's `htu` must name it: the policy's public URL when
 * it has one (`dpop.publicUrl`, or its `resource`'s origin), else the scheme the trusted-proxy
 * handling resolved and the `Host` header; then the request's path. `undefined` when it cannot be told.
 *
 * @example
 * requestUrlOf({ protocol: 'http', host: 'evil.example', target: '/api/v1/datasets?x=1' }, 'https://data.example.org')
 * // 'https://data.example.org/api/v1/datasets?x=1'
 */
export function requestUrlOf(facts: DpopRequestFacts, base: string | undefined): string | undefined {
  const target = facts.target
  if (typeof target !== 'string' || target.length === 0) return undefined
  let path = target
  let host = facts.host
  if (!target.startsWith('/')) {
    // An absolute target (a proxy-style request line, or a runtime that hands over the full URL).
    if (!URL.canParse(target)) return undefined
    const url = new URL(target)
    path = `${url.pathname}${url.search}`
    host ??= url.host
  }
  if (base !== undefined) return `${base}${path}`
  if (host === undefined || host === '' || facts.protocol === undefined) return undefined
  return `${facts.protocol}://${host}${path}`
}

/** A DPoP-scheme denial: its challenge is `DPoP …, algs="…"`. */
export function dpopDenial(code: 'invalid_token' | 'invalid_dpop_proof', description: string): Deny {
  return Object.freeze({ ...deny(code), scheme: 'DPoP', description })
}

/** A bound token sent as `Bearer`: the client is told to use its key. */
export const BOUND_AS_BEARER: Deny = dpopDenial(
  'invalid_token',
  'the token is bound to a DPoP key: send it with the DPoP scheme and a proof',
)
/** An unbound token sent with the `DPoP` scheme. */
export const NOT_BOUND: Deny = dpopDenial(
  'invalid_token',
  'the token is not bound to a DPoP key: send it with the Bearer scheme',
)
/** A bound token without a proof. */
export const NO_PROOF: Deny = dpopDenial('invalid_token', 'the DPoP-bound token came without a DPoP proof')
const TWO_PROOFS = dpopDenial('invalid_dpop_proof', 'more than one DPoP header')
const NO_URL = dpopDenial('invalid_dpop_proof', 'the request URL cannot be resolved')
/** `DPoP` without a check configured (authenticateRequest called without `dpop`). */
export const NOT_CHECKED: Deny = dpopDenial('invalid_token', 'this resource does not check DPoP proofs')

// A proof's claims are the client's text and may carry anything: its description keeps to the
// grammar, and short.
function printable(message: string): string {
  const text = errorDescription(message)
  return text.length > 200 ? `${text.slice(0, 197)}...` : text
}

/**
 * Verifies the one proof of a request for a token bound to `jkt`, and answers undefined when it is
 * good, or the denial. A failing replay cache rejects, with its own error (the caller's 503).
 */
export function checkDpopProof(
  facts: DpopRequestFacts,
  token: string,
  jkt: string,
  check: DpopCheck,
  now: number,
): Deny | Promise<Deny | undefined> {
  const proofs = facts.dpop ?? []
  if (proofs.length === 0) return NO_PROOF
  if (proofs.length > 1) return TWO_PROOFS
  const base = check.base()
  const url = base === null ? undefined : requestUrlOf(facts, base)
  if (url === undefined || typeof facts.method !== 'string') return NO_URL
  const request: DpopProofRequest = { method: facts.method, url, accessToken: token, jkt }
  const nonces = check.nonces
  return verifyDpopProof(proofs[0]!, request, {
    algorithms: check.algorithms,
    now,
    maxAgeSeconds: check.maxAgeSeconds,
    leewaySeconds: check.leewaySeconds,
    replayCache: check.replayCache,
    ...(nonces !== undefined && { acceptNonce: (nonce: string | undefined) => nonces.accepts(nonce, now) }),
  }).then(
    () => undefined,
    (error: unknown) => {
      if (!(error instanceof DpopProofError)) throw error
      if (error.error === 'invalid_dpop_proof')
        return dpopDenial('invalid_dpop_proof', printable(error.message))
      return Object.freeze({
        ...deny('use_dpop_nonce'),
        scheme: 'DPoP' as const,
        description: 'the proof must carry the server nonce of DPoP-Nonce',
        dpopNonce: nonces!.current(now),
      })
    },
  )
}
