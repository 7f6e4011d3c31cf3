import { describe, expect, test, vi } from 'vitest'
import {
  type Admission,
  type AdmissionRequest,
  Admissions,
  type Admitted,
  accessTokenParameterDenial,
  admissionsOf,
  BODY_NOT_YET_PARSED,
  type Requirement,
} from '../../adapters/shared/admission.js'
import {
  type AccessPolicy,
  compileExportRestrictions,
  createAccessPolicy,
  type DecisionEvent,
  deny,
  type ErrorContext,
} from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createApiToken } from '../../src/tokens/token-record.js'

async function setup() {
  const tokens = new MemoryTokenStore()
  const { record, value } = createApiToken({ userId: 'alice', name: 't', scopes: 'data.data', now: 0 })
  await tokens.save(record)
  const events: DecisionEvent[] = []
  const errors: [unknown, ErrorContext][] = []
  const policy = createAccessPolicy({
    tokens,
    now: () => 1000,
    onDecision: (event) => events.push(event),
    onError: (error, context) => errors.push([error, context]),
  })
  const request = (overrides: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
    authorization: [`Bearer ${value}`],
    queryHasAccessToken: false,
    bodyHasAccessToken: () => false,
    origin: { clientAddress: '127.0.0.1', protocol: 'http' },
    principal: undefined,
    ...overrides,
  })
  return { policy, events, errors, request, tokenId: record.id }
}

// One step's admission on a request of its own: `begin` alone.
function admit(
  policy: AccessPolicy,
  read: () => AdmissionRequest,
  requirement: Requirement | undefined,
  challenge?: Requirement['operation'],
): Admission | Promise<Admission> {
  return new Admissions(policy).begin({}, read, requirement, challenge)
}

const OPEN = {
  operation: 'dataset.metadata' as const,
  resolve: () => ({ kind: 'dataset' as const, publicLevel: 'data' as const }),
}

