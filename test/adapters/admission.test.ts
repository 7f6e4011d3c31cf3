import { describe, expect, test, vi } from 'vitest'
import { type AdmissionRequest, accessTokenParameterDenial, admit } from '../../adapters/shared/admission.js'
import { createAccessPolicy, type DecisionEvent, type ErrorContext } from '../../src/index.js'
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
})
