/**
 * A host that guards its routes with JWT access tokens from its identity provider (a stand-in on
 * loopback serving a JWKS) gets, on Express, Fastify and Hono over real HTTP, exactly the answers a
 * `dap_` token with the same owner and scopes gets: levels, scopes, export caps and the network
 * fence. A token for another resource, an expired one and a forged one are 401 `invalid_token`.
 * A JWT bound to a DPoP key (`cnf.jkt`, RFC 9449 §6.1) passes only with a proof by that key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { JwtTokenStore } from '../../src/jwt/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { dpopKey, dpopProof } from '../dpop/proofs.js'
import { type StandInIdp, startStandInIdp } from '../jwt/stand-in-idp.js'
import { startApp } from './apps.js'
import { createFixture, type Fixture, NOW, REALM, RESOURCE, type TokenName } from './fixture.js'
import { sendRaw } from './http-client.js'
import { FRAMEWORKS, type Framework, type RunningApp } from './running-app.js'

const EXP = Math.floor(NOW / 1000) + 3600

// Each fixture token compared, and the scope claim of its JWT twin.
const TWINS: readonly (readonly [TokenName, string])[] = [
  ['alice', 'openid data.edit'],
  ['aliceOverview', 'data.overview profile'],
  ['bob', 'data.data'],
  ['carol', 'openid'],
]

const PATHS = [
  '/api/v1/datasets/acme/open',
  '/api/v1/datasets/acme/members',
  '/api/v1/datasets/acme/members/metadata',
  '/api/v1/datasets/acme/members/rows?n=2',
  '/api/v1/datasets/acme/capped/rows?n=5',
  '/api/v1/datasets/acme/capped/rows?n=6',
  '/api/v1/datasets/acme/capped/blob?bytes=100',
  '/api/v1/datasets/acme/capped/blob?bytes=101',
  '/api/v1/datasets/acme/fenced/rows?n=2',
  '/api/v1/users/alice/datasets',
]

let idp: StandInIdp
let fixture: Fixture
const jwts = new Map<TokenName, string>()
const apps = new Map<string, RunningApp>()

beforeAll(async () => {
  idp = await startStandInIdp()
  fixture = await createFixture()
  for (const [name, scope] of TWINS) {
    const sub = name === 'aliceOverview' ? 'alice' : name
    jwts.set(
      name,
      await idp.sign({ sub, scope, aud: RESOURCE, exp: EXP, client_id: 'cli' }, { alg: 'ES256' }),
    )
  }
  for (const framework of FRAMEWORKS) {
    const tokens = new JwtTokenStore({
      issuer: idp.issuer,
      jwksUri: idp.jwksUri,
      algorithms: ['ES256', 'RS256'],
      now: () => NOW,
    })
    const policy = createAccessPolicy({ tokens, realm: REALM, resource: RESOURCE, now: () => NOW })
    apps.set(`${framework} jwt`, await startApp(framework, { ...fixture, policy }, '127.0.0.1'))
    apps.set(`${framework} dap`, await startApp(framework, fixture, '127.0.0.1'))
  }
})

afterAll(async () => {
  await Promise.all([...apps.values()].map((app) => app.close()))
  await idp?.close()
})

async function get(app: string, path: string, token: string) {
  return send(app, path, { authorization: `Bearer ${token}` })
}

async function send(app: string, path: string, headers: Record<string, string>) {
  const answer = await sendRaw(apps.get(app)!.port, {
    path,
    headers: { ...headers, 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' },
  })
  return {
    status: answer.status,
    body: answer.body,
    wwwAuthenticate: answer.headers['www-authenticate'] ?? null,
  }
}

describe.each(FRAMEWORKS)('%s', (framework: Framework) => {
  test.each(TWINS.map(([name]) => name))(
    'a JWT decides as the dap_ token of %s on every route',
    async (name) => {
      for (const path of PATHS) {
        const [jwt, dap] = await Promise.all([
          get(`${framework} jwt`, path, jwts.get(name)!),
          get(`${framework} dap`, path, fixture.tokens[name]),
        ])
        expect({ path, ...jwt }).toEqual({ path, ...dap })
      }
    },
  )

  test.each([
    ['for another resource', { aud: 'https://tools.example.test/mcp' }],
    ['expired', { exp: Math.floor(NOW / 1000) - 60 }],
    ['from another issuer', { iss: 'https://evil.example/' }],
  ])('a JWT %s is 401 invalid_token', async (_name, claims) => {
    const token = await idp.sign({ sub: 'alice', scope: 'data.edit', aud: RESOURCE, exp: EXP, ...claims })
    const answer = await get(`${framework} jwt`, '/api/v1/datasets/acme/open', token)
    expect(answer.status).toBe(401)
    expect(answer.wwwAuthenticate).toContain('error="invalid_token"')
  })
})

describe.each(FRAMEWORKS)('a DPoP-bound JWT on %s', (framework: Framework) => {
  const path = '/api/v1/datasets/acme/open'
  // The policy's resource gives the proof's scheme and host; the path is the request's.
  const htu = `${new URL(RESOURCE).origin}${path}`
  const iat = Math.floor(NOW / 1000)

  test('passes with a proof by its cnf.jkt key; as Bearer, without a proof or by another key it is 401', async () => {
    const [key, other] = [await dpopKey(), await dpopKey()]
    const token = await idp.sign(
      { sub: 'alice', scope: 'data.edit', aud: RESOURCE, exp: EXP, cnf: { jkt: key.jkt } },
      { alg: 'ES256' },
    )
    const proofBy = (signer: typeof key) => dpopProof(signer, { method: 'GET', url: htu, token, iat })
    const app = `${framework} jwt`
    const bound = await send(app, path, { authorization: `DPoP ${token}`, dpop: await proofBy(key) })
    expect([bound.status, bound.wwwAuthenticate]).toEqual([200, null])
    // The same answer as the bearer twin of the same claims without the binding.
    const twin = await idp.sign(
      { sub: 'alice', scope: 'data.edit', aud: RESOURCE, exp: EXP },
      { alg: 'ES256' },
    )
    expect(bound.body).toBe((await get(app, path, twin)).body)

    const refusals: readonly (readonly [Record<string, string>, string])[] = [
      [{ authorization: `Bearer ${token}` }, 'error="invalid_token"'],
      [{ authorization: `Bearer ${token}`, dpop: await proofBy(key) }, 'error="invalid_token"'],
      [{ authorization: `DPoP ${token}` }, 'error="invalid_token"'],
      [{ authorization: `DPoP ${token}`, dpop: await proofBy(other) }, 'error="invalid_dpop_proof"'],
    ]
    for (const [headers, error] of refusals) {
      const refused = await send(app, path, headers)
      expect({ headers, status: refused.status }).toEqual({ headers, status: 401 })
      expect(refused.wwwAuthenticate).toMatch(/^DPoP realm="data-api", /)
      expect(refused.wwwAuthenticate).toContain(error)
    }
  })
})
