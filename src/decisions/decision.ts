import type { Operation } from './operations.js'
import type { Scope } from './scopes.js'

/**
 * The stable reason of a denial, a closed union.
 *
 * - `invalid_request` (400): a malformed `Authorization` header, two of them, or a token sent twice.
 * - `missing_token` (401): no bearer credentials at all.
 * - `invalid_token` (401): malformed, unknown, expired or revoked token; a DPoP-bound token sent as
 *   `Bearer` or without a proof, or an unbound token sent with the `DPoP` scheme (RFC 9449).
 * - `invalid_dpop_proof` (401): the `DPoP` proof that came with a DPoP-bound token fails a check of
 *   RFC 9449 §4.3 (two proofs, signature, `htm`, `htu`, `iat`, `ath`, key, replay).
 * - `use_dpop_nonce` (401): server nonces are on and the proof lacks the current one (RFC 9449 §8);
 *   `dpopNonce` is the nonce to use.
 * - `https_required` (403): plain HTTP from a non-loopback client.
 * - `insufficient_scope` (403): the user could do it, with a wider token scope.
 * - `insufficient_access` (403): the user's own access falls short, whatever the scopes.
 * - `export_restricted` (403): the dataset's export restrictions forbid this data transfer.
 * - `invalid_input` (403): an operation, resource description or principal the policy cannot evaluate.
 * - `not_found` (404): the resource does not exist, or the caller may not learn that it does.
 * - `rate_limited` (429): the token store refused to look up more unknown tokens from the client's
 *   network for now (an introspecting store's miss budget); `retryAfter` says when to try again.
 * - `service_unavailable` (503): a token store or resource lookup failed or timed out.
 */
export type DenyCode =
  | 'invalid_request'
  | 'missing_token'
  | 'invalid_token'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'https_required'
  | 'insufficient_scope'
  | 'insufficient_access'
  | 'export_restricted'
  | 'invalid_input'
  | 'not_found'
  | 'rate_limited'
  | 'service_unavailable'

/** The HTTP status of each denial code. */
export const DENY_STATUS = {
  invalid_request: 400,
  missing_token: 401,
  invalid_token: 401,
  invalid_dpop_proof: 401,
  use_dpop_nonce: 401,
  https_required: 403,
  insufficient_scope: 403,
  insufficient_access: 403,
  export_restricted: 403,
  invalid_input: 403,
  not_found: 404,
  rate_limited: 429,
  service_unavailable: 503,
} as const satisfies Record<DenyCode, number>

/** A status a denial can carry. */
export type DenyStatus = (typeof DENY_STATUS)[DenyCode]

/** The public message of each status; the same text for every denial of that status. */
export const STATUS_MESSAGES = {
  400: 'Bad request',
  401: 'Invalid credentials',
  403: 'Not authorized',
  404: 'Not found',
  429: 'Too many requests',
  503: 'Service unavailable',
} as const satisfies Record<DenyStatus, string>

/** Size caps that still apply to an allowed data-content response. */
export interface ExportLimits {
  /** Most bytes the response body may carry. */
  readonly maxBytes?: number
  /** Most records (table rows) the response may carry. */
  readonly maxRecords?: number
}

/** The policy allowed the request. */
export interface Allow {
  readonly allowed: true
  /** The operation that was allowed, when the decision was about one. */
  readonly operation?: Operation
  /** True when the response carries data content and must stay within `limits`. */
  readonly dataContent: boolean
  /** Caps to enforce on the response (declared size first, then a streaming meter). */
  readonly limits?: ExportLimits
}

/** The policy denied the request. */
export interface Deny {
  readonly allowed: false
  /** The HTTP status to answer with. */
  readonly status: DenyStatus
  /** The stable reason. */
  readonly code: DenyCode
  /** The public message for the status; never details that would help an attacker. */
  readonly message: string
  /**
   * For `insufficient_scope`: the narrowest scope that would have sufficed. For a 401 on a route
   * that names its operation: the route's minimal scope, which the challenge announces (RFC 6750 §3).
   */
  readonly scope?: Scope
  /**
   * A sentence for the challenge's `error_description` where it helps the client choose what to do
   * next ("the token is for another resource"); never a secret nor a detail of the data.
   */
  readonly description?: string
  /** For `rate_limited`: whole seconds after which the client may try again (`Retry-After`). */
  readonly retryAfter?: number
  /**
   * The scheme of the challenge: `DPoP` for a refusal about a DPoP-bound token or its proof
   * (RFC 9449 §7.1), whose challenge then names the accepted proof algorithms. Absent: `Bearer`.
   */
  readonly scheme?: 'DPoP'
  /** For `use_dpop_nonce`: the server nonce the client must put in its next proof (`DPoP-Nonce`). */
  readonly dpopNonce?: string
}

