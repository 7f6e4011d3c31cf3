import { describe, expect, test, vi } from 'vitest'
import {
  type Admission,
  type AdmissionRequest,
  accessTokenParameterDenial,
  admit,
  BODY_NOT_YET_PARSED,
  tellDecision,
  whenAdmitted,
} from '../../adapters/shared/admission.js'
import {
  type AccessPolicy,
  compileExportRestrictions,
  createAccessPolicy,
  type DecisionEvent,
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

const OPEN = {
  operation: 'dataset.metadata' as const,
  resolve: () => ({ kind: 'dataset' as const, publicLevel: 'data' as const }),
}

describe('admit: the one admission sequence', () => {
  test('an allow carries the principal and the route allow, and is told once', async () => {
    const { policy, events, request, tokenId } = await setup()
    const admission = await admit(policy, () => request(), OPEN, 'final')
    expect(admission).toMatchObject({ ok: true, principal: { userId: 'alice' }, allow: { allowed: true } })
    expect(events).toEqual([
      {
        allowed: true,
        status: 200,
        operation: 'dataset.metadata',
        userId: 'alice',
        tokenId,
        clientAddress: '127.0.0.1',
      },
    ])
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
      'final',
    )
    expect(admission).toMatchObject({ ok: false, decision: { status: 503, code: 'service_unavailable' } })
    expect(errors).toEqual([[broken, { stage: 'adapter' }]])
    expect(events).toEqual([{ allowed: false, status: 503, code: 'service_unavailable' }])
  })

  test('a body reader that throws is a 503, never an allow', async () => {
    const { policy, errors, request } = await setup()
    const broken = new Error('the body parser threw')
    const bodyHasAccessToken = () => Promise.reject(broken)
    const admission = await admit(policy, () => request({ bodyHasAccessToken }), OPEN, 'final')
    expect(admission).toMatchObject({ ok: false, decision: { status: 503 } })
    expect(errors).toEqual([[broken, { stage: 'adapter' }]])
  })

  test('the body is read only when a token is in the header', async () => {
    const { policy, request } = await setup()
    const bodyHasAccessToken = vi.fn(() => true)
    const anonymous = await admit(
      policy,
      () => request({ authorization: [], bodyHasAccessToken }),
      OPEN,
      'final',
    )
    expect(anonymous).toMatchObject({ ok: false, decision: { status: 401 } })
    expect(bodyHasAccessToken).not.toHaveBeenCalled()
    const twice = await admit(policy, () => request({ bodyHasAccessToken }), OPEN, 'final')
    expect(twice).toMatchObject({ ok: false, decision: { status: 400, code: 'invalid_request' } })
    expect(bodyHasAccessToken).toHaveBeenCalledOnce()
  })

  test("'denial' telling holds an allow's event back for the adapter, and tells a denial at once", async () => {
    const { policy, events, request } = await setup()
    const admitted = await admit(policy, () => request(), undefined, 'denial')
    expect(events).toEqual([])
    expect(admitted).toMatchObject({ ok: true, held: { allowed: true, status: 200, userId: 'alice' } })
    await admit(policy, () => request({ authorization: [] }), undefined, 'denial')
    expect(events).toEqual([
      { allowed: false, status: 401, code: 'missing_token', clientAddress: '127.0.0.1' },
    ])
  })

  test('a principal authenticated by an earlier step is not authenticated again', async () => {
    const { policy, request } = await setup()
    const first = await admit(policy, () => request(), undefined, 'final')
    if (!first.ok) throw new Error('expected an allow')
    const again = await admit(
      policy,
      () => request({ authorization: [], principal: first.principal }),
      OPEN,
      'final',
    )
    expect(again).toMatchObject({ ok: true, principal: first.principal })
  })

  test('accessTokenParameterDenial: 400 next to a bearer token, nothing otherwise', () => {
    expect(accessTokenParameterDenial(['Bearer abc'])).toMatchObject({ status: 400, code: 'invalid_request' })
    expect(accessTokenParameterDenial([])).toBeUndefined()
    expect(accessTokenParameterDenial(['Basic abc'])).toBeUndefined()
  })

  test('a principal from an earlier step with a token still in the header is refused for a body token', async () => {
    const { policy, request } = await setup()
    const first = await admit(policy, () => request(), undefined, 'final')
    if (!first.ok) throw new Error('expected an allow')
    const bodyHasAccessToken = vi.fn(() => true)
    const twice = await admit(
      policy,
      () => request({ principal: first.principal, bodyHasAccessToken }),
      OPEN,
      'final',
    )
    expect(twice).toMatchObject({ ok: false, decision: { status: 400, code: 'invalid_request' } })
    const headerless = await admit(
      policy,
      () => request({ authorization: [], principal: first.principal, bodyHasAccessToken }),
      OPEN,
      'final',
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
      const first = await admit(policy, () => request(), undefined, 'final')
      if (!first.ok) throw new Error('expected an allow')
      const bodyHasAccessToken = vi.fn(() => true)
      const read = () =>
        request({
          principal: first.principal,
          tokenInHeader,
          bodyHasAccessToken,
          ...(authorization === undefined ? {} : { authorization }),
        })
      expect(await admit(policy, read, OPEN, 'final')).toMatchObject(expected)
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
    expect(await admit(policy, read, OPEN, 'final')).toMatchObject({
      ok: true,
      principal: { kind: 'anonymous' },
    })
    expect(bodyHasAccessToken).not.toHaveBeenCalled()
  })
})

describe('admit: synchronous when every step is', () => {
  test('a memory store and a resolver that returns its resource answer without a promise', async () => {
    const { policy, request } = await setup()
    const admission = admit(policy, () => request(), OPEN, 'final')
    expect(admission).not.toBeInstanceOf(Promise)
    expect(admission).toMatchObject({ ok: true, allow: { allowed: true } })
    const denied = admit(policy, () => request({ authorization: ['Bearer dap_nope'] }), OPEN, 'final')
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
    const admission = admit(slowPolicy, read, requirement, 'final')
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
    expect(admit(policy, () => request(), throwing, 'final')).toMatchObject({
      ok: false,
      decision: { status: 503 },
    })
    expect(await admit(policy, () => request(), rejecting, 'final')).toMatchObject({
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
    expect(await admit(policy, () => request(), requirement, 'final')).toMatchObject({ ok: true })
  })

  test('a policy-shaped object not made by createAccessPolicy runs through its public methods', async () => {
    const { policy, request } = await setup()
    const authenticate = vi.fn(policy.authenticate)
    const guard = vi.fn(policy.guard)
    const wrapped: AccessPolicy = { ...policy, authenticate, guard }
    expect(await admit(wrapped, () => request(), OPEN, 'final')).toMatchObject({ ok: true })
    const missing = { ...OPEN, resolve: () => undefined }
    expect(await admit(wrapped, () => request(), missing, 'final')).toMatchObject({
      ok: false,
      decision: { status: 404 },
    })
    expect(authenticate).toHaveBeenCalledTimes(2)
    expect(guard).toHaveBeenCalledTimes(2)
  })
})

describe('whenAdmitted: hands an admission on now or later, failures to the error path', () => {
  const ADMITTED: Admission = Object.freeze({
    ok: true,
    principal: { kind: 'anonymous' } as never,
    allow: undefined,
  })

  test('a settled admission is handed on synchronously', () => {
    const next = vi.fn()
    const fail = vi.fn()
    whenAdmitted(ADMITTED, next, fail)
    expect(next).toHaveBeenCalledWith(ADMITTED)
    expect(fail).not.toHaveBeenCalled()
  })

  test('a pending admission is handed on when it settles', async () => {
    const next = vi.fn()
    whenAdmitted(Promise.resolve(ADMITTED), next, vi.fn())
    expect(next).not.toHaveBeenCalled()
    await vi.waitFor(() => expect(next).toHaveBeenCalledWith(ADMITTED))
  })

  test.each([
    ['settled', (a: Admission) => a],
    ['pending', (a: Admission) => Promise.resolve(a)],
  ])('whatever the continuation throws (%s) goes to fail, once', async (_, wrap) => {
    const broken = new Error('the response could not be written')
    const fail = vi.fn()
    whenAdmitted(
      wrap(ADMITTED),
      () => {
        throw broken
      },
      fail,
    )
    await vi.waitFor(() => expect(fail).toHaveBeenCalledWith(broken))
    expect(fail).toHaveBeenCalledOnce()
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
      'final',
    )
    expect(admission).toMatchObject(expected)
  })

  test('before the body is parsed, a token in the header is not refused for a body it cannot see', async () => {
    const { policy, request } = await setup()
    const admission = await admit(
      policy,
      () => request({ bodyHasAccessToken: BODY_NOT_YET_PARSED }),
      OPEN,
      'final',
    )
    expect(admission).toMatchObject({ ok: true })
  })

  test('an authentication without a route names no operation', async () => {
    const { policy, events, request } = await setup()
    await admit(policy, () => request(), undefined, 'final')
    expect(events).toHaveLength(1)
    expect(Object.hasOwn(events[0]!, 'operation')).toBe(false)
  })

  test('tellDecision tells the policy hook, and nothing without one', async () => {
    const { policy, events } = await setup()
    const event: DecisionEvent = { allowed: true, status: 200, userId: 'alice' }
    tellDecision(policy, event)
    expect(events).toEqual([event])
    const silent = createAccessPolicy({ tokens: new MemoryTokenStore() })
    expect(() => tellDecision(silent, event)).not.toThrow()
  })
})
