/**
 * The admission protocol every adapter runs, as one object: {@link Admissions}. For each step of the
 * policy on a request (`authenticate`, a route's guard) the adapter reads its framework's request,
 * calls {@link Admissions.begin} and {@link Admissions.settle}, writes the outcome as its framework's
 * response, and calls {@link Admissions.end} once that response is done. docs/adapters.md draws the
 * states of a request's record.
 */
import type { Allow } from '../../src/decisions/decision.js'
import type { Operation } from '../../src/decisions/operations.js'
import type { Principal } from '../../src/decisions/principal.js'
import { type AccessPolicy, type DecisionEvent, type PolicySteps, policySteps } from '../../src/policy.js'
import { type Admission, type AdmissionRequest, admit, type Requirement } from './admission-sequence.js'

export {
  type Admission,
  type AdmissionRequest,
  accessTokenParameterDenial,
  BODY_NOT_YET_PARSED,
  type Requirement,
} from './admission-sequence.js'

/**
 * What one policy admitted on one request: the principal it authenticated there (which its later
 * steps on the request trust, and nothing else does), and the event to tell when the response is
 * done. Kept in the adapter's {@link AdmissionRecords}.
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
 * Where a record's event stands: the adapter waits for the response's end to tell it (`armed`), a
 * step of the policy is deciding on the request meanwhile (`deciding`: an end that comes now waits
 * for the step's own answer, the request's last word, which arms the record again as it settles),
 * or it was told (`told`: never again on this request). Absent: nothing waits to tell it.
 */
export type Telling = 'armed' | 'deciding' | 'told'

/**
 * Where an adapter keeps the record of each request: a `WeakMap` by request object (the default),
 * or a field of its own request object (Fastify's, which decorates every request with it).
 */
export interface AdmissionRecords<K extends object> {
  get(key: K): Admitted | undefined
  set(key: K, record: Admitted): unknown
}

/**
 * One policy's admissions of requests, in three verbs an adapter calls in order for each step of
 * the policy on a request: {@link Admissions.begin} (run the admission sequence), then
 * {@link Admissions.settle} (keep its outcome on the request's record and write the response), then,
 * for the record `settle` hands over, {@link Admissions.end} once the response is done. A request
 * the policy answers synchronously costs no promise on the way.
 *
 * @typeParam K - the adapter's request object, the key of its records.
 * @example
 * const admissions = admissionsOf(policy)
 * admissions.settle(req, admissions.begin(req, read, requirement), (admission, ending) => {
 *   if (ending !== undefined) whenClosed(res, () => admissions.end(ending, sentStatus(res)))
 *   if (!admission.ok) return sendDenial(res, admission.decision)
 *   next()
 * }, next)
 */
export class Admissions<K extends object = object> {
  private readonly steps: PolicySteps
  private readonly records: AdmissionRecords<K>

  constructor(policy: AccessPolicy, records: AdmissionRecords<K> = new WeakMap()) {
    this.steps = policySteps(policy)
    this.records = records
  }

  /**
   * Runs the admission sequence for one step on the request `key` (never rejects: anything thrown is
   * a 503 told to `onError`). An answer still to settle marks the request's record: a response that
   * ends meanwhile (a client gone) is told this step's answer, not an earlier step's.
   *
   * @param challenge - The route's operation, for a step that authenticates before the requirement
   *   is decided (Fastify's `onRequest`): its 401 names the operation's scope as the route's would.
   * @example
   * const admission = admissions.begin(req, () => readRequest(req), requirement)
   */
  begin(
    key: K,
    read: () => AdmissionRequest,
    requirement: Requirement | undefined,
    challenge?: Operation,
  ): Admission | Promise<Admission> {
    const admission = admit(this.steps, read, requirement, challenge ?? requirement?.operation)
    if (admission instanceof Promise) {
      const record = this.records.get(key)
      if (record?.telling === 'armed') record.telling = 'deciding'
    }
    return admission
  }

