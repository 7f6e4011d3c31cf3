/**
 * `POST /oauth/token`, `POST /oauth/device_authorization` and the metadata document over HTTP, on
 * Express, Fastify and Hono: form and JSON bodies, client authentication (Basic or body), the
 * RFC 6749 §5.2 errors with `Cache-Control: no-store`, refresh tokens for registered offline
 * clients only, tokens that authenticate on the API at once and expire by the clock, and HTTPS.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { formWith, PageAgent } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  basic,
  CLI_REDIRECT,
  CLI_SECRET,
  callApi,
  DEVICE_GRANT,
  oauthSeed,
  pkcePair,
  postForm,
  postJson,
} from './oauth-fixtures.js'
import { useOAuthServers } from './oauth-harness.js'

const { clock, origin: originOf } = useOAuthServers()

/** Sends one raw request, so that a header can repeat. */
function rawPost(
  url: string,
  headers: Record<string, string | string[]>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: 'POST',
        path: target.pathname,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' },
        agent: false,
      },
      (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
        )
        incoming.on('error', reject)
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

describe.each(FRAMEWORKS)('the OAuth JSON endpoints on %s', (framework) => {
  const origin = () => originOf(framework)
  const tokenUrl = () => `${origin()}/oauth/token`
  const deviceUrl = () => `${origin()}/oauth/device_authorization`

  /** Starts a device grant and approves (or denies) it through the pages as alice. */
  async function startDeviceGrant(fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const { verifier, challenge } = pkcePair()
    const started = await postForm(
      deviceUrl(),
      { scope: 'data.overview', code_challenge: challenge, code_challenge_method: 'S256', ...fields },
      headers,
    )
    expect(started.status).toBe(200)
    return { verifier, body: started.body as Record<string, string | number> }
  }

  async function decideThroughPages(userCode: string, decision: 'approve' | 'deny') {
    const agent = new PageAgent(origin())
    const entry = await agent.get('/device')
    const next = await agent.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
    const consent = await agent.submit(formWith(next.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const done = await agent.submit(formWith(consent.body, 'decision'), {}, { button: decision })
    expect(done.status).toBe(200)
  }

  describe('bodies', () => {
    test('the device authorization endpoint takes a form body', async () => {
      const { body } = await startDeviceGrant(
        { client_id: 'cli' },
        { authorization: basic('cli', CLI_SECRET) },
      )
      expect(body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
      expect(body.verification_uri).toBe(`${origin()}/device`)
      expect(body.verification_uri_complete).toBe(`${origin()}/device?user_code=${body.user_code}`)
      expect(body.interval).toBe(5)
      expect(body.expires_in).toBe(600)
      expect(typeof body.device_code).toBe('string')
    })

    test('the device authorization endpoint takes a JSON body', async () => {
      const { challenge } = pkcePair()
      const answer = await postJson(deviceUrl(), {
        scope: 'data.metadata wokflow.read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })
      expect(answer.status).toBe(200)
      expect(answer.headers.get('cache-control')).toBe('no-store')
      expect(answer.headers.get('pragma')).toBe('no-cache')
    })

    test('the token endpoint takes a JSON body', async () => {
      const { verifier, body } = await startDeviceGrant()
      await decideThroughPages(body.user_code as string, 'approve')
      const answer = await postJson(tokenUrl(), {
        grant_type: DEVICE_GRANT,
        device_code: body.device_code,
        code_verifier: verifier,
      })
      expect(answer.status).toBe(200)
      expect(answer.body).toMatchObject({
        token_type: 'Bearer',
        scope: 'public data.overview',
        expires_in: 3600,
      })
      expect(answer.headers.get('cache-control')).toBe('no-store')
      expect(answer.headers.get('pragma')).toBe('no-cache')
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
    })

    const BAD_BODIES: readonly [string, string | undefined, string][] = [
      ['no grant_type', 'application/x-www-form-urlencoded', 'code=abc'],
      [
        'a repeated parameter',
        'application/x-www-form-urlencoded',
        'grant_type=authorization_code&grant_type=refresh_token',
      ],
      ['malformed JSON', 'application/json', '{"grant_type":'],
      ['a JSON array', 'application/json', '["grant_type"]'],
      ['a JSON value that is not a string', 'application/json', '{"grant_type":42}'],
      ['a JSON array of two values', 'application/json', '{"grant_type":["a","b"]}'],
      ['another media type', 'text/plain', 'grant_type=authorization_code'],
      ['no body at all', undefined, ''],
    ]

    test.each(BAD_BODIES)('%s → 400 invalid_request', async (_title, contentType, body) => {
      const response = await fetch(tokenUrl(), {
        method: 'POST',
        headers: contentType === undefined ? {} : { 'content-type': contentType },
        body,
      })
      expect(response.status).toBe(400)
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(response.headers.get('pragma')).toBe('no-cache')
      expect(await response.json()).toMatchObject({ error: 'invalid_request' })
    })

    test('an unknown grant type → unsupported_grant_type', async () => {
      const answer = await postForm(tokenUrl(), { grant_type: 'password', username: 'alice', password: 'x' })
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe('unsupported_grant_type')
    })

    test('device authorization errors: PKCE and scope', async () => {
      const { challenge } = pkcePair()
      const cases: readonly [Record<string, string>, string][] = [
        [{ scope: 'data.data' }, 'invalid_request'],
        [
          { scope: 'data.data', code_challenge: challenge, code_challenge_method: 'plain' },
          'invalid_request',
        ],
        [{ scope: 'data.data', code_challenge: challenge }, 'invalid_request'],
        [
          { scope: 'workflow.read', code_challenge: challenge, code_challenge_method: 'S256' },
          'invalid_scope',
        ],
      ]
      for (const [fields, error] of cases) {
        const answer = await postForm(deviceUrl(), fields)
        expect(answer.status).toBe(400)
        expect(answer.body.error).toBe(error)
      }
    })
  })

  describe('client authentication', () => {
    const CASES: readonly [
      string,
      Record<string, string>,
      Record<string, string>,
      number,
      string | undefined,
    ][] = [
      ['Basic with the right secret', {}, { authorization: basic('cli', CLI_SECRET) }, 200, undefined],
      ['client_secret in the body', { client_id: 'cli', client_secret: CLI_SECRET }, {}, 200, undefined],
      ['Basic with a wrong secret', {}, { authorization: basic('cli', 'wrong') }, 401, 'invalid_client'],
      [
        'a wrong client_secret in the body',
        { client_id: 'cli', client_secret: 'wrong' },
        {},
        401,
        'invalid_client',
      ],
      ['no secret for a confidential client', { client_id: 'cli' }, {}, 401, 'invalid_client'],
      ['an unknown client', { client_id: 'nobody' }, {}, 401, 'invalid_client'],
      [
        'a secret for a public client',
        { client_id: 'web', client_secret: 'anything' },
        {},
        401,
        'invalid_client',
      ],
      [
        'Basic and a body secret together',
        { client_secret: CLI_SECRET },
        { authorization: basic('cli', CLI_SECRET) },
        400,
        'invalid_request',
      ],
      ['a public client by id alone', { client_id: 'web' }, {}, 200, undefined],
    ]

    test.each(CASES)('%s → %s', async (_title, fields, headers, status, error) => {
      const { challenge } = pkcePair()
      const answer = await postForm(
        deviceUrl(),
        { scope: 'data.overview', code_challenge: challenge, code_challenge_method: 'S256', ...fields },
        headers,
      )
      expect(answer.status).toBe(status)
      if (error !== undefined) expect(answer.body.error).toBe(error)
      if (status === 401) expect(answer.headers.get('www-authenticate')).toBe('Basic realm="oauth"')
      expect(answer.headers.get('cache-control')).toBe('no-store')
    })

    test('two Authorization headers → 400 invalid_request', async () => {
      const answer = await rawPost(
        tokenUrl(),
        {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: [basic('cli', CLI_SECRET), basic('cli', 'other')],
        },
        'grant_type=refresh_token&refresh_token=x',
      )
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' })
    })

    test('the token endpoint refuses a wrong secret the same way', async () => {
      const answer = await postForm(
        tokenUrl(),
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { authorization: basic('cli', 'wrong') },
      )
      expect(answer.status).toBe(401)
      expect(answer.body.error).toBe('invalid_client')
      expect(answer.headers.get('www-authenticate')).toBe('Basic realm="oauth"')
    })
  })

  describe('the device flow, polled', () => {
    const poll = (deviceCode: string, verifier: string, extra: Record<string, string> = {}) =>
      postForm(tokenUrl(), {
        grant_type: DEVICE_GRANT,
        device_code: deviceCode,
        code_verifier: verifier,
        ...extra,
      })

    test('pending, slow_down (the interval grows for good), then approved: a token once', async () => {
      const { verifier, body } = await startDeviceGrant()
      const code = body.device_code as string
      expect((await poll(code, verifier)).body.error).toBe('authorization_pending')
      expect((await poll(code, verifier)).body.error).toBe('slow_down')
      clock.advance(5_000)
      // The interval is 10 s now: 5 s after the previous poll is still too soon.
      expect((await poll(code, verifier)).body.error).toBe('slow_down')
      clock.advance(15_000)
      expect((await poll(code, verifier)).body.error).toBe('authorization_pending')
      await decideThroughPages(body.user_code as string, 'approve')
      const token = await poll(code, verifier)
      expect(token.status).toBe(200)
      expect(token.body.refresh_token).toBeUndefined()
      expect(await callApi(origin(), '/api/v1/users/alice/datasets', token.body.access_token as string)).toBe(
        200,
      )
      const again = await poll(code, verifier)
      expect(again.status).toBe(400)
      expect(again.body.error).toBe('invalid_grant')
    })

    test('denied: access_denied at once', async () => {
      const { verifier, body } = await startDeviceGrant()
      await decideThroughPages(body.user_code as string, 'deny')
      const answer = await poll(body.device_code as string, verifier)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe('access_denied')
    })

    test('expired: expired_token', async () => {
      const { verifier, body } = await startDeviceGrant()
      clock.advance(600_000)
      const answer = await poll(body.device_code as string, verifier)
      expect(answer.body.error).toBe('expired_token')
    })

    test('PKCE on the device flow: a wrong or missing verifier is invalid_grant, a malformed one invalid_request', async () => {
      const { verifier, body } = await startDeviceGrant()
      await decideThroughPages(body.user_code as string, 'approve')
      const code = body.device_code as string
      expect((await poll(code, pkcePair().verifier)).body.error).toBe('invalid_grant')
      expect((await postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: code })).body.error).toBe(
        'invalid_grant',
      )
      expect((await poll(code, 'short')).body.error).toBe('invalid_request')
      expect((await poll(code, verifier)).status).toBe(200)
    })

    test('a device code is bound to its client', async () => {
      const { verifier, body } = await startDeviceGrant({ client_id: 'web' })
      await decideThroughPages(body.user_code as string, 'approve')
      const answer = await poll(body.device_code as string, verifier)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe('invalid_grant')
      expect((await poll(body.device_code as string, verifier, { client_id: 'web' })).status).toBe(200)
    })
  })

  describe('tokens', () => {
    test('an OAuth token works on the API at once and stops working after one hour', async () => {
      const { verifier, body } = await startDeviceGrant()
      await decideThroughPages(body.user_code as string, 'approve')
      const answer = await postForm(tokenUrl(), {
        grant_type: DEVICE_GRANT,
        device_code: body.device_code as string,
        code_verifier: verifier,
      })
      const token = answer.body.access_token as string
      expect(await callApi(origin(), '/api/v1/users/alice/datasets', token)).toBe(200)
      clock.advance(3_600_000 - 1)
      expect(await callApi(origin(), '/api/v1/users/alice/datasets', token)).toBe(200)
      clock.advance(1)
      expect(await callApi(origin(), '/api/v1/users/alice/datasets', token)).toBe(401)
    })

    test('a registered offline client gets a refresh token, which rotates', async () => {
      const { verifier, challenge } = pkcePair()
      const agent = new PageAgent(origin())
      const { callback } = await authorizeThroughPages(
        agent,
        authorizeUrl(origin(), {
          response_type: 'code',
          client_id: 'cli',
          redirect_uri: CLI_REDIRECT,
          scope: 'data.metadata',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
        { handle: 'alice', password: ALICE_PASSWORD },
      )
      const auth = { authorization: basic('cli', CLI_SECRET) }
      const first = await postForm(
        tokenUrl(),
        {
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code')!,
          redirect_uri: CLI_REDIRECT,
          code_verifier: verifier,
        },
        auth,
      )
      const refresh = first.body.refresh_token as string
      expect(typeof refresh).toBe('string')
      const second = await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: refresh }, auth)
      expect(second.status).toBe(200)
      expect(second.body.refresh_token).not.toBe(refresh)
      expect(second.body.scope).toBe('public data.metadata')
      expect(
        await callApi(origin(), '/api/v1/organizations/acme/datasets', second.body.access_token as string),
      ).toBe(200)
      // The rotated-out refresh token is reuse: refused, and the family revoked.
      const reused = await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: refresh }, auth)
      expect(reused.body.error).toBe('invalid_grant')
      expect(
        await callApi(origin(), '/api/v1/organizations/acme/datasets', second.body.access_token as string),
      ).toBe(401)
    })
  })

  test('the metadata document names the endpoints on this origin', async () => {
    const response = await fetch(`${origin()}/.well-known/oauth-authorization-server`)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({
      issuer: origin(),
      authorization_endpoint: `${origin()}/oauth/authorize`,
      token_endpoint: `${origin()}/oauth/token`,
      device_authorization_endpoint: `${origin()}/oauth/device_authorization`,
      code_challenge_methods_supported: ['S256'],
    })
  })
})

describe('HTTPS', () => {
  let server: StartedServer

  beforeAll(async () => {
    server = await startServer({
      seed: await oauthSeed(),
      framework: 'fastify',
      port: 0,
      trustProxy: ['loopback'],
      now: clock.read,
      publicUrl: 'https://data.example.org',
    })
  })

  afterAll(async () => {
    await server?.close()
  })

  test('plain HTTP from another machine is refused; HTTPS through a trusted proxy is served', async () => {
    const { challenge } = pkcePair()
    const fields = { scope: 'data.overview', code_challenge: challenge, code_challenge_method: 'S256' }
    const remote = { 'x-forwarded-for': '203.0.113.9' }
    const plain = await postForm(`${server.url}/oauth/device_authorization`, fields, {
      ...remote,
      'x-forwarded-proto': 'http',
    })
    expect(plain.status).toBe(400)
    expect(plain.body.error_description).toMatch(/HTTPS/)
    const secure = await postForm(`${server.url}/oauth/device_authorization`, fields, {
      ...remote,
      'x-forwarded-proto': 'https',
    })
    expect(secure.status).toBe(200)
    // The origin the server was told it has (`--public-url`), never what a request claims.
    expect(secure.body.verification_uri).toBe('https://data.example.org/device')
    const page = await fetch(`${server.url}/device`, { headers: { ...remote, 'x-forwarded-proto': 'http' } })
    expect(page.status).toBe(403)
  })
})
