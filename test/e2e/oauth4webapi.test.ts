/**
 * End to end with a real, independent OAuth client — `oauth4webapi` — against the reference server
 * on Express, Fastify and Hono: discovery, the authorization-code flow with PKCE (the test signs in
 * and approves by posting the pages' forms, as they describe themselves) with a refresh, an
 * introspection as a resource server (RFC 7662) and a revocation (RFC 7009), and the device flow
 * (the test enters the user code and approves); issued tokens stop working when the server's clock
 * passes their expiry. With resource indicators (RFC 8707): a token for the API and one for a
 * seed resource the API refuses, an unknown resource refused as `invalid_target`, a refresh that
 * cannot widen; and the library checks the `iss` of every authorization response (RFC 9207), which
 * the metadata announces.
 */
import * as oauth from 'oauth4webapi'
import { describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { formWith, PageAgent } from '../server/oauth-agent.js'
import {
  ALICE_PASSWORD,
  BOB_PASSWORD,
  CLI_REDIRECT,
  CLI_SECRET,
  REPORTS_RESOURCE,
  RS_SECRET,
} from '../server/oauth-fixtures.js'
import { useOAuthServers } from '../server/oauth-harness.js'

const { clock, origin: originOf } = useOAuthServers()

// The reference server runs on http://127.0.0.1 in tests; the library refuses plain HTTP unless told.
const INSECURE = { [oauth.allowInsecureRequests]: true } as const

async function discover(origin: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(origin)
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE }),
  )
}

// The resource server's answer; a 401 or 403 challenge, which the library throws, is answered too.
async function list(origin: string, path: string, accessToken: string): Promise<Response> {
  try {
    return await oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL(path, origin),
      undefined,
      undefined,
      INSECURE,
    )
  } catch (error) {
    if (error instanceof oauth.WWWAuthenticateChallengeError) return error.response
    throw error
  }
}