describe('admit: the one admission sequence', () => {
  test('an allow carries the principal, the route allow and its event, told to nobody yet', async () => {
    const { policy, events, request, tokenId } = await setup()
    const admission = await admit(policy, () => request(), OPEN)
    expect(admission).toMatchObject({ ok: true, principal: { userId: 'alice' }, allow: { allowed: true } })
    expect(admission.event).toEqual({
      allowed: true,
      status: 200,
      operation: 'dataset.metadata',
      userId: 'alice',
      tokenId,
      clientAddress: '127.0.0.1',
    })
    expect(events).toEqual([])
  })

  test('without an onDecision hook no event is built', async () => {
    const { policy, request } = await setup()
    const silent = createAccessPolicy({ tokens: policy.tokens, now: () => 1000 })
    const allowed = await admit(silent, () => request(), OPEN)
    const denied = await admit(silent, () => request({ authorization: [] }), OPEN)
    expect([Object.hasOwn(allowed, 'event'), Object.hasOwn(denied, 'event')]).toEqual([false, false])
  })

  test('a request that cannot even be read is a 503 told to onError at stage adapter', async () => {
    const { policy, events, errors } = await setup()
    const broken = new Error('a framework getter threw')
    const admission = await admit(
      policy,
      () => {
        throw broken
      },
      OPEN,
    )
    expect(admission).toMatchObject({ ok: false, decision: { status: 503, code: 'service_unavailable' } })
    expect(errors).toEqual([[broken, { stage: 'adapter' }]])
    expect(admission.event).toEqual({ allowed: false, status: 503, code: 'service_unavailable' })
    expect(events).toEqual([])
  })

  test('a body reader that throws is a 503, never an allow', async () => {
    const { policy, errors, request } = await setup()
    const broken = new Error('the body parser threw')
    const bodyHasAccessToken = () => Promise.reject(broken)
    const admission = await admit(policy, () => request({ bodyHasAccessToken }), OPEN)
    expect(admission).toMatchObject({ ok: false, decision: { status: 503 } })
    expect(errors).toEqual([[broken, { stage: 'adapter' }]])
  })

  test('the body is read only when a token is in the header', async () => {
    const { policy, request } = await setup()
    const bodyHasAccessToken = vi.fn(() => true)
    const anonymous = await admit(policy, () => request({ authorization: [], bodyHasAccessToken }), OPEN)
    expect(anonymous).toMatchObject({ ok: false, decision: { status: 401 } })
    expect(bodyHasAccessToken).not.toHaveBeenCalled()
    const twice = await admit(policy, () => request({ bodyHasAccessToken }), OPEN)
    expect(twice).toMatchObject({ ok: false, decision: { status: 400, code: 'invalid_request' } })
    expect(bodyHasAccessToken).toHaveBeenCalledOnce()
  })

  test('a denial carries its event, and who was refused once authenticated', async () => {
    const { policy, events, request, tokenId } = await setup()
    const missing = await admit(policy, () => request({ authorization: [] }), undefined)
    expect(missing.event).toEqual({
      allowed: false,
      status: 401,
      code: 'missing_token',
      clientAddress: '127.0.0.1',
    })
    const gone = await admit(policy, () => request(), { ...OPEN, resolve: () => undefined })
    expect(gone.event).toEqual({
      allowed: false,
      status: 404,
      code: 'not_found',
      operation: 'dataset.metadata',
      userId: 'alice',
      tokenId,
      clientAddress: '127.0.0.1',
    })
    expect(events).toEqual([])
  })

  test('a principal authenticated by an earlier step is not authenticated again', async () => {
    const { policy, request } = await setup()
    const first = await admit(policy, () => request(), undefined)
    if (!first.ok) throw new Error('expected an allow')
    const again = await admit(policy, () => request({ authorization: [], principal: first.principal }), OPEN)
    expect(again).toMatchObject({ ok: true, principal: first.principal })
  })

  test('accessTokenParameterDenial: 400 next to a bearer token, nothing otherwise', () => {
    expect(accessTokenParameterDenial(['Bearer abc'])).toMatchObject({ status: 400, code: 'invalid_request' })
    expect(accessTokenParameterDenial([])).toBeUndefined()
    expect(accessTokenParameterDenial(['Basic abc'])).toBeUndefined()
  })

  test('a principal from an earlier step with a token still in the header is refused for a body token', async () => {
    const { policy, request } = await setup()
    const first = await admit(policy, () => request(), undefined)
    if (!first.ok) throw new Error('expected an allow')
    const bodyHasAccessToken = vi.fn(() => true)
    const twice = await admit(policy, () => request({ principal: first.principal, bodyHasAccessToken }), OPEN)
    expect(twice).toMatchObject({ ok: false, decision: { status: 400, code: 'invalid_request' } })
    const headerless = await admit(
      policy,
      () => request({ authorization: [], principal: first.principal, bodyHasAccessToken }),
      OPEN,
    )
    expect(headerless).toMatchObject({ ok: true })
    expect(bodyHasAccessToken).toHaveBeenCalledOnce()
  })

  // Fastify's onRequest authenticates from the header and tells its preHandler what it found there.
  test.each([
    [true, [], { ok: false, decision: { status: 400, code: 'invalid_request' } }, 1],
    [false, undefined, { ok: true }, 0],
  ] as const)(
    'an earlier step that says tokenInHeader: %s is taken at its word: the header is not parsed again',
    async (tokenInHeader, authorization, expected, bodyReads) => {
      const { policy, request } = await setup()
      const first = await admit(policy, () => request(), undefined)
      if (!first.ok) throw new Error('expected an allow')
      const bodyHasAccessToken = vi.fn(() => true)
      const read = () =>
        request({
          principal: first.principal,
          tokenInHeader,
          bodyHasAccessToken,
          ...(authorization === undefined ? {} : { authorization }),
        })
      expect(await admit(policy, read, OPEN)).toMatchObject(expected)
      expect(bodyHasAccessToken).toHaveBeenCalledTimes(bodyReads)
    },
  )

  test('an anonymous principal never reads the body, even with a body token', async () => {
    const tokens = new MemoryTokenStore()
    const policy = createAccessPolicy({ tokens, allowAnonymous: true })
    const bodyHasAccessToken = vi.fn(() => true)
    const read = (): AdmissionRequest => ({
      authorization: [],
      queryHasAccessToken: false,
      bodyHasAccessToken,
      origin: { clientAddress: '127.0.0.1', protocol: 'http' },
      principal: undefined,
    })
    expect(await admit(policy, read, OPEN)).toMatchObject({
      ok: true,
      principal: { kind: 'anonymous' },
    })
    expect(bodyHasAccessToken).not.toHaveBeenCalled()
  })
})

