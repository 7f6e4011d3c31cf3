/**
 * The admission sequence one step of a policy runs on a request: credentials → authenticate → the
 * body's `access_token` → resolve → decide, with exactly one fail-closed catch, and the outcome's
 * event for the policy's hook. `Admissions` (admission.ts) runs it for the adapters; this module
 * knows nothing of requests' records nor of when a response ends.
 */
import { type AuthenticationResult, extractBearerToken } from '../../src/authentication/authenticate.js'
import type { ForwardedOrigin } from '../../src/authentication/trusted-proxies.js'
import type { RequestFacts } from '../../src/decisions/decide.js'
import {
  type Allow,
  type Decision,
  type Deny,
  deny,
  withChallengeScope,
} from '../../src/decisions/decision.js'
import { type Operation, operationSpec, scopeForNeed } from '../../src/decisions/operations.js'
import type { Principal } from '../../src/decisions/principal.js'
import type { Resource } from '../../src/decisions/resources.js'
import type { DecisionEvent, PolicyHooks, PolicySteps } from '../../src/policy.js'

/** What an adapter read from its framework's request. */
export interface AdmissionRequest {
  /** Every `Authorization` header value as received, in order. */
  readonly authorization: readonly string[]
  /** Whether the query string carries an `access_token` parameter. */
  readonly queryHasAccessToken: boolean
  /**
   * Whether the parsed body carries an `access_token` parameter. Asked only when it would change
   * the answer (a token is in the header), so an unauthenticated request costs no body parsing.
   */
  readonly bodyHasAccessToken: () => boolean | Promise<boolean>
  /** The client address and protocol, after the trusted proxies' headers. */
  readonly origin: ForwardedOrigin
  /**
   * The principal this same policy authenticated earlier on this request (its record's), if
   * any: the adapter's own record, never what the request carries (`req.principal`,
   * `c.get('principal')`), which the host or another policy may have set.
   */
  readonly principal: Principal | undefined
  /**
   * Whether the `Authorization` header carries a token, where an earlier step that authenticated
   * from it knows; absent, the header is parsed again when an earlier principal is given.
   */
  readonly tokenInHeader?: boolean | undefined
  /** Every `DPoP` header value as received, in order (RFC 9449 §4.1). */
  readonly dpop?: readonly string[] | undefined
  /** The request's method, as sent. */
  readonly method?: string | undefined
  /** The `Host` header (or the authority the runtime reports). */
  readonly host?: string | undefined
  /** The request target as received: path and query, or an absolute URL. */
  readonly target?: string | undefined
}

/** A route's requirement: the operation, and the host's description of the resource. */
export interface Requirement {
  readonly operation: Operation
  /**
   * Calls the host's resolver for the authenticated principal; the adapter sets the principal on
   * its request first, since resolvers read it there (`req.principal`, `c.get('principal')`).
   */
  readonly resolve: (principal: Principal) => Resource | undefined | Promise<Resource | undefined>
}

/**
 * The outcome: go on with a principal (and the route's allow), or answer the denial. With an
 * `onDecision` hook, `event` is what to tell of it once the response is done (`Admissions.end`).
 */
export type Admission =
  | {
      readonly ok: true
      readonly principal: Principal
      readonly allow: Allow | undefined
      readonly event?: DecisionEvent
    }
  /** `principal`: who was refused, when authentication succeeded before the denial. */
  | {
      readonly ok: false
      readonly decision: Deny
      readonly principal?: Principal
      readonly event?: DecisionEvent
    }

// Stryker disable next-line ArrowFunction: equivalent because an `undefined` answer is as falsy as `false`
const NO_BODY = (): boolean => false

/** An {@link AdmissionRequest} body reader for a step that runs before the body is parsed. */
export const BODY_NOT_YET_PARSED: AdmissionRequest['bodyHasAccessToken'] = NO_BODY

const UNAVAILABLE: Admission = Object.freeze({ ok: false, decision: deny('service_unavailable') })

/**
 * Runs the admission sequence of one step on one request. Never rejects: anything that throws (a
 * framework read, the host's body reader) is a 503 reported to `onError`. Answers synchronously when
 * every step does (a memory store, a resolver that returns its resource), so that an adapter can go
 * on without a promise; otherwise a promise. Tells `onDecision` nothing: the event waits on the
 * request's record until the response is done (`Admissions.end`).
 *
 * @example
 * const admission = await admit(policySteps(policy), () => readRequest(req), requirement)
 * if (!admission.ok) return sendDenial(res, admission.decision)
 *
 * @param challenge - The route's operation, for a step that authenticates before the requirement
 *   is decided (Fastify's `onRequest`): its 401 names the operation's scope as the route's would.
 */
export function admit(
  steps: PolicySteps,
  read: () => AdmissionRequest,
  requirement: Requirement | undefined,
  challenge: Operation | undefined = requirement?.operation,
): Admission | Promise<Admission> {
  let request: AdmissionRequest | undefined
  const failed = (error: unknown): Admission => {
    steps.hooks.error(error, 'adapter')
    return withEvent(steps.hooks, UNAVAILABLE, request, requirement)
  }
  let admission: Admission | Promise<Admission>
  try {
    // Reading the request is inside the catch too: a framework getter or a trust function that
    // throws is a 503, never an escape past the guard.
    request = read()
    admission = run(steps, request, requirement, challenge)
  } catch (error) {
    return failed(error)
  }
  if (admission instanceof Promise) {
    const read = request
    return admission.then((settled) => withEvent(steps.hooks, settled, read, requirement), failed)
  }
  return withEvent(steps.hooks, admission, request, requirement)
}