  /**
   * Keeps the step's outcome on the request's record, then hands it to `respond`: now when it is
   * settled, else when it settles. `ending` is the record to {@link Admissions.end} when the response
   * is done, when the adapter must now wait for that (or the response ended while this step decided:
   * then at once). Whatever `respond` throws goes to `fail` (the framework's error path); without
   * one, it escapes (thrown, or the promise rejects).
   *
   * @example
   * admissions.settle(c, admissions.begin(c, read, undefined), (admission, ending) => respond(c, admission, ending))
   */
  settle<R>(
    key: K,
    admission: Admission | Promise<Admission>,
    respond: (admission: Admission, ending: Admitted | undefined) => R,
    fail?: (error: unknown) => R,
  ): R | Promise<Awaited<R>> {
    if (admission instanceof Promise) {
      // A promise resolves to what `respond` answers, awaited (Hono's `next()` promise, say).
      const responded = admission.then((settled) => respond(settled, this.keep(key, settled)))
      return (fail === undefined ? responded : responded.catch(fail)) as Promise<Awaited<R>>
    }
    if (fail === undefined) return respond(admission, this.keep(key, admission))
    try {
      return respond(admission, this.keep(key, admission))
    } catch (error) {
      return fail(error)
    }
  }

  /**
   * Tells `onDecision` the record's event once, with the status the response was sent with; with
   * `undefined` (nothing was sent: the client went away first), with the event's own. While a step
   * of the policy still decides, it waits for that step ({@link Admissions.begin}).
   *
   * @example
   * whenClosed(res, () => admissions.end(ending, sentStatus(res)))
   */
  end(record: Admitted, status: number | undefined): void {
    // The step deciding tells its own answer as it settles: it arms the record again (keepOn).
    if (record.telling === 'deciding') {
      record.telling = undefined
      return
    }
    // A told record has no event left, and keepOn never gives it one again.
    const event = record.event
    if (event === undefined) return
    record.telling = 'told'
    record.event = undefined
    this.steps.hooks.decision?.(
      status === undefined || event.status === status ? event : { ...event, status },
    )
  }

  /**
   * The principal this policy authenticated earlier on the request, for its later steps: never what
   * the request carries (`req.principal`), which the host or another policy may have set.
   *
   * @example
   * const read = () => ({ …, principal: admissions.principalOf(req) })
   */
  principalOf(key: K): Principal | undefined {
    return this.records.get(key)?.principal
  }

  /**
   * The data-content allow of the request's last guard of this policy, for `sendData` and
   * `streamData`.
   *
   * @example
   * prepareData(policy, admissions.allowOf(req), data)
   */
  allowOf(key: K): Allow | undefined {
    return this.records.get(key)?.allow
  }

  // The principal of a success (for the policy's later steps on the request), a guard's data-content
  // allow (for its `sendData`), and the event, which replaces an earlier step's: the request is told
  // once, as its last step saw it. An authentication's principal is what later steps ask for; a
  // guard is the route's last word, so a request with nothing else to keep gets no record.
  private keep(key: K, admission: Admission): Admitted | undefined {
    const record = this.records.get(key)
    if (record !== undefined) return keepOn(record, admission)
    const authenticatedOnly = admission.ok && admission.allow === undefined
    const allow = dataContentAllow(admission)
    if (admission.event === undefined && allow === undefined && !authenticatedOnly) return undefined
    const principal = admission.ok ? admission.principal : undefined
    const fresh: Admitted = { principal, event: admission.event, allow, telling: undefined }
    this.records.set(key, fresh)
    return arm(fresh)
  }
}

function keepOn(record: Admitted, admission: Admission): Admitted | undefined {
  if (admission.ok) record.principal = admission.principal
  if (admission.ok && admission.allow !== undefined) record.allow = dataContentAllow(admission)
  const telling = record.telling
  if (telling === 'told') return undefined
  record.event = admission.event
  if (telling === 'deciding') {
    record.telling = 'armed'
    return undefined
  }
  // Unarmed: a new record, or one whose response ended while this step decided (told now, then).
  return telling === 'armed' ? undefined : arm(record)
}

// Only a data-content route sends data, so only its allow is kept: other routes pay no record.
function dataContentAllow(admission: Admission): Allow | undefined {
  return admission.ok && admission.allow?.dataContent === true ? admission.allow : undefined
}

function arm(record: Admitted): Admitted | undefined {
  if (record.event === undefined) return undefined
  record.telling = 'armed'
  return record
}

const admissionsByPolicy = new WeakMap<AccessPolicy, Admissions>()

/**
 * The policy's {@link Admissions} with records by request object, shared by every adapter instance
 * bound to it, so that two instances of one policy authenticate and tell once, and an instance of
 * another policy sees none of them.
 *
 * @example
 * const admissions = admissionsOf(policy)
 */
export function admissionsOf(policy: AccessPolicy): Admissions {
  let admissions = admissionsByPolicy.get(policy)
  if (admissions === undefined) {
    admissions = new Admissions(policy)
    admissionsByPolicy.set(policy, admissions)
  }
  return admissions
}