describe('admit: synchronous when every step is', () => {
  test('a memory store and a resolver that returns its resource answer without a promise', async () => {
    const { policy, request } = await setup()
    const admission = admit(policy, () => request(), OPEN)
    expect(admission).not.toBeInstanceOf(Promise)
    expect(admission).toMatchObject({ ok: true, allow: { allowed: true } })
    const denied = admit(policy, () => request({ authorization: ['Bearer dap_nope'] }), OPEN)
    expect(denied).toMatchObject({ ok: false, decision: { status: 401 } })
  })

  test.each([
    ['the store', 'store'],
    ['the resolver', 'resolver'],
    ['the body reader', 'body'],
  ] as const)('a promise from %s makes the answer a promise, with the same outcome', async (_, slow) => {
    const { policy, request } = await setup()
    const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1))
    const tokens = policy.tokens
    const slowPolicy =
      slow === 'store'
        ? createAccessPolicy({
            tokens: Object.assign(Object.create(tokens) as typeof tokens, {
              findByHash: (hash: string) => later(tokens.findByHash(hash)),
            }),
            now: () => 1000,
          })
        : policy
    const requirement = slow === 'resolver' ? { ...OPEN, resolve: () => later(OPEN.resolve()) } : OPEN
    const read = () => request(slow === 'body' ? { bodyHasAccessToken: () => later(true) } : {})
    const admission = admit(slowPolicy, read, requirement)
    expect(admission).toBeInstanceOf(Promise)
    expect(await admission).toMatchObject(
      slow === 'body' ? { ok: false, decision: { status: 400 } } : { ok: true, allow: { allowed: true } },
    )
  })

  test('a resolver that throws is a 503 told to onError at stage resolver, on either path', async () => {
    const { policy, errors, request } = await setup()
    const broken = new Error('the database is down')
    const throwing = {
      ...OPEN,
      resolve: () => {
        throw broken
      },
    }
    const rejecting = { ...OPEN, resolve: () => Promise.reject(broken) }
    expect(admit(policy, () => request(), throwing)).toMatchObject({
      ok: false,
      decision: { status: 503 },
    })
    expect(await admit(policy, () => request(), rejecting)).toMatchObject({
      ok: false,
      decision: { status: 503 },
    })
    expect(errors).toEqual([
      [broken, { stage: 'resolver' }],
      [broken, { stage: 'resolver' }],
    ])
  })

  test('a resolver that answers a thenable that is not a Promise is awaited', async () => {
    const { policy, request } = await setup()
    // biome-ignore lint/suspicious/noThenProperty: the point of the test is a thenable that is not a Promise
    const thenable = { then: (resolve: (value: unknown) => void) => resolve(OPEN.resolve()) }
    const requirement = { ...OPEN, resolve: () => thenable as unknown as ReturnType<typeof OPEN.resolve> }
    expect(await admit(policy, () => request(), requirement)).toMatchObject({ ok: true })
  })

  test('a policy-shaped object not made by createAccessPolicy runs through its public methods', async () => {
    const { policy, request } = await setup()
    const authenticate = vi.fn(policy.authenticate)
    const guard = vi.fn(policy.guard)
    const wrapped: AccessPolicy = { ...policy, authenticate, guard }
    expect(await admit(wrapped, () => request(), OPEN)).toMatchObject({ ok: true })
    const missing = { ...OPEN, resolve: () => undefined }
    expect(await admit(wrapped, () => request(), missing)).toMatchObject({
      ok: false,
      decision: { status: 404 },
    })
    expect(authenticate).toHaveBeenCalledTimes(2)
    expect(guard).toHaveBeenCalledTimes(2)
  })
})

describe('settle: hands an admission on now or later, failures to the error path', () => {
  const ADMITTED: Admission = Object.freeze({
    ok: true,
    principal: { kind: 'anonymous' } as never,
    allow: undefined,
  })
  const admissions = () => new Admissions(createAccessPolicy({ tokens: new MemoryTokenStore() }))

  test('a settled admission is handed on synchronously, with what respond answers', () => {
    const respond = vi.fn(() => 'answered')
    const fail = vi.fn()
    expect(admissions().settle({}, ADMITTED, respond, fail)).toBe('answered')
    expect(respond).toHaveBeenCalledWith(ADMITTED, undefined)
    expect(fail).not.toHaveBeenCalled()
  })

  test('a pending admission is handed on when it settles', async () => {
    const respond = vi.fn(() => 'answered')
    const answer = admissions().settle({}, Promise.resolve(ADMITTED), respond, vi.fn())
    expect(respond).not.toHaveBeenCalled()
    expect(await answer).toBe('answered')
    expect(respond).toHaveBeenCalledWith(ADMITTED, undefined)
  })

  test.each([
    ['settled', (a: Admission) => a],
    ['pending', (a: Admission) => Promise.resolve(a)],
  ])('whatever respond throws (%s) goes to fail, once', async (_, wrap) => {
    const broken = new Error('the response could not be written')
    const fail = vi.fn()
    const thrower = () => {
      throw broken
    }
    admissions().settle({}, wrap(ADMITTED), thrower, fail)
    await vi.waitFor(() => expect(fail).toHaveBeenCalledWith(broken))
    expect(fail).toHaveBeenCalledOnce()
  })

  test('without fail, whatever respond throws escapes: thrown when settled, a rejection when pending', async () => {
    const broken = new Error('the response could not be written')
    const thrower = (): string => {
      throw broken
    }
    expect(() => admissions().settle({}, ADMITTED, thrower)).toThrow(broken)
    await expect(admissions().settle({}, Promise.resolve(ADMITTED), thrower)).rejects.toBe(broken)
  })
})

