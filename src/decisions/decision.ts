import type { Operation } from './operations.js'
import type { Scope } from './scopes.js'

/**
 * The stable reason of a denial, a closed union.
 *
 * - `invalid_request` (400): a malformed `Authorization` header, two of them, or a token sent twice.
 * - `missing_token` (401): no bearer credentials at all.
 * - `invalid_token` (401): malformed, unknown, expired or revoked token.
 * - `https_required` (403): plain HTTP from a non-loopback client.
 * - `insufficient_scope` (403): the user could do it, with a wider token scope.
 * - `insufficient_access` (403): the user's own access falls short, whatever the scopes.
 * - `export_restricted` (403): the dataset's export restrictions forbid this data transfer.
 * - `invalid_input` (403): an operation, resource description or principal the policy cannot evaluate.
 * - `not_found` (404): the resource does not exist, or the caller may not learn that it does.
 * - `service_unavailable` (503): a token store or resource lookup failed or timed out.
 */
export type DenyCode =
  | 'invalid_request'
  | 'missing_token'
  | 'invalid_token'
  | 'https_required'
  | 'insufficient_scope'
  | 'insufficient_access'
  | 'export_restricted'
  | 'invalid_input'
  | 'not_found'
  | 'service_unavailable'

/** The HTTP status of each denial code. */
export const DENY_STATUS = {
  invalid_request: 400,
  missing_token: 401,
  invalid_token: 401,
  https_required: 403,
  insufficient_scope: 403,
  insufficient_access: 403,
  export_restricted: 403,
  invalid_input: 403,
  not_found: 404,
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