describe.each(FRAMEWORKS)('oauth4webapi against the reference server on %s', (framework) => {
  const origin = () => originOf(framework)

  test('discovery finds the endpoints and S256', async () => {
    const as = await discover(origin())
    expect(as.revocation_endpoint).toBe(`${origin()}/oauth/revoke`)
    expect(as.introspection_endpoint).toBe(`${origin()}/oauth/introspect`)
    expect(as.authorization_endpoint).toBe(`${origin()}/oauth/authorize`)
    expect(as.token_endpoint).toBe(`${origin()}/oauth/token`)
    expect(as.device_authorization_endpoint).toBe(`${origin()}/oauth/device_authorization`)
    expect(as.code_challenge_methods_supported).toEqual(['S256'])
    expect(as.authorization_response_iss_parameter_supported).toBe(true)
  })

  // The browser's part of an authorization for `resources`: sign in as alice, approve; the callback.
  async function approvedCallback(
    as: oauth.AuthorizationServer,
    verifier: string,
    resources: readonly string[],
  ): Promise<URL> {
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'cli',
      redirect_uri: CLI_REDIRECT,
      scope: 'data.overview',
      state: 'st',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    for (const resource of resources) url.searchParams.append('resource', resource)
    const browser = new PageAgent(origin())
    const signIn = await browser.get(url.toString())
    if (signIn.status !== 200) return new URL(signIn.location!)
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const answer = await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    return new URL(answer.location!)
  }

  test('resource indicators: iss checked; a token per resource; unknown is invalid_target; no widening', async () => {
    const as = await discover(origin())
    const client: oauth.Client = { client_id: 'cli' }
    const clientAuth = oauth.ClientSecretBasic(CLI_SECRET)
    const api = `${origin()}/api/v1`
    const verifier = oauth.generateRandomCodeVerifier()
    const callback = await approvedCallback(as, verifier, [api, REPORTS_RESOURCE])
    expect(callback.searchParams.get('iss')).toBe(as.issuer)

    // RFC 9207: the library refuses a response from another issuer, or one without iss.
    const forged = new URL(callback)
    forged.searchParams.set('iss', 'https://evil.example')
    expect(() => oauth.validateAuthResponse(as, client, forged, 'st')).toThrow(/iss/)
    const stripped = new URL(callback)
    stripped.searchParams.delete('iss')
    expect(() => oauth.validateAuthResponse(as, client, stripped, 'st')).toThrow(/iss/)

    const params = oauth.validateAuthResponse(as, client, callback, 'st')
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, CLI_REDIRECT, verifier, {
        additionalParameters: { resource: REPORTS_RESOURCE },
        ...INSECURE,
      }),
    )
    // The token is for the reports tool: the API refuses it.
    const refused = await list(origin(), '/api/v1/users/alice/datasets', tokens.access_token)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')

    // A refresh narrows to the API (granted at consent), but cannot widen to an unknown resource.
    const refresh = (resource: string, refreshToken: string) =>
      oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, {
        additionalParameters: { resource },
        ...INSECURE,
      })
    await expect(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await refresh('https://evil.example/mcp', tokens.refresh_token!),
      ),
    ).rejects.toMatchObject({ error: 'invalid_target' })
    const forApi = await oauth.processRefreshTokenResponse(
      as,
      client,
      await refresh(api, tokens.refresh_token!),
    )
    expect((await list(origin(), '/api/v1/users/alice/datasets', forApi.access_token)).status).toBe(200)

    // An unknown resource at the authorization endpoint: an invalid_target response, with iss.
    const unknown = await approvedCallback(as, oauth.generateRandomCodeVerifier(), [
      'https://evil.example/mcp',
    ])
    expect(() => oauth.validateAuthResponse(as, client, unknown, 'st')).toThrow(
      expect.objectContaining({ error: 'invalid_target' }),
    )
  })

  test('authorization code with PKCE: sign in, approve, list, refresh, introspect, revoke', async () => {
    const as = await discover(origin())
    const client: oauth.Client = { client_id: 'cli' }
    const clientAuth = oauth.ClientSecretBasic(CLI_SECRET)
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: CLI_REDIRECT,
      scope: 'data.overview',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()

    // The browser's part, by the pages' own forms.
    const browser = new PageAgent(origin())
    const signIn = await browser.get(url.toString())
    expect(signIn.status).toBe(200)
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    expect(consent.status).toBe(200)
    const answer = await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    expect(answer.location).toBeDefined()
    const callback = new URL(answer.location!)
    expect(`${callback.origin}${callback.pathname}`).toBe(CLI_REDIRECT)

    const params = oauth.validateAuthResponse(as, client, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      CLI_REDIRECT,
      verifier,
      INSECURE,
    )
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.scope).toBe('public data.overview')
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.access_token).toMatch(/^dao_/)
    expect(tokens.refresh_token).toBeDefined()

    const listing = await list(origin(), '/api/v1/users/alice/datasets', tokens.access_token)
    expect(listing.status).toBe(200)
    const body = (await listing.json()) as { results: { name: string }[] }
    expect(body.results.map((result) => result.name)).toEqual(['diary', 'open'])

    // A registered offline client refreshes; the new token works, the rotation is single use.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, INSECURE),
    )
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect((await list(origin(), '/api/v1/organizations/acme/datasets', refreshed.access_token)).status).toBe(
      200,
    )

    // A resource server introspects (RFC 7662); the client signs out by revoking (RFC 7009).
    const rs: oauth.Client = { client_id: 'rs' }
    const rsAuth = oauth.ClientSecretBasic(RS_SECRET)
    const introspect = async () =>
      oauth.processIntrospectionResponse(
        as,
        rs,
        await oauth.introspectionRequest(as, rs, rsAuth, refreshed.access_token, INSECURE),
      )
    expect(await introspect()).toMatchObject({ active: true, client_id: 'cli', sub: 'alice' })
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token!, INSECURE),
    )
    expect(await introspect()).toEqual({ active: false })
    expect((await list(origin(), '/api/v1/users/alice/datasets', refreshed.access_token)).status).toBe(401)
  })

  test("an access token stops working when the server's clock passes its expiry", async () => {
    const as = await discover(origin())
    const client: oauth.Client = { client_id: 'cli' }
    const clientAuth = oauth.ClientSecretBasic(CLI_SECRET)
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: CLI_REDIRECT,
      scope: 'data.overview',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const browser = new PageAgent(origin())
    const signIn = await browser.get(url.toString())
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const answer = await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    const params = oauth.validateAuthResponse(as, client, new URL(answer.location!), oauth.expectNoState)
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        params,
        CLI_REDIRECT,
        verifier,
        INSECURE,
      ),
    )
    expect((await list(origin(), '/api/v1/users/alice/datasets', tokens.access_token)).status).toBe(200)

    // Expiry follows the server's clock: one hour.
    clock.advance(3_600_000)
    const expired = await list(origin(), '/api/v1/users/alice/datasets', tokens.access_token)
    expect(expired.status).toBe(401)
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  test('device flow with PKCE: enter the code, sign in, approve, poll, list, expire', async () => {
    const as = await discover(origin())
    // A public registered client: no secret, so `None` client authentication.
    const client: oauth.Client = { client_id: 'web' }
    const clientAuth = oauth.None()
    const verifier = oauth.generateRandomCodeVerifier()
    const started = await oauth.deviceAuthorizationRequest(
      as,
      client,
      clientAuth,
      {
        scope: 'data.metadata',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      INSECURE,
    )
    const device = await oauth.processDeviceAuthorizationResponse(as, client, started)
    expect(device.verification_uri).toBe(`${origin()}/device`)
    expect(device.interval).toBe(5)

    const poll = async () =>
      oauth.processDeviceCodeResponse(
        as,
        client,
        await oauth.deviceCodeGrantRequest(as, client, clientAuth, device.device_code, {
          additionalParameters: { code_verifier: verifier },
          ...INSECURE,
        }),
      )
    await expect(poll()).rejects.toMatchObject({ error: 'authorization_pending' })

    // The user, on another device: the verification page, the code typed in, sign-in, consent.
    const browser = new PageAgent(origin())
    const entry = await browser.get(device.verification_uri)
    const signIn = await browser.submit(formWith(entry.body, 'user_code'), { user_code: device.user_code })
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'bob',
      password: BOB_PASSWORD,
    })
    expect(consent.body).toContain(device.user_code)
    const done = await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    expect(done.status).toBe(200)

    clock.advance(device.interval! * 1000)
    const tokens = await poll()
    expect(tokens.scope).toBe('public data.metadata')
    expect(tokens.refresh_token).toBeUndefined()
    const listing = await list(origin(), '/api/v1/organizations/acme/datasets', tokens.access_token)
    expect(listing.status).toBe(200)
    const body = (await listing.json()) as { results: { name: string }[] }
    expect(body.results.map((result) => result.name)).toEqual(['claims'])

    clock.advance(3_600_000 - 1)
    expect((await list(origin(), '/api/v1/organizations/acme/datasets', tokens.access_token)).status).toBe(
      200,
    )
    clock.advance(1)
    expect((await list(origin(), '/api/v1/organizations/acme/datasets', tokens.access_token)).status).toBe(
      401,
    )
  })

  test('a verification_uri_complete link fills the code in; the user only confirms it', async () => {
    const as = await discover(origin())
    const client: oauth.Client = { client_id: 'web' }
    const verifier = oauth.generateRandomCodeVerifier()
    const device = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(
        as,
        client,
        oauth.None(),
        { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' },
        INSECURE,
      ),
    )
    const browser = new PageAgent(origin())
    const entry = await browser.get(device.verification_uri_complete!)
    const signIn = await browser.submit(formWith(entry.body, 'user_code'))
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'deny' })
    const denied = oauth.processDeviceCodeResponse(
      as,
      client,
      await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, {
        additionalParameters: { code_verifier: verifier },
        ...INSECURE,
      }),
    )
    await expect(denied).rejects.toMatchObject({ error: 'access_denied' })
  })
})