// With an `onDecision` hook, the admission with the event to tell of it; as it is otherwise, so
// that no event is built for nobody.
function withEvent(
  hooks: PolicyHooks,
  admission: Admission,
  request: AdmissionRequest | undefined,
  requirement: Requirement | undefined,
): Admission {
  if (hooks.decision === undefined) return admission
  return { ...admission, event: decisionEvent(admission, request?.origin, requirement?.operation) }
}

function run(
  steps: PolicySteps,
  request: AdmissionRequest,
  requirement: Requirement | undefined,
  challenge: Operation | undefined,
): Admission | Promise<Admission> {
  if (request.principal !== undefined) {
    const tokenInHeader =
      request.tokenInHeader ?? accessTokenParameterDenial(request.authorization) !== undefined
    return authenticated(steps, request, requirement, request.principal, tokenInHeader)
  }
  const { origin } = request
  const result = steps.authenticate({
    authorization: request.authorization,
    accessTokenParameter: request.queryHasAccessToken,
    protocol: origin.protocol,
    clientAddress: origin.clientAddress,
    dpop: request.dpop,
    method: request.method,
    host: request.host,
    target: request.target,
  })
  // Authenticated here, the principal is a token's exactly when the header carried one: no second
  // parse of the header for the body check.
  const next = (settled: AuthenticationResult): Admission | Promise<Admission> =>
    settled.ok
      ? authenticated(steps, request, requirement, settled.principal, settled.principal.kind === 'token')
      : challenged(settled, challenge)
  return result instanceof Promise ? result.then(next) : next(result)
}

// A 401 on a route names the scope the route needs (RFC 6750 §3), so that a client starting from
// the challenge (the MCP SDK does) asks for that much and no more.
function challenged(
  failure: Extract<AuthenticationResult, { ok: false }>,
  operation: Operation | undefined,
): Admission {
  if (failure.decision.status !== 401) return failure
  const spec = operationSpec(operation)
  if (spec === undefined) return failure
  return { ok: false, decision: withChallengeScope(failure.decision, scopeForNeed(spec.need)) }
}

// After authentication: a token in the header and an `access_token` in the body is the core's 400
// (RFC 6750 §2); only a request whose header carries a token can be refused for it, so only that
// one reads the body.
function authenticated(
  steps: PolicySteps,
  request: AdmissionRequest,
  requirement: Requirement | undefined,
  principal: Principal,
  tokenInHeader: boolean,
): Admission | Promise<Admission> {
  if (!tokenInHeader) return authorized(steps, request, requirement, principal)
  const refuse: Admission = { ok: false, decision: TOKEN_SENT_TWICE, principal }
  const carries = request.bodyHasAccessToken()
  if (carries instanceof Promise) {
    return carries.then((yes) => (yes ? refuse : authorized(steps, request, requirement, principal)))
  }
  return carries ? refuse : authorized(steps, request, requirement, principal)
}

function authorized(
  steps: PolicySteps,
  request: AdmissionRequest,
  requirement: Requirement | undefined,
  principal: Principal,
): Admission | Promise<Admission> {
  if (requirement === undefined) return { ok: true, principal, allow: undefined }
  const decision = steps.guard(
    principal,
    requirement.operation,
    () => requirement.resolve(principal),
    factsOf(request.origin),
  )
  const admission = (settled: Decision): Admission =>
    settled.allowed ? { ok: true, principal, allow: settled } : { ok: false, decision: settled, principal }
  return decision instanceof Promise ? decision.then(admission) : admission(decision)
}

/**
 * The denial an `access_token` parameter causes next to these `Authorization` values, as the core
 * decides it (a token sent twice is 400), or undefined when the parameter changes nothing.
 *
 * @example
 * accessTokenParameterDenial(['Bearer dap_…']) // the 400 invalid_request denial
 */
export function accessTokenParameterDenial(authorization: readonly string[]): Deny | undefined {
  const extracted = extractBearerToken({ authorization, accessTokenParameter: true })
  return extracted.ok ? undefined : extracted.decision
}

// What the core answers for a token in the header and an `access_token` parameter (RFC 6750 §2).
const TOKEN_SENT_TWICE = deny('invalid_request')

const NO_FACTS: RequestFacts = Object.freeze({})

// Without an address, facts that name none: a host's own policy object may tell `{}` from
// `{ clientAddress: undefined }` (one that fills in a default address does), the core does not.
function factsOf(origin: ForwardedOrigin): RequestFacts {
  return origin.clientAddress === undefined ? NO_FACTS : { clientAddress: origin.clientAddress }
}

// The event `onDecision` hears for an admission: ids and the address, never a token value.
function decisionEvent(
  admission: Admission,
  origin: ForwardedOrigin | undefined,
  operation: Operation | undefined,
): DecisionEvent {
  const principal = admission.principal
  const event: { -readonly [K in keyof DecisionEvent]: DecisionEvent[K] } = admission.ok
    ? { allowed: true, status: 200 }
    : { allowed: false, status: admission.decision.status, code: admission.decision.code }
  if (operation !== undefined && principal !== undefined) event.operation = operation
  if (principal?.userId !== undefined) event.userId = principal.userId
  if (principal?.tokenId !== undefined) event.tokenId = principal.tokenId
  if (origin?.clientAddress !== undefined) event.clientAddress = origin.clientAddress
  return event
}
