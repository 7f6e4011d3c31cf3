/**
 * End to end with `openid-client` 6, a second independent OAuth client (built on oauth4webapi, with
 * its own higher-level checks), against the reference server on Express, Fastify and Hono:
 * discovery (RFC 8414), the authorization-code flow with PKCE for the API's resource identifier
 * (RFC 8707; the test signs in and approves by posting the pages' forms), where the library itself
 * refuses a callback whose `iss` is forged or missing (RFC 9207, announced by the metadata); the
 * token reads the API and its introspection names the API as audience; a token for another
 * resource is refused by the API; a refresh works and cannot widen to a resource outside the
 * grant (`invalid_target`); and the device flow (RFC 8628) with `resource`.
 */
import * as client from 'openid-client'
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

// The library aborts each request after 30 s by default: on a busy machine, the test runner's own
// bound for a hang is the only one.
const NO_REQUEST_DEADLINE_S = 3_600

/**
 * A configuration for a registered client, by discovery from the server's issuer. The server is an
 * OAuth authorization server (RFC 8414 metadata), on plain HTTP in tests, which the library refuses
 * unless told.
 */
function discover(origin: string, clientId: string, secret?: string): Promise<client.Configuration> {
  return client.discovery(
    new URL(origin),
    clientId,
    secret,
    secret === undefined ? client.None() : client.ClientSecretBasic(secret),
    { algorithm: 'oauth2', execute: [client.allowInsecureRequests], timeout: NO_REQUEST_DEADLINE_S },
  )
}

// The resource server's answer; a 401 or 403 challenge, which the library throws, is answered too.
async function list(config: client.Configuration, path: string, accessToken: string): Promise<Response> {
  try {
    return await client.fetchProtectedResource(
      config,
      accessToken,
      new URL(path, config.serverMetadata().issuer),
      'GET',
    )
  } catch (error) {
    if (error instanceof client.WWWAuthenticateChallengeError) return error.response
    throw error
  }
}

// How openid-client refuses an authorization response for its `iss` (the check is oauth4webapi's).
const ISS_REFUSED = (reason: string) => ({ code: 'OAUTH_INVALID_RESPONSE', cause: { message: reason } })

async function names(response: Response): Promise<string[]> {
  const body = (await response.json()) as { results: { name: string }[] }
  return body.results.map((result) => result.name)
}

