/**
 * Issue 28 on the reference server, on Express, Fastify and Hono: discovery documents (RFC 8414 at
 * the root and path-inserted, RFC 9728), revocation (RFC 7009) and introspection (RFC 7662) over
 * HTTP, `resource_metadata` on every 401, `invalid_client` for a refresh without client
 * authentication, localhost redirect URIs for a client registered with one, and the codes of
 * rate-limited OAuth answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { SCOPES } from '../../src/index.js'
import { formWith, PageAgent } from './oauth-agent.js'
import {
  authorizeUrl,
  BOB_PASSWORD,
  basic,
  CLI_SECRET,
  callApi,
  DEVICE_GRANT,
  OAUTH_SEED,
  pkcePair,
  postForm,
  RS_SECRET,
  tokensThroughPages,
} from './oauth-fixtures.js'
import { useOAuthServers } from './oauth-harness.js'

const { origin: originOf } = useOAuthServers()
const CLI_AUTH = { authorization: basic('cli', CLI_SECRET) }
const cliTokens = (origin: string, scope?: string) => tokensThroughPages(origin, scope)
const RS_AUTH = { authorization: basic('rs', RS_SECRET) }
const API_PATH = '/api/v1/datasets/alice/diary'

describe.each(FRAMEWORKS)('on %s', (framework) => {
  const origin = () => originOf(framework)

  test('the metadata lists every endpoint and only what the server supports (RFC 8414)', async () => {
    const response = await fetch(`${origin()}/.well-known/oauth-authorization-server`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      issuer: origin(),
      authorization_endpoint: `${origin()}/oauth/authorize`,
      token_endpoint: `${origin()}/oauth/token`,
      device_authorization_endpoint: `${origin()}/oauth/device_authorization`,
      revocation_endpoint: `${origin()}/oauth/revoke`,
      introspection_endpoint: `${origin()}/oauth/introspect`,
      registration_endpoint: `${origin()}/oauth/register`,
      client_id_metadata_document_supported: true,
      scopes_supported: SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      protected_resources: [`${origin()}/api/v1`, `${origin()}/mcp`],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'],
    })
  })

  test('every 401 names the protected-resource metadata, which names the issuer (RFC 9728)', async () => {
    const denied = await fetch(`${origin()}${API_PATH}`)
    await denied.arrayBuffer()
    const metadataUrl = `${origin()}/.well-known/oauth-protected-resource/api/v1`
    expect(denied.status).toBe(401)
    expect(denied.headers.get('www-authenticate')).toBe(
      `Bearer realm="data-api", scope="data.overview", resource_metadata="${metadataUrl}"`,
    )
    const metadata = await fetch(metadataUrl)
    expect(await metadata.json()).toEqual({
      resource: `${origin()}/api/v1`,
      authorization_servers: [origin()],
      scopes_supported: SCOPES,
      bearer_methods_supported: ['header'],
    })
    const root = await fetch(`${origin()}/.well-known/oauth-protected-resource`)
    expect(await root.json()).toMatchObject({ resource: origin(), authorization_servers: [origin()] })
  })

  test('revoking a refresh token ends its family and its access tokens, on the API at once', async () => {
    const first = await cliTokens(origin())
    const rotated = await postForm(
      `${origin()}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      CLI_AUTH,
    )
    const second = rotated.body as { access_token: string; refresh_token: string }
    expect(await callApi(origin(), API_PATH, second.access_token)).toBe(200)
    const revoked = await postForm(
      `${origin()}/oauth/revoke`,
      { token: second.refresh_token, token_type_hint: 'refresh_token' },
      CLI_AUTH,
    )
    expect(revoked).toMatchObject({ status: 200, body: {} })
    expect(revoked.headers.get('cache-control')).toBe('no-store')
    expect(await callApi(origin(), API_PATH, first.access_token)).toBe(401)
    expect(await callApi(origin(), API_PATH, second.access_token)).toBe(401)
    const refresh = await postForm(
      `${origin()}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: second.refresh_token },
      CLI_AUTH,
    )
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' })
    // Already revoked, then unknown: 200 all the same.
    expect(
      (await postForm(`${origin()}/oauth/revoke`, { token: second.refresh_token }, CLI_AUTH)).status,
    ).toBe(200)
  })

  test('introspection describes an active token to the resource server, and then not', async () => {
    const tokens = await cliTokens(origin(), 'data.metadata')
    const active = await postForm(`${origin()}/oauth/introspect`, { token: tokens.access_token }, RS_AUTH)
    expect(active.status).toBe(200)
    expect(active.body).toMatchObject({
      active: true,
      scope: 'public data.metadata',
      client_id: 'cli',
      sub: 'alice',
      username: 'alice',
      token_type: 'Bearer',
    })
    expect(JSON.stringify(active.body)).not.toContain(tokens.access_token)
    await postForm(`${origin()}/oauth/revoke`, { token: tokens.access_token }, CLI_AUTH)
    const inactive = await postForm(`${origin()}/oauth/introspect`, { token: tokens.access_token }, RS_AUTH)
    expect(inactive).toMatchObject({ status: 200, body: { active: false } })
    // The token's own client is no resource server.
    const refused = await postForm(`${origin()}/oauth/introspect`, { token: tokens.access_token }, CLI_AUTH)
    expect(refused).toMatchObject({ status: 400, body: { error: 'unauthorized_client' } })
  })

  test('a CLI that signed in with the device flow signs out: its refresh token, chain and access token', async () => {
    const { verifier, challenge } = pkcePair()
    const started = await postForm(`${origin()}/oauth/device_authorization`, {
      client_id: 'native',
      scope: 'data.metadata',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const device = started.body as { device_code: string; user_code: string; verification_uri: string }
    const browser = new PageAgent(origin())
    const entry = await browser.get(device.verification_uri)
    const signIn = await browser.submit(formWith(entry.body, 'user_code'), { user_code: device.user_code })
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'bob',
      password: BOB_PASSWORD,
    })
    expect((await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })).status).toBe(
      200,
    )
    const polled = await postForm(`${origin()}/oauth/token`, {
      grant_type: DEVICE_GRANT,
      device_code: device.device_code,
      client_id: 'native',
      code_verifier: verifier,
    })
    const tokens = polled.body as { access_token: string; refresh_token: string }
    expect(await callApi(origin(), '/api/v1/datasets/acme/claims/metadata', tokens.access_token)).toBe(200)
    // `cli logout`: a public client names itself.
    const out = await postForm(`${origin()}/oauth/revoke`, {
      token: tokens.refresh_token,
      client_id: 'native',
    })
    expect(out.status).toBe(200)
    expect(await callApi(origin(), '/api/v1/datasets/acme/claims/metadata', tokens.access_token)).toBe(401)
  })

  test('a refresh without client authentication is invalid_client (401, Basic challenge)', async () => {
    const tokens = await cliTokens(origin())
    const answer = await postForm(`${origin()}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    expect(answer).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="oauth"')
  })
})

// ---- servers of their own: a path-prefixed issuer, low limits, a localhost client -------------

const servers: StartedServer[] = []
const start = async (options: Partial<Parameters<typeof startServer>[0]>, seed = OAUTH_SEED) => {
  const server = await startServer({ seed: await loadSeed(seed), host: '127.0.0.1', port: 0, ...options })
  servers.push(server)
  return server
}
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
})

describe.each(FRAMEWORKS)(
  'a path-prefixed issuer on %s (--public-url https://data.example.org/dap)',
  (framework) => {
    let server: StartedServer
    beforeAll(async () => {
      server = await start({ framework, publicUrl: 'https://data.example.org/dap' })
    })

    test.each([
      ['/.well-known/oauth-authorization-server/dap', 'issuer', 'https://data.example.org/dap'],
      ['/.well-known/oauth-authorization-server', 'issuer', 'https://data.example.org/dap'],
      ['/.well-known/oauth-protected-resource/dap/api/v1', 'resource', 'https://data.example.org/dap/api/v1'],
      ['/.well-known/oauth-protected-resource/dap', 'resource', 'https://data.example.org/dap'],
      ['/.well-known/oauth-protected-resource/dap/mcp', 'resource', 'https://data.example.org/dap/mcp'],
    ])('%s answers its %s: %s', async (path, field, value) => {
      const response = await fetch(`${server.url}${path}`)
      expect(response.status).toBe(200)
      expect(((await response.json()) as Record<string, unknown>)[field]).toBe(value)
    })

    test('the root protected-resource location is not served: it would describe the whole host (RFC 9728 §3.3)', async () => {
      const response = await fetch(`${server.url}/.well-known/oauth-protected-resource`)
      await response.arrayBuffer()
      expect(response.status).toBe(404)
    })

    test('the 401 challenge names the path-inserted resource metadata', async () => {
      const denied = await fetch(`${server.url}${API_PATH}`)
      await denied.arrayBuffer()
      expect(denied.headers.get('www-authenticate')).toBe(
        'Bearer realm="data-api", scope="data.overview", resource_metadata="https://data.example.org/.well-known/oauth-protected-resource/dap/api/v1"',
      )
    })

    test('the MCP endpoint under the prefix names its own metadata', async () => {
      const denied = await fetch(`${server.url}/dap/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
      await denied.arrayBuffer()
      expect(denied.status).toBe(401)
      expect(denied.headers.get('www-authenticate')).toBe(
        'Bearer realm="data-api", scope="data.overview", resource_metadata="https://data.example.org/.well-known/oauth-protected-resource/dap/mcp"',
      )
    })
  },
)

describe.each(FRAMEWORKS)('rate-limited OAuth answers on %s', (framework) => {
  let server: StartedServer
  beforeAll(async () => {
    server = await start({
      framework,
      limits: { token: { max: 1, windowMs: 60_000 }, introspection: { max: 1, windowMs: 60_000 } },
    })
  })

  test.each([
    [
      'a refresh',
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'web' },
      'temporarily_unavailable',
    ],
    [
      'a device-code poll',
      '/oauth/token',
      { grant_type: DEVICE_GRANT, device_code: 'x', client_id: 'web' },
      'slow_down',
    ],
    ['a revocation', '/oauth/revoke', { token: 'x', client_id: 'web' }, 'temporarily_unavailable'],
    ['an introspection', '/oauth/introspect', { token: 'x' }, 'temporarily_unavailable'],
  ] as const)('%s over the limit: 429, Retry-After, %s', async (_name, path, fields, error) => {
    // Each row speaks from an address of its own, through the loopback peer (no proxy trusted here):
    // the limit is per address, so the second request is over it.
    const url = `${server.url}${path}`
    await postForm(url, fields)
    const limited = await postForm(url, fields)
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({ error })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe.each(FRAMEWORKS)('introspection has a budget of its own on %s', (framework) => {
  let server: StartedServer
  beforeAll(async () => {
    server = await start({
      framework,
      limits: {
        token: { max: 1, windowMs: 60_000 },
        introspection: { max: 3, windowMs: 60_000 },
        introspectionInactive: { max: 3, windowMs: 60_000 },
      },
    })
  })

  test("only for a resource server whose secret was proven: everyone else counts against the token endpoint's", async () => {
    const introspect = (extra: { authorization?: string } = {}) =>
      postForm(`${server.url}/oauth/introspect`, { token: 'x' }, extra)
    // The resource server's first call proves its secret, counted against the token endpoint's limit.
    expect((await introspect(RS_AUTH)).status).toBe(200)
    // That limit is now spent: a caller without credentials, or with a wrong secret, is over it.
    expectLimited(await introspect())
    expectLimited(await introspect({ authorization: basic('rs', 'wrong') }))
    // The proven resource server goes on, up to its own limit (for inactive answers, here).
    for (let i = 0; i < 3; i++) expect((await introspect(RS_AUTH)).status).toBe(200)
    expectLimited(await introspect(RS_AUTH))
  })
})

describe.each(FRAMEWORKS)(
  "a resource server relaying junk spends its junk budget, not its users' on %s",
  (framework) => {
    let server: StartedServer
    beforeAll(async () => {
      server = await start({
        framework,
        limits: {
          introspection: { max: 4, windowMs: 60_000 },
          introspectionInactive: { max: 2, windowMs: 60_000 },
        },
      })
    })

    test('inactive answers are counted apart from active ones', async () => {
      const { access_token: real } = await cliTokens(server.url, 'data.metadata')
      const introspect = (token: string) => postForm(`${server.url}/oauth/introspect`, { token }, RS_AUTH)
      // The first call proves the secret (counted as the token endpoint's).
      expect((await introspect(real)).body).toMatchObject({ active: true })
      for (let i = 0; i < 2; i++) expect((await introspect(`junk${i}`)).body).toEqual({ active: false })
      expectLimited(await introspect('junk2'))
      expectLimited(await introspect('junk3'))
      // Junk spent its own budget only: the real token is answered up to the active budget.
      for (let i = 0; i < 4; i++) expect((await introspect(real)).body).toMatchObject({ active: true })
      expectLimited(await introspect(real))
    })
  },
)

function expectLimited(answer: { status: number; body: unknown }) {
  expect(answer.status).toBe(429)
  expect(answer.body).toMatchObject({ error: 'temporarily_unavailable' })
}

describe.each(FRAMEWORKS)(
  'a client registered with a localhost redirect URI on %s (RFC 8252 §7.3)',
  (framework) => {
    let server: StartedServer
    beforeAll(async () => {
      server = await start(
        { framework },
        { ...OAUTH_SEED, clients: [{ id: 'r', redirectUris: ['http://localhost:1410/'] }] },
      )
    })

    test.each([
      ['http://localhost:1410/', 200],
      ['http://localhost:53682/', 200],
      ['http://localhost:53682/other', 400],
      ['http://127.0.0.1:1410/', 400],
    ])('%s → %s', async (redirectUri, status) => {
      const url = authorizeUrl(server.url, {
        response_type: 'code',
        client_id: 'r',
        redirect_uri: redirectUri,
        scope: 'data.overview',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      })
      const response = await fetch(url, { redirect: 'manual' })
      await response.arrayBuffer()
      expect(response.status).toBe(status)
    })
  },
)