describe('admit: what the decision and the hooks are given', () => {
  // A data read of a dataset whose owner limits exports to 10.0.0.0/8.
  const RESTRICTED = {
    operation: 'table.read' as const,
    resolve: () => ({
      kind: 'dataset' as const,
      publicLevel: 'none' as const,
      userLevel: 'data' as const,
      exportRestrictions: compileExportRestrictions({ allowedIps: ['10.0.0.0/8'] }),
    }),
  }

  test.each([
    ['an address inside the allow-list', '10.1.2.3', { ok: true }],
    [
      'an address outside it',
      '192.0.2.1',
      { ok: false, decision: { status: 403, code: 'export_restricted' } },
    ],
    // An unknown client address never passes an allow-list.
    ['no address at all', undefined, { ok: false, decision: { status: 403, code: 'export_restricted' } }],
  ])('the export allow-list sees the client address: %s', async (_name, clientAddress, expected) => {
    const { policy, request } = await setup()
    const admission = await admit(
      policy,
      () => request({ origin: { clientAddress, protocol: 'https' } }),
      RESTRICTED,
    )
    expect(admission).toMatchObject(expected)
  })

  // A host's own policy object may tell "no address" (`{}`) from an address it was told is unknown:
  // this one fills in the address of its internal network when the facts name none.
  test("a client without an address gives a host's own policy facts that name none", async () => {
    const { policy, request } = await setup()
    const guard = vi.fn<AccessPolicy['guard']>((principal, operation, resolve, facts) =>
      policy.guard(principal, operation, resolve, { clientAddress: '10.1.2.3', ...facts }),
    )
    const hosted: AccessPolicy = { ...policy, guard }
    const publicExport = {
      operation: 'table.read' as const,
      resolve: () => ({
        kind: 'dataset' as const,
        publicLevel: 'data' as const,
        exportRestrictions: compileExportRestrictions({ allowedIps: ['10.0.0.0/8'] }),
      }),
    }
    const read = () => request({ origin: { clientAddress: undefined, protocol: 'https' } })
    expect(await admit(hosted, read, publicExport)).toMatchObject({ ok: true, allow: { dataContent: true } })
    expect(guard.mock.calls[0]![3]).toStrictEqual({})
    expect(Object.isFrozen(guard.mock.calls[0]![3])).toBe(true)
    // With an address, the facts carry it, and the host's default does not apply.
    const outside = () => request({ origin: { clientAddress: '192.0.2.1', protocol: 'https' } })
    expect(await admit(hosted, outside, publicExport)).toMatchObject({
      ok: false,
      decision: { status: 403, code: 'export_restricted' },
    })
    expect(guard.mock.calls[1]![3]).toStrictEqual({ clientAddress: '192.0.2.1' })
  })

  test('before the body is parsed, a token in the header is not refused for a body it cannot see', async () => {
    const { policy, request } = await setup()
    const admission = await admit(policy, () => request({ bodyHasAccessToken: BODY_NOT_YET_PARSED }), OPEN)
    expect(admission).toMatchObject({ ok: true })
  })

  test('an authentication without a route names no operation', async () => {
    const { policy, request } = await setup()
    const admission = await admit(policy, () => request(), undefined)
    expect(admission.event).toBeDefined()
    expect(Object.hasOwn(admission.event!, 'operation')).toBe(false)
  })
})

