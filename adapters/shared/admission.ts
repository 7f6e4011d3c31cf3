/**
 * The one admission sequence every adapter runs: credentials → authenticate → the body's
 * `access_token` → resolve → decide, with exactly one fail-closed catch, and the policy's hooks told
 * the outcome. An adapter only reads its framework's request into an {@link AdmissionRequest} and
 * writes the {@link Admission} back as its framework's response.
 */
import { extractBearerToken } from '../../src/authentication/authenticate.js'
import type { ForwardedOrigin } from '../../src/authentication/trusted-proxies.js'
import type { RequestFacts } from '../../src/decisions/decide.js'
import { type Allow, type Deny, deny } from '../../src/decisions/decision.js'
import type { Operation } from '../../src/decisions/operations.js'
import type { Principal } from '../../src/decisions/principal.js'
import type { Resource } from '../../src/decisions/resources.js'
import { type AccessPolicy, type DecisionEvent, policyHooks } from '../../src/policy.js'

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
  /** The principal an earlier step authenticated on this request, if any. */
  readonly principal: Principal | undefined
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

/** The outcome: go on with a principal (and the route's allow), or answer the denial. */
export type Admission =
  | {
      readonly ok: true
      readonly principal: Principal
      readonly allow: Allow | undefined
      /** With `telling: 'denial'` and an `onDecision` hook: the event to tell if no later step does. */
      readonly held?: DecisionEvent
    }
  /** `principal`: who was refused, when authentication succeeded before the denial. */
  | { readonly ok: false; readonly decision: Deny; readonly principal?: Principal }

/**
 * When the outcome is told to `onDecision`: `final` always; `denial` only on a denial (a step
 * whose success a later step completes, like Fastify's `onRequest` before its `preHandler`).
 */
export type Telling = 'final' | 'denial'

const NO_BODY = (): boolean => false

/** An {@link AdmissionRequest} body reader for a step that runs before the body is parsed. */
export const BODY_NOT_YET_PARSED: AdmissionRequest['bodyHasAccessToken'] = NO_BODY

const UNAVAILABLE: Admission = Object.freeze({ ok: false, decision: deny('service_unavailable') })

/**
 * Runs the admission sequence for one request. Never rejects: anything that throws (a framework
 * read, a hook-free failure in the host's body reader) is a 503 reported to `onError`.
 *
 * @example
 * const admission = await admit(policy, readRequest(req), { operation: 'dataset.metadata', resolve }, 'final')
 * if (!admission.ok) return sendDenial(res, admission.decision)
 */
export async function admit(
  policy: AccessPolicy,
  read: () => AdmissionRequest,
  requirement: Requirement | undefined,
  telling: Telling,
): Promise<Admission> {
  const hooks = policyHooks(policy)
  let request: AdmissionRequest | undefined
  let admission: Admission
  try {
    // Reading the request is inside the catch too: a framework getter or a trust function that
    // throws is a 503, never an escape past the guard.
    request = read()
    admission = await run(policy, request, requirement)
  } catch (error) {
    hooks.error(error, 'adapter')
    admission = UNAVAILABLE
  }
  if (hooks.decision === undefined) return admission
  const event = decisionEvent(admission, request?.origin, requirement?.operation)
  if (telling === 'final' || !admission.ok) hooks.decision(event)
  else return { ...admission, held: event }
  return admission
}

async function run(
  policy: AccessPolicy,
  request: AdmissionRequest,
  requirement: Requirement | undefined,
): Promise<Admission> {
  const { origin } = request
  let principal = request.principal
  if (principal === undefined) {
    const result = await policy.authenticate({
      authorization: request.authorization,
      accessTokenParameter: request.queryHasAccessToken,
      protocol: origin.protocol,
      clientAddress: origin.clientAddress,
    })
    if (!result.ok) return result
    principal = result.principal
  }
  // A token in the header and an `access_token` in the body is the core's 400 (RFC 6750 §2); only a
  // request whose header carries a token can be refused for it, so only that one reads the body.
  const bodyDenial = accessTokenParameterDenial(request.authorization)
  if (bodyDenial !== undefined && (await request.bodyHasAccessToken())) {
    return { ok: false, decision: bodyDenial, principal }
  }
  if (requirement === undefined) return { ok: true, principal, allow: undefined }
  const authenticated = principal
  const resolve = () => requirement.resolve(authenticated)
  const decision = await policy.guard(principal, requirement.operation, resolve, factsOf(origin))
  return decision.allowed ? { ok: true, principal, allow: decision } : { ok: false, decision, principal }
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

const NO_FACTS: RequestFacts = Object.freeze({})

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

/**
 * Tells `onDecision` an event an adapter held back (an `authenticate` step whose request no guard
 * completed).
 *
 * @example
 * tellDecision(policy, heldEvent)
 */
export function tellDecision(policy: AccessPolicy, event: DecisionEvent): void {
  policyHooks(policy).decision?.(event)
}