describe.each(FRAMEWORKS)('openid-client against the reference server on %s', (framework) => {
  const origin = () => originOf(framework)
  const api = () => `${origin()}/api/v1`

  // Alice signs in and approves, as a browser would; the client's callback URL, as it came back
  // (at once, for a request the server refuses before sign-in).
  async function approvedCallback(
    config: client.Configuration,
    parameters: Record<string, string> | URLSearchParams,
  ): Promise<URL> {
    const query = new URLSearchParams(parameters)
    query.set('redirect_uri', CLI_REDIRECT)
    const browser = new PageAgent(origin())
    const signIn = await browser.get(client.buildAuthorizationUrl(config, query).href)
    if (signIn.status !== 200) return new URL(signIn.location!)
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: 'alice',
      password: ALICE_PASSWORD,
    })
    const answer = await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    return new URL(answer.location!)
  }

  test('discovery finds the endpoints, S256 and the iss parameter', async () => {
    const config = await discover(origin(), 'cli', CLI_SECRET)
    const metadata = config.serverMetadata()
    expect(metadata.issuer).toBe(origin())
    expect(metadata.authorization_endpoint).toBe(`${origin()}/oauth/authorize`)
    expect(metadata.token_endpoint).toBe(`${origin()}/oauth/token`)
    expect(metadata.introspection_endpoint).toBe(`${origin()}/oauth/introspect`)
    expect(metadata.device_authorization_endpoint).toBe(`${origin()}/oauth/device_authorization`)
    expect(metadata.supportsPKCE('S256')).toBe(true)
    expect(metadata.supportsPKCE('plain')).toBe(false)
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true)
  })

  test('authorization code with PKCE for the API: iss checked, list, audience, refresh, no widening', async () => {
    const config = await discover(origin(), 'cli', CLI_SECRET)
    const pkceCodeVerifier = client.randomPKCECodeVerifier()
    const expectedState = client.randomState()
    const callback = await approvedCallback(config, {
      scope: 'data.overview',
      state: expectedState,
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
      resource: api(),
    })
    expect(`${callback.origin}${callback.pathname}`).toBe(CLI_REDIRECT)
    expect(callback.searchParams.get('iss')).toBe(origin())

    // RFC 9207: the library refuses a response from another issuer, or one without iss, before it
    // redeems the code (so the genuine response below still can).
    const forged = new URL(callback)
    forged.searchParams.set('iss', 'https://evil.example')
    await expect(
      client.authorizationCodeGrant(config, forged, { pkceCodeVerifier, expectedState }),
    ).rejects.toMatchObject(ISS_REFUSED('unexpected "iss" (issuer) response parameter value'))
    const stripped = new URL(callback)
    stripped.searchParams.delete('iss')
    await expect(
      client.authorizationCodeGrant(config, stripped, { pkceCodeVerifier, expectedState }),
    ).rejects.toMatchObject(ISS_REFUSED('response parameter "iss" (issuer) missing'))

    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier, expectedState })
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.scope).toBe('public data.overview')
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.access_token).toMatch(/^dao_/)
    expect(tokens.refresh_token).toBeDefined()

    const listing = await list(config, '/api/v1/users/alice/datasets', tokens.access_token)
    expect(listing.status).toBe(200)
    expect(await names(listing)).toEqual(['diary', 'open'])

    // A resource server introspects (RFC 7662): the token is for the API alone.
    const rs = await discover(origin(), 'rs', RS_SECRET)
    expect(await client.tokenIntrospection(rs, tokens.access_token)).toMatchObject({
      active: true,
      client_id: 'cli',
      sub: 'alice',
      aud: api(),
    })

    // The refresh token rotates; the new access token keeps the grant's audience.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect((await list(config, '/api/v1/organizations/acme/datasets', refreshed.access_token)).status).toBe(
      200,
    )
    expect(await client.tokenIntrospection(rs, refreshed.access_token)).toMatchObject({
      active: true,
      aud: api(),
    })

    // The reports tool is a resource the server knows, but outside this grant: a refresh cannot
    // widen to it.
    await expect(
      client.refreshTokenGrant(config, refreshed.refresh_token!, { resource: REPORTS_RESOURCE }),
    ).rejects.toMatchObject({ error: 'invalid_target' })
  })

  test('resource indicators: a token for another resource is refused by the API; an unknown one is invalid_target', async () => {
    const config = await discover(origin(), 'cli', CLI_SECRET)
    const pkceCodeVerifier = client.randomPKCECodeVerifier()
    const challenge = {
      scope: 'data.overview',
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: 'S256',
    }
    const both = new URLSearchParams(challenge)
    both.append('resource', api())
    both.append('resource', REPORTS_RESOURCE)
    const callback = await approvedCallback(config, both)

    // Both were granted; the token endpoint narrows this token to the reports tool.
    const tokens = await client.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier, expectedState: 'st' },
      { resource: REPORTS_RESOURCE },
    )
    const rs = await discover(origin(), 'rs', RS_SECRET)
    expect(await client.tokenIntrospection(rs, tokens.access_token)).toMatchObject({
      active: true,
      aud: REPORTS_RESOURCE,
    })
    const refused = await list(config, '/api/v1/users/alice/datasets', tokens.access_token)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')

    // An unknown resource at the authorization endpoint: an invalid_target response, with iss.
    const unknown = await approvedCallback(config, { ...challenge, resource: 'https://evil.example/mcp' })
    expect(unknown.searchParams.get('iss')).toBe(origin())
    await expect(
      client.authorizationCodeGrant(config, unknown, { pkceCodeVerifier, expectedState: 'st' }),
    ).rejects.toMatchObject({ error: 'invalid_target' })
  })

  test('device flow with PKCE and resource: enter the code, sign in, approve, poll, list', async () => {
    // A public registered client: no secret, so `None` client authentication.
    const config = await discover(origin(), 'web')
    const verifier = client.randomPKCECodeVerifier()
    const device = await client.initiateDeviceAuthorization(config, {
      scope: 'data.metadata',
      resource: api(),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    expect(device.verification_uri).toBe(`${origin()}/device`)

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

    // The library waits one interval of real time before it polls; the server reads the test clock.
    clock.advance((device.interval ?? 5) * 1000)
    const tokens = await client.pollDeviceAuthorizationGrant(config, device, { code_verifier: verifier })
    expect(tokens.scope).toBe('public data.metadata')
    expect(tokens.refresh_token).toBeUndefined()
    const listing = await list(config, '/api/v1/organizations/acme/datasets', tokens.access_token)
    expect(listing.status).toBe(200)
    expect(await names(listing)).toEqual(['claims'])
    const rs = await discover(origin(), 'rs', RS_SECRET)
    expect(await client.tokenIntrospection(rs, tokens.access_token)).toMatchObject({
      active: true,
      client_id: 'web',
      sub: 'bob',
      aud: api(),
    })
  })
})