/** The core's answer to "may this principal do this?". */
export type Decision = Allow | Deny

function createDenial(code: DenyCode, scope: Scope | undefined): Deny {
  const status = DENY_STATUS[code]
  const decision: Deny =
    scope === undefined
      ? { allowed: false, status, code, message: STATUS_MESSAGES[status] }
      : { allowed: false, status, code, message: STATUS_MESSAGES[status], scope }
  return Object.freeze(decision)
}

// Denials are immutable values with few variants: share them instead of allocating per request.
// Keyed exactly, a code and then a scope, so that no scope (even one outside the type) can make a
// key another denial has.
const denials = new Map<DenyCode, Deny>()
const scopedDenials = new Map<DenyCode, Map<Scope, Deny>>()

/**
 * Builds a denial with the status and message that belong to `code` (a shared, frozen value).
 *
 * @example
 * deny('insufficient_scope', 'data.data')
 * // { allowed: false, status: 403, code: 'insufficient_scope', message: 'Not authorized', scope: 'data.data' }
 */
export function deny(code: DenyCode, scope?: Scope): Deny {
  if (scope === undefined) {
    let denial = denials.get(code)
    if (denial === undefined) {
      denial = createDenial(code, undefined)
      denials.set(code, denial)
    }
    return denial
  }
  let byScope = scopedDenials.get(code)
  if (byScope === undefined) {
    byScope = new Map()
    scopedDenials.set(code, byScope)
  }
  let denial = byScope.get(scope)
  if (denial === undefined) {
    denial = createDenial(code, scope)
    byScope.set(scope, denial)
  }
  return denial
}

// Each (denial, scope) pair once: a 401 on a guarded route is rendered from a shared value too.
const scoped = new WeakMap<Deny, Map<Scope, Deny>>()

/**
 * The same 401 denial, naming the scope the route needs, so that its challenge says what to ask
 * for (RFC 6750 §3); any other denial is answered unchanged. Internal to the package.
 *
 * @example
 * withChallengeScope(deny('missing_token'), 'data.metadata').scope // 'data.metadata'
 */
export function withChallengeScope(decision: Deny, scope: Scope): Deny {
  if (decision.status !== 401) return decision
  let byScope = scoped.get(decision)
  if (byScope === undefined) {
    byScope = new Map()
    scoped.set(decision, byScope)
  }
  let denial = byScope.get(scope)
  if (denial === undefined) {
    denial = Object.freeze({ ...decision, scope })
    byScope.set(scope, denial)
  }
  return denial
}

/** The longest `Retry-After` a `rate_limited` denial names, in seconds. */
export const MAX_RETRY_AFTER_SECONDS = 3600

// One shared value per whole second: at most MAX_RETRY_AFTER_SECONDS of them.
const rateLimits = new Map<number, Deny>()

/**
 * The 429 `rate_limited` denial telling the client to try again after `seconds` (rounded up to a
 * whole second, within 1–3600; anything that is not a number counts as 1): a shared, frozen value.
 *
 * @example
 * rateLimited(12.3) // { allowed: false, status: 429, code: 'rate_limited', message: 'Too many requests', retryAfter: 13 }
 */
export function rateLimited(seconds: number): Deny {
  const whole = Number.isFinite(seconds)
    ? Math.min(Math.max(Math.ceil(seconds), 1), MAX_RETRY_AFTER_SECONDS)
    : 1
  let denial = rateLimits.get(whole)
  if (denial === undefined) {
    denial = Object.freeze({ ...deny('rate_limited'), retryAfter: whole })
    rateLimits.set(whole, denial)
  }
  return denial
}
