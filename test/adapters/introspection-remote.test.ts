/**
 * A remote resource server on `IntrospectionTokenStore`, on Express, Fastify and Hono over real
 * HTTP: a token the issuer introspects with `aud` naming the policy's resource is accepted, one for
 * another resource is 401 `invalid_token`; a network past its miss budget is 429 with `Retry-After`,
 * byte for byte alike on the three, while a token already seen active keeps answering 200.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { IntrospectionTokenStore } from '../../src/introspection/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { startApp } from './apps.js'
import { createFixture, NOW, REALM } from './fixture.js'
import { sendRaw } from './http-client.js'
import { FRAMEWORKS, type Framework, type RunningApp } from './running-app.js'

const A = 'https://a.example/api/v1'
const B = 'https://b.example/api/v1'
const PATH = '/api/v1/users/alice/datasets'

// What the fake issuer knows: each active token value and its `aud`.
const audiences = new Map<string, unknown>()
const introspected: string[] = []

const fetch = (async (_url: string, init: RequestInit) => {
  const token = new URLSearchParams(init.body as string).get('token')!
  introspected.push(token)
  const known = audiences.has(token)
  const aud = audiences.get(token)
  const body = known
    ? {
        active: true,
        scope: 'public data.data',
        sub: 'alice',
        token_type: 'Bearer',
        client_id: 'cli',
        ...(aud === undefined ? {} : { aud }),
      }
    : { active: false }
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })
}) as unknown as typeof globalThis.fetch

function issued(aud: unknown): string {
  const value = generateTokenValue('oauth')
  audiences.set(value, aud)
  return value
}

const apps = new Map<Framework, RunningApp>()

beforeAll(async () => {
  const fixture = await createFixture()
  for (const framework of FRAMEWORKS) {
    // One store per app, so that each framework meets the same budgets from the start.
    const tokens = new IntrospectionTokenStore({
      endpoint: 'https://as.example/oauth/introspect',
      clientId: 'rs',
      clientSecret: 's',
      fetch,
      now: () => NOW,
      missesPerNetwork: 2,
      missesTotal: 20,
    })
    const policy = createAccessPolicy({ tokens, realm: REALM, now: () => NOW, resource: A })
    apps.set(framework, await startApp(framework, { ...fixture, policy }, '127.0.0.1'))
  }
})

afterAll(async () => {
  await Promise.all([...apps.values()].map((app) => app.close()))
})

async function get(framework: Framework, token: string, network: string) {
  const answer = await sendRaw(apps.get(framework)!.port, {
    path: PATH,
    headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': network, 'x-forwarded-proto': 'https' },
  })
  return {
    status: answer.status,
    body: answer.status === 200 ? '' : answer.body,
    wwwAuthenticate: answer.headers['www-authenticate'] ?? null,
    retryAfter: answer.headers['retry-after'] ?? null,
  }
}

const OTHER_RESOURCE = {
  status: 401,
  body: JSON.stringify({ error: { status: 401, message: 'Invalid credentials', code: 'invalid_token' } }),
  wwwAuthenticate: `Bearer realm="${REALM}", error="invalid_token", error_description="the token is for another resource", resource_metadata="https://a.example/.well-known/oauth-protected-resource/api/v1"`,
  retryAfter: null,
}

describe.each(FRAMEWORKS)('%s on introspection', (framework) => {
  test.each([
    ['a string naming the resource', A, 200, '198.51.100.1'],
    ['an array naming it', [B, A], 200, '198.51.100.2'],
    ['a string naming another resource', B, 401, '198.51.100.3'],
    ['an array naming only others', [B], 401, '198.51.100.4'],
  ])('aud as %s (%j) → %s', async (_name, aud, status, network) => {
    const answer = await get(framework, issued(aud), network)
    if (status === 200) expect(answer.status).toBe(200)
    else expect(answer).toEqual(OTHER_RESOURCE)
  })
})

test('a network past its miss budget is 429 with Retry-After on every framework, alike; a known token still answers', async () => {
  const answers = await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      const known = issued(A)
      expect((await get(framework, known, '203.0.113.50')).status).toBe(200)
      // The known token spent one miss of 203.0.113.50; one more made-up token spends the rest.
      expect((await get(framework, generateTokenValue('api'), '203.0.113.50')).status).toBe(401)
      const before = introspected.length
      const refused = await get(framework, generateTokenValue('api'), '203.0.113.50')
      expect(introspected.length).toBe(before)
      expect((await get(framework, known, '203.0.113.50')).status).toBe(200)
      return refused
    }),
  )
  expect(answers[0]).toEqual({
    status: 429,
    body: JSON.stringify({ error: { status: 429, message: 'Too many requests', code: 'rate_limited' } }),
    wwwAuthenticate: null,
    retryAfter: '30',
  })
  expect(answers[1]).toEqual(answers[0])
  expect(answers[2]).toEqual(answers[0])
})
