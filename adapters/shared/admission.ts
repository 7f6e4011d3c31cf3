/**
 * The one admission sequence every adapter runs: credentials → authenticate → the body's
 * `access_token` → resolve → decide, with exactly one fail-closed catch, and the outcome's event
 * for the policy's hook. An adapter only reads its framework's request into an
 * {@link AdmissionRequest}, writes the {@link Admission} back as its framework's response, and keeps
 * what the policy admitted on the request ({@link keepAdmission}) to tell once the response is done.
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
import {
  type AccessPolicy,
  type DecisionEvent,
  type PolicyHooks,
  type PolicySteps,
  policyHooks,
  policySteps,
} from '../../src/policy.js'

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
   * The principal this same policy authenticated earlier on this request ({@link Admitted}), if
   * any: the adapter's own record, never what the request carries (`req.principal`,
   * `c.get('principal')`), which the host or another policy may have set.
   */
  readonly principal: Principal | undefined
  /**
   * Whether the `Authorization` header carries a token, where an earlier step that authenticated
   * from it knows; absent, the header is parsed again when an earlier principal is given.
   */
  readonly tokenInHeader?: boolean | undefined
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
 * `onDecision` hook, `event` is what to tell of it once the response is done ({@link keepAdmission}).
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
 * Runs the admission sequence for one request. Never rejects: anything that throws (a framework
 * read, a hook-free failure in the host's body reader) is a 503 reported to `onError`. Answers
 * synchronously when every step does (a memory store, a resolver that returns its resource), so
 * that an adapter can go on without a promise; otherwise a promise. Tells `onDecision` nothing: the
 * adapter keeps the admission's event until the response is done ({@link keepAdmission}).
 *
 * @example
 * const admission = await admit(policy, readRequest(req), { operation: 'dataset.metadata', resolve })
 * if (!admission.ok) return sendDenial(res, admission.decision)
 *
 * @param challenge - The route's operation, for a step that authenticates before the requirement
 *   is decided (Fastify's `onRequest`): its 401 names the operation's scope as the route's would.
 */
export function admit(
  policy: AccessPolicy,
  read: () => AdmissionRequest,
  requirement: Requirement | undefined,
  challenge: Operation | undefined = requirement?.operation,
): Admission | Promise<Admission> {
  const steps = policySteps(policy)
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
 * Hands an admission to `next` now when it is settled, or when it settles; whatever `next` throws
 * goes to `fail` (the framework's error path). For callback-style hooks and middleware, which thus
 * cost no promise on a request the policy answers synchronously.
 *
 * @example
 * whenAdmitted(admit(policy, read, requirement), (admission) => { … next() }, next)
 */
export function whenAdmitted(
  admission: Admission | Promise<Admission>,
  next: (admission: Admission) => void,
  fail: (error: unknown) => void,
): void {
  if (admission instanceof Promise) {
    admission.then(next).catch(fail)
    return
  }
  try {
    next(admission)
  } catch (error) {
    fail(error)
  }
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

function factsOf(origin: ForwardedOrigin): RequestFacts {
  // Stryker disable next-line ConditionalExpression: equivalent because decide reads only facts.clientAddress, undefined in both objects
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

/**
 * What one policy admitted on one request: the principal it authenticated there (which its later
 * steps on the request trust, and nothing else does), and the event to tell when the response is
 * done. Adapters keep one per policy and request, in {@link admittedRequests} or a field of their
 * own request object.
 */
export interface Admitted {
  principal: Principal | undefined
  event: DecisionEvent | undefined
  /**
   * The data-content allow of the request's last guard of this policy, which its `sendData` and
   * `streamData` meter against: never an allow another policy gave (`req.accessDecision` shows
   * whichever guard ran last).
   */
  allow?: Allow | undefined
  /** Where its event stands ({@link Telling}); absent until the adapter waits for the response's end. */
  telling?: Telling | undefined
}

/**
 * Where an entry's event stands: the adapter waits for the response's end to tell it (`armed`), a
 * step of the policy is deciding on the request meanwhile (`deciding`: an end that comes now waits
 * for the step's own answer, the request's last word, which the adapter arms again as it settles),
 * or it was told (`told`: never again on this request). Absent: nothing waits to tell it.
 */
export type Telling = 'armed' | 'deciding' | 'told'

const admittedByPolicy = new WeakMap<AccessPolicy, WeakMap<object, Admitted>>()

/**
 * The entries of a policy's admissions, by request object: one map per policy, shared by every
 * adapter instance bound to it, so that two instances of one policy authenticate and tell once,
 * and an instance of another policy sees none of them. Looked up once per adapter instance.
 *
 * @example
 * const admitted = admittedRequests(policy)
 * admit(policy, () => ({ …, principal: admitted.get(req)?.principal }), requirement)
 */
export function admittedRequests(policy: AccessPolicy): WeakMap<object, Admitted> {
  let entries = admittedByPolicy.get(policy)
  if (entries === undefined) {
    entries = new WeakMap()
    admittedByPolicy.set(policy, entries)
  }
  return entries
}

/**
 * Keeps an admission on the request's entry: its principal when it succeeded (for the policy's
 * later steps on the request), a guard's data-content allow (for the policy's `sendData`), and its
 * event, which replaces an earlier step's: the request is told
 * once, as its last step saw it. Answers the entry when the adapter must wait for the response's
 * end to tell it (a new entry with an event, or one whose response ended while this step decided:
 * then it is told at once): the adapter then calls {@link tellAtEnd} when the response is done.
 * `keepPrincipal` false spares a new entry that would hold only a principal no later step asks for
 * (a route's last guard).
 *
 * @example
 * const fresh = keepAdmission(admitted, req, admission, true)
 * if (fresh !== undefined) whenClosed(res, () => tellAtEnd(policy, fresh, sentStatus(res)))
 */
export function keepAdmission(
  entries: WeakMap<object, Admitted>,
  key: object,
  admission: Admission,
  keepPrincipal: boolean,
): Admitted | undefined {
  const entry = entries.get(key)
  if (entry !== undefined) return keepOn(entry, admission)
  const principal = admission.ok ? admission.principal : undefined
  const allow = dataContentAllow(admission)
  if (admission.event === undefined && allow === undefined && !(keepPrincipal && principal !== undefined)) {
    return undefined
  }
  const fresh: Admitted = { principal, event: admission.event, allow, telling: undefined }
  entries.set(key, fresh)
  return arm(fresh)
}

/**
 * {@link keepAdmission} on an entry the adapter holds itself (Fastify's request record): the same
 * rules, the same answer.
 *
 * @example
 * const arming = keepOn(record, admission)
 * if (arming !== undefined) whenClosed(reply.raw, () => tellAtEnd(policy, arming, sentStatus(reply.raw)))
 */
export function keepOn(entry: Admitted, admission: Admission): Admitted | undefined {
  if (admission.ok) entry.principal = admission.principal
  if (admission.ok && admission.allow !== undefined) entry.allow = dataContentAllow(admission)
  const telling = entry.telling
  if (telling === 'told') return undefined
  entry.event = admission.event
  if (telling === 'deciding') {
    entry.telling = 'armed'
    return undefined
  }
  // Unarmed: a new entry, or one whose response ended while this step decided (told now, then).
  return telling === 'armed' ? undefined : arm(entry)
}

// Only a data-content route sends data, so only its allow is kept: other routes pay no entry.
function dataContentAllow(admission: Admission): Allow | undefined {
  return admission.ok && admission.allow?.dataContent === true ? admission.allow : undefined
}

function arm(entry: Admitted): Admitted | undefined {
  if (entry.event === undefined) return undefined
  entry.telling = 'armed'
  return entry
}

/**
 * Marks that a step of the policy is deciding on the request (its admission is a promise): a
 * response that ends meanwhile (a client gone) is told with that step's answer, not an earlier
 * step's.
 *
 * @example
 * if (admission instanceof Promise) deciding(record)
 */
export function deciding(entry: Admitted | undefined): void {
  if (entry?.telling === 'armed') entry.telling = 'deciding'
}

/**
 * {@link deciding} for a request's entry in `entries` when the admission is a promise; answers the
 * admission as it is. A synchronous admission costs one type check.
 *
 * @example
 * whenAdmitted(decidingOn(admit(policy, read, requirement), admitted, req), next, fail)
 */
export function decidingOn<A extends Admission | Promise<Admission>>(
  admission: A,
  entries: WeakMap<object, Admitted>,
  key: object,
): A {
  if (admission instanceof Promise) deciding(entries.get(key))
  return admission
}

/**
 * Tells `onDecision` the entry's event once, with the status the response was sent with; with
 * `undefined` (nothing was sent: the client went away first), with the event's own. While a step
 * of the policy still decides, it waits for that step ({@link deciding}).
 *
 * @example
 * res.once('close', () => tellAtEnd(policy, entry, sentStatus(res)))
 */
export function tellAtEnd(policy: AccessPolicy, entry: Admitted, status: number | undefined): void {
  // The step deciding tells its own answer as it settles: it arms the entry again (keepOn).
  if (entry.telling === 'deciding') {
    entry.telling = undefined
    return
  }
  // A told entry has no event left, and keepOn never gives it one again.
  const event = entry.event
  if (event === undefined) return
  entry.telling = 'told'
  entry.event = undefined
  policyHooks(policy).decision?.(
    status === undefined || event.status === status ? event : { ...event, status },
  )
}
