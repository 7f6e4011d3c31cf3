/**
 * The remote guard and DPoP (RFC 9449 §6.2): an introspection answer's `cnf.jkt` binds the token, so
 * the policy demands a proof by that key; an answer that cannot be bound as it says is a 503.
 */
import { beforeAll, describe, expect, test } from 'vitest'
import { IntrospectionTokenStore } from '../../src/introspection/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { type DpopKey, dpopKey, dpopProof } from '../dpop/proofs.js'

const ENDPOINT = 'https://as.example/oauth/introspect'
const RESOURCE = 'https://rs.example/api/v1'
const PATH = '/api/v1/datasets/acme/open'
const URL_ = `https://rs.example${PATH}`

let key: DpopKey
beforeAll(async () => {
  key = await dpopKey()
})

function remoteGuard(answer: (value: string) => Record<string, unknown>) {
  const fetch = (async (_url: string, init: RequestInit) =>
    new Response(JSON.stringify(answer(new URLSearchParams(init.body as string).get('token')!)), {
      headers: { 'content-type': 'application/json' },
    })) as unknown as typeof globalThis.fetch
  const tokens = new IntrospectionTokenStore({ endpoint: ENDPOINT, clientId: 'rs', clientSecret: 's', fetch })
  const errors: unknown[] = []
  const policy = createAccessPolicy({ tokens, resource: RESOURCE, onError: (error) => errors.push(error) })
  return { policy, errors }
}

const active = (extra: Record<string, unknown>) => () => ({
  active: true,
  scope: 'public data.data',
  sub: 'alice',
  client_id: 'cli',
  exp: Math.floor(Date.now() / 1000) + 3600,
  ...extra,
})

const request = (authorization: string, dpop: readonly string[] = []) => ({
  authorization: [authorization],
  dpop,
  method: 'GET',
  target: PATH,
  protocol: 'https',
  clientAddress: '203.0.113.9',
})

describe('IntrospectionTokenStore with DPoP-bound tokens', () => {
  test('cnf.jkt with token_type DPoP: the proof by that key is demanded', async () => {
    const { policy } = remoteGuard(active({ token_type: 'DPoP', cnf: { jkt: key.jkt } }))
    const value = generateTokenValue('oauth')
    const proof = await dpopProof(key, { method: 'GET', url: URL_, token: value })
    expect(await policy.authenticate(request(`DPoP ${value}`, [proof]))).toMatchObject({
      ok: true,
      principal: { userId: 'alice' },
    })
    expect(await policy.authenticate(request(`Bearer ${value}`))).toMatchObject({
      ok: false,
      decision: { status: 401, code: 'invalid_token', scheme: 'DPoP' },
    })
    expect(await policy.authenticate(request(`DPoP ${value}`))).toMatchObject({
      ok: false,
      decision: { status: 401, code: 'invalid_token' },
    })
    // The same proof once more: a replay.
    expect(await policy.authenticate(request(`DPoP ${value}`, [proof]))).toMatchObject({
      ok: false,
      decision: { status: 401, code: 'invalid_dpop_proof' },
    })
  })

  test('cnf.jkt binds even beside token_type Bearer: fail closed', async () => {
    const { policy } = remoteGuard(active({ token_type: 'Bearer', cnf: { jkt: key.jkt } }))
    const value = generateTokenValue('oauth')
    expect(await policy.authenticate(request(`Bearer ${value}`))).toMatchObject({
      ok: false,
      decision: { code: 'invalid_token' },
    })
  })

  test.each([
    ['token_type DPoP without cnf.jkt', active({ token_type: 'DPoP' }), 'oauth'],
    ['a cnf.jkt that is no thumbprint', active({ token_type: 'DPoP', cnf: { jkt: 'short' } }), 'oauth'],
    ['a cnf that is not an object', active({ token_type: 'DPoP', cnf: 'x' }), 'oauth'],
    [
      'an mTLS binding (cnf without jkt) beside Bearer',
      active({ token_type: 'Bearer', cnf: { 'x5t#S256': 'abc' } }),
      'oauth',
    ],
    [
      'a jkt beside another binding',
      active({ token_type: 'DPoP', cnf: { jkt: 'A'.repeat(43), 'x5t#S256': 'abc' } }),
      'oauth',
    ],
    ['a bound API token', active({ token_type: 'DPoP', cnf: { jkt: 'A'.repeat(43) } }), 'api'],
  ] as const)('%s is a 503 reported to onError, never an allow', async (_name, answer, kind) => {
    const { policy, errors } = remoteGuard(answer)
    const value = generateTokenValue(kind)
    const proof = await dpopProof(key, { method: 'GET', url: URL_, token: value })
    const result = await policy.authenticate(request(`DPoP ${value}`, [proof]))
    expect(result).toMatchObject({ ok: false, decision: { status: 503 } })
    expect((errors[0] as Error).name).toBe('TokenStoreError')
  })
})