describe('settle and end: one event per policy and request, with the status sent', () => {
  const event = (status: number, allowed = status < 400): DecisionEvent => ({ allowed, status })
  const principal = { kind: 'anonymous' } as never
  // An authentication's outcome (no route allow): its principal is for the policy's later steps.
  const allowed = (told?: DecisionEvent): Admission =>
    told === undefined
      ? { ok: true, principal, allow: undefined }
      : { ok: true, principal, allow: undefined, event: told }
  const metadata = { allowed: true, dataContent: false, operation: 'dataset.metadata' } as never
  const rows = { allowed: true, dataContent: true, operation: 'table.read' } as never
  const refused = (
    told: DecisionEvent,
    code: 'not_found' | 'insufficient_scope' = 'not_found',
  ): Admission => ({
    ok: false,
    decision: deny(code),
    event: told,
  })

  // Settled synchronously: answers the record the adapter must now end, if any.
  const keep = (admissions: Admissions, key: object, admission: Admission) =>
    admissions.settle(key, admission, (_settled, ending) => ending) as Admitted | undefined

  async function setupRecords() {
    const fixture = await setup()
    const records = new WeakMap<object, Admitted>()
    const admissions = new Admissions(fixture.policy, records)
    // A step whose answer is still to come: the body reader never answers.
    const decide = (key: object) => {
      const read = () => fixture.request({ bodyHasAccessToken: () => new Promise<boolean>(() => {}) })
      expect(admissions.begin(key, read, undefined)).toBeInstanceOf(Promise)
    }
    return { ...fixture, records, admissions, decide }
  }

  test('a first admission with an event makes a record for the adapter to end', async () => {
    const { admissions, records, events } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))
    expect(fresh).toEqual({ principal, event: event(200), telling: 'armed' })
    expect(records.get(request)).toBe(fresh)
    admissions.end(fresh!, 404)
    expect(events).toEqual([{ allowed: true, status: 404 }])
    admissions.end(fresh!, 500)
    expect(events).toHaveLength(1)
  })

  test('a later step replaces the event and keeps the record: the adapter ends it once', async () => {
    const { admissions, events } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))!
    expect(keep(admissions, request, refused(event(404)))).toBeUndefined()
    expect(fresh).toEqual({ principal, event: event(404), telling: 'armed' })
    admissions.end(fresh, 404)
    expect(events).toEqual([event(404)])
  })

  test("an end that comes while a step decides waits for that step's answer, told at once with its own status", async () => {
    const { admissions, events, decide } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))!
    decide(request)
    expect(fresh.telling).toBe('deciding')
    admissions.end(fresh, undefined)
    expect(events).toEqual([])
    // The response ended meanwhile: the adapter is handed the record, to end now.
    expect(keep(admissions, request, refused(event(404)))).toBe(fresh)
    admissions.end(fresh, undefined)
    expect(events).toEqual([event(404)])
  })

  test('each step that decides while the response ends is waited for, the last one told', async () => {
    const { admissions, events, decide } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))!
    // A step decided and settled before the end; the next one decides when the client goes.
    decide(request)
    expect(keep(admissions, request, allowed(event(200)))).toBeUndefined()
    decide(request)
    admissions.end(fresh, undefined)
    expect(events).toEqual([])
    expect(keep(admissions, request, refused(event(403), 'insufficient_scope'))).toBe(fresh)
    admissions.end(fresh, undefined)
    expect(events).toEqual([event(403)])
  })

  test("records an adapter keeps itself (Fastify's request field): armed when one first has an event, once", async () => {
    const { policy } = await setup()
    const record: Admitted = { principal: undefined, event: undefined, telling: undefined }
    const set = vi.fn()
    const admissions = new Admissions(policy, { get: () => record, set })
    expect(keep(admissions, {}, { ok: true, principal, allow: undefined })).toBeUndefined()
    expect(record.telling).toBeUndefined()
    expect(keep(admissions, {}, allowed(event(200)))).toBe(record)
    expect(record).toMatchObject({ principal, event: event(200), telling: 'armed' })
    expect(keep(admissions, {}, allowed(event(201)))).toBeUndefined()
    expect(record.event).toEqual(event(201))
    expect(set).not.toHaveBeenCalled()
  })

  test('begin marks the record only for an admission still to settle; no record, nothing to mark', async () => {
    const { admissions, request: read, decide } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))!
    expect(admissions.begin(request, () => read(), undefined)).not.toBeInstanceOf(Promise)
    expect(fresh.telling).toBe('armed')
    decide(request)
    expect(fresh.telling).toBe('deciding')
    expect(() => decide({})).not.toThrow()
  })

  test('a told record is never told again, whatever a later step keeps', async () => {
    const { admissions, events, decide } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))!
    admissions.end(fresh, 200)
    decide(request)
    expect(fresh.telling).toBe('told')
    expect(keep(admissions, request, refused(event(404)))).toBeUndefined()
    admissions.end(fresh, 404)
    expect(events).toEqual([event(200)])
  })

  test('a step that settles before the end leaves the record waiting for it, as before', async () => {
    const { admissions, events, decide } = await setupRecords()
    const request = {}
    const fresh = keep(admissions, request, allowed(event(200)))!
    decide(request)
    expect(keep(admissions, request, allowed(event(200)))).toBeUndefined()
    expect(events).toEqual([])
    admissions.end(fresh, 201)
    expect(events).toEqual([{ allowed: true, status: 201 }])
  })

  test('a later success replaces the principal; a denial keeps it', async () => {
    const { admissions, records } = await setupRecords()
    const silent = new Admissions(createAccessPolicy({ tokens: new MemoryTokenStore() }), records)
    const request = {}
    const other = { kind: 'token', userId: 'bob' } as never
    keep(silent, request, allowed())
    keep(silent, request, { ok: true, principal: other, allow: metadata })
    expect(admissions.principalOf(request)).toBe(other)
    keep(silent, request, { ok: false, decision: deny('not_found'), principal })
    expect(records.get(request)).toEqual({ principal: other, event: undefined })
  })

  test.each([
    ['an authenticated principal, for later steps', allowed(), { principal, event: undefined }],
    [
      "a guard's principal, which no later step asks for",
      { ok: true, principal, allow: metadata },
      undefined,
    ],
    ['a denial without an event', { ok: false, decision: deny('missing_token') }, undefined],
    [
      'a denial with an event',
      { ok: false, decision: deny('missing_token'), event: event(401) },
      { principal: undefined, event: event(401), telling: 'armed' },
    ],
  ] as [string, Admission, Admitted | undefined][])('without a record, %s', (_name, admission, stored) => {
    const records = new WeakMap<object, Admitted>()
    const admissions = new Admissions(createAccessPolicy({ tokens: new MemoryTokenStore() }), records)
    const request = {}
    const fresh = keep(admissions, request, admission)
    expect(records.get(request)).toEqual(stored)
    expect(fresh).toBe(stored?.event === undefined ? undefined : records.get(request))
  })

  test("a guard's data-content allow is kept for sendData; a later guard's allow replaces it, a denial does not", () => {
    const records = new WeakMap<object, Admitted>()
    const admissions = new Admissions(createAccessPolicy({ tokens: new MemoryTokenStore() }), records)
    const request = {}
    // No event, no principal to keep: still a record, for the data-content allow alone.
    expect(keep(admissions, request, { ok: true, principal, allow: rows })).toBeUndefined()
    expect(records.get(request)).toEqual({ principal, event: undefined, allow: rows })
    keep(admissions, request, { ok: false, decision: deny('not_found'), principal })
    expect(admissions.allowOf(request)).toBe(rows)
    keep(admissions, request, { ok: true, principal, allow: undefined })
    expect(admissions.allowOf(request)).toBe(rows)
    keep(admissions, request, { ok: true, principal, allow: metadata })
    expect(admissions.allowOf(request)).toBeUndefined()
    keep(admissions, request, { ok: true, principal, allow: rows })
    expect(admissions.allowOf(request)).toBe(rows)
    // A route whose allow carries no data content needs no record.
    const other = {}
    keep(admissions, other, { ok: true, principal, allow: metadata })
    expect(records.get(other)).toBeUndefined()
    expect(admissions.principalOf(other)).toBeUndefined()
  })

  test('each policy has its own admissions, shared by every adapter instance of that policy', async () => {
    const { policy } = await setup()
    const other = createAccessPolicy({ tokens: new MemoryTokenStore() })
    expect(admissionsOf(policy)).toBe(admissionsOf(policy))
    expect(admissionsOf(other)).not.toBe(admissionsOf(policy))
  })

  test('end tells nothing for a policy without a hook, and the very event when the status agrees', async () => {
    const { policy, events } = await setup()
    const told = event(200)
    new Admissions(policy).end({ principal: undefined, event: told }, 200)
    expect(events[0]).toBe(told)
    const silent = new Admissions(createAccessPolicy({ tokens: new MemoryTokenStore() }))
    expect(() => silent.end({ principal: undefined, event: told }, 200)).not.toThrow()
  })
})
