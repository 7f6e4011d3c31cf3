import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors.js'
import { decideDeviceAuthorization } from '../../src/oauth/decide-device-authorization.js'
import { handleDeviceAuthorizationRequest } from '../../src/oauth/handle-device-authorization-request.js'
import { handleIntrospectionRequest } from '../../src/oauth/handle-introspection-request.js'
import {
  DEVICE_CODE_GRANT_TYPE,
  handleTokenRequest,
  type TokenResponseBody,
} from '../../src/oauth/handle-token-request.js'
import { issueAuthorizationCode } from '../../src/oauth/issue-authorization-code.js'
import type { OAuthParams } from '../../src/oauth/oauth-params.js'
import { hashSecret as hashOf } from '../../src/oauth/random-secret.js'
import type { KnownResources } from '../../src/oauth/resource-indicators.js'
import { startDeviceAuthorization } from '../../src/oauth/start-device-authorization.js'
import { validateAuthorizationRequest } from '../../src/oauth/validate-authorization-request.js'
import { verifyUserCode } from '../../src/oauth/verify-user-code.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import {
  basic,
  CLI_SECRET,
  createWorld,
  lookupClient,
  NOW,
  pkcePair,
  RESOURCE_SECRET,
  type World,
} from './fixtures.js'

// RFC 8707 resource indicators at the issuer and RFC 9207 `iss` in authorization responses.

const API = 'https://data.example.org/api/v1'
const MCP = 'https://data.example.org/mcp'
const REPORTS = 'https://reports.example.org/'
const ISSUER = 'https://data.example.org'
const RESOURCES: KnownResources = { known: [API, MCP, REPORTS], defaultResource: API }
const CLI_AUTH = basic('cli', CLI_SECRET)
const REDIRECT = 'http://127.0.0.1:8765/cb'

function authorizationParams(challenge: string, extra: OAuthParams = {}): OAuthParams {
  return {
    response_type: 'code',
    client_id: 'cli',
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'data.metadata',
    state: 'xyz',
    ...extra,
  }
}

async function validate(extra: OAuthParams, resources: KnownResources | 'none' = RESOURCES) {
  return validateAuthorizationRequest(authorizationParams(pkcePair().challenge, extra), lookupClient, {
    ...(resources !== 'none' && { resources }),
    issuer: ISSUER,
  })
}

// An authorization code for `resource`, approved by alice.
async function authorizeCode(world: World, resource?: string | readonly string[]) {
  const { verifier, challenge } = pkcePair()
  const result = await validateAuthorizationRequest(
    authorizationParams(challenge, resource === undefined ? {} : { resource }),
    lookupClient,
    { resources: RESOURCES, issuer: ISSUER },
  )
  if (!result.ok) throw new Error(result.error.message)
  const issued = await issueAuthorizationCode({
    request: result.request,
    userId: 'alice',
    now: NOW,
    store: world.state,
    issuer: ISSUER,
  })
  return { ...issued, verifier }
}

function redeem(world: World, code: { code: string; verifier: string }, extra: OAuthParams = {}) {
  return handleTokenRequest(
    {
      grant_type: 'authorization_code',
      code: code.code,
      redirect_uri: REDIRECT,
      code_verifier: code.verifier,
      ...extra,
    },
    world.options(NOW, { authorization: CLI_AUTH, resources: RESOURCES }),
  )
}

async function audienceOf(world: World, body: unknown): Promise<readonly string[] | undefined> {
  return (await world.token((body as TokenResponseBody).access_token))?.audience
}

describe('authorization request: resource (RFC 8707 §2)', () => {
  it.each([
    ['no resource: the default resource', {}, [API]],
    ['an empty resource counts as absent', { resource: '' }, [API]],
    ['one known resource', { resource: MCP }, [MCP]],
    ['a repeated resource: all of them', { resource: [MCP, REPORTS] }, [MCP, REPORTS]],
    ['duplicates dropped, order kept', { resource: [REPORTS, API, REPORTS] }, [REPORTS, API]],
  ] satisfies [string, OAuthParams, string[]][])('%s', async (_name, extra, audience) => {
    const result = await validate(extra)
    expect(result).toMatchObject({ ok: true, request: { audience } })
  })

  it.each([
    ['an unknown resource', { resource: 'https://evil.example/mcp' }],
    ['one unknown among known ones', { resource: [API, 'https://evil.example/mcp'] }],
    ['a resource with a fragment', { resource: `${API}#x` }],
    ['a relative resource', { resource: '/api/v1' }],
    ['a resource of another scheme', { resource: 'urn:example:api' }],
    ['a non-string resource (JSON)', { resource: 42 as unknown as string }],
    ['a known resource with a trailing slash (compared exactly)', { resource: `${API}/` }],
  ] satisfies [string, OAuthParams][])('%s → invalid_target, redirected with iss', async (_name, extra) => {
    const result = await validate(extra)
    expect(result).toMatchObject({ ok: false, respond: 'redirect', error: { error: 'invalid_target' } })
    if (result.ok || result.respond !== 'redirect') throw new Error('expected a redirect')
    const location = new URL(result.location)
    expect(location.searchParams.get('error')).toBe('invalid_target')
    expect(location.searchParams.get('state')).toBe('xyz')
    expect(location.searchParams.get('iss')).toBe(ISSUER)
  })

  it('more resources than one token may hold → invalid_target', async () => {
    const known = Array.from({ length: 17 }, (_, index) => `https://r${index}.example/`)
    const result = await validate({ resource: known }, { known, defaultResource: known[0]! })
    expect(result).toMatchObject({ ok: false, error: { error: 'invalid_target' } })
  })

  it('without declared resources: no audience, and any resource is invalid_target', async () => {
    const result = await validate({}, 'none')
    expect(result.ok && result.request).not.toHaveProperty('audience')
    expect(await validate({ resource: API }, 'none')).toMatchObject({
      ok: false,
      error: { error: 'invalid_target' },
    })
  })

  it('keeps the two-argument call (no resources, no iss)', async () => {
    const result = await validateAuthorizationRequest(
      authorizationParams(pkcePair().challenge, { response_type: 'token' }),
      lookupClient,
    )
    if (result.ok || result.respond !== 'redirect') throw new Error('expected a redirect')
    expect(new URL(result.location).searchParams.has('iss')).toBe(false)
  })

  it.each([
    ['no known resources', { known: [], defaultResource: API }, 'resources.known'],
    ['a bad known resource', { known: [API, 'not a uri'], defaultResource: API }, 'resources.known[1]'],
    ['a default that is not known', { known: [API], defaultResource: MCP }, 'resources.defaultResource'],
    ['not a list', { known: API as unknown as string[], defaultResource: API }, 'resources.known'],
  ] satisfies [string, KnownResources, string][])(
    'a host option with %s is a ConfigError naming it',
    async (_name, resources, path) => {
      const error = await validate({}, resources).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).message).toContain(path)
    },
  )
})

describe('RFC 9207: iss in the authorization response', () => {
  it('the code redirect carries code, state and iss', async () => {
    const { location } = await authorizeCode(createWorld())
    const url = new URL(location)
    expect([...url.searchParams.keys()]).toEqual(['code', 'state', 'iss'])
    expect(url.searchParams.get('iss')).toBe(ISSUER)
  })

  it.each([
    ['unsupported_response_type', { response_type: 'token' }],
    ['invalid_request', { code_challenge_method: 'plain' }],
    ['invalid_scope', { scope: 'nope' }],
    ['invalid_target', { resource: 'https://evil.example/' }],
  ] satisfies [string, OAuthParams][])('the %s redirect carries iss', async (error, extra) => {
    const result = await validate(extra)
    if (result.ok || result.respond !== 'redirect') throw new Error('expected a redirect')
    const url = new URL(result.location)
    expect(url.searchParams.get('error')).toBe(error)
    expect(url.searchParams.get('iss')).toBe(ISSUER)
  })
})

describe('token endpoint: the code grant keeps or narrows its audience (RFC 8707 §2.2)', () => {
  it.each([
    ['no resource: the audience granted', [MCP, REPORTS], {}, [MCP, REPORTS]],
    ['the default audience when the request named none', undefined, {}, [API]],
    ['a subset of it', [MCP, REPORTS], { resource: REPORTS }, [REPORTS]],
    ['all of it, repeated', [MCP, REPORTS], { resource: [REPORTS, MCP] }, [REPORTS, MCP]],
  ] satisfies [string, string[] | undefined, OAuthParams, string[]][])(
    '%s',
    async (_name, granted, extra, audience) => {
      const world = createWorld()
      const response = await redeem(world, await authorizeCode(world, granted), extra)
      expect(response.status).toBe(200)
      expect(await audienceOf(world, response.body)).toEqual(audience)
    },
  )

  it.each([
    ['a known resource that was not granted', { resource: API }],
    ['one granted and one not', { resource: [MCP, API] }],
    ['an unknown resource', { resource: 'https://evil.example/' }],
    ['a resource with a fragment', { resource: `${MCP}#f` }],
  ] satisfies [string, OAuthParams][])('%s → invalid_target, nothing issued', async (_name, extra) => {
    const world = createWorld()
    const response = await redeem(world, await authorizeCode(world, MCP), extra)
    expect(response).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
    expect((await world.tokens.listByOwner('alice')).length).toBe(0)
  })

  it('an unknown resource is refused before the code is consumed', async () => {
    const world = createWorld()
    const code = await authorizeCode(world, MCP)
    expect((await redeem(world, code, { resource: 'https://evil.example/' })).status).toBe(400)
    expect((await redeem(world, code)).status).toBe(200)
  })

  it('a grant without audience (issued before resources were declared) narrows to a known resource', async () => {
    const world = createWorld()
    const { verifier, challenge } = pkcePair()
    const result = await validateAuthorizationRequest(authorizationParams(challenge), lookupClient)
    if (!result.ok) throw new Error(result.error.message)
    const { code } = await issueAuthorizationCode({
      request: result.request,
      userId: 'alice',
      now: NOW,
      store: world.state,
    })
    expect((await world.state.findAuthorizationCode(hashOf(code), NOW))?.audience).toBeUndefined()
    const response = await redeem(world, { code, verifier }, { resource: MCP })
    expect(await audienceOf(world, response.body)).toEqual([MCP])
  })

  it('a grant without audience redeemed without resource gets the default audience, not none', async () => {
    const world = createWorld()
    const { verifier, challenge } = pkcePair()
    const result = await validateAuthorizationRequest(authorizationParams(challenge), lookupClient)
    if (!result.ok) throw new Error(result.error.message)
    const { code } = await issueAuthorizationCode({
      request: result.request,
      userId: 'alice',
      now: NOW,
      store: world.state,
    })
    const response = await redeem(world, { code, verifier })
    expect(await audienceOf(world, response.body)).toEqual([API])
  })

  it('a host option that is not valid is thrown, not answered', async () => {
    await expect(
      handleTokenRequest({}, createWorld().options(NOW, { resources: { known: [], defaultResource: API } })),
    ).rejects.toBeInstanceOf(ConfigError)
  })
})

describe('token endpoint: refresh narrows, never widens; the family keeps its audience', () => {
  async function family(world: World) {
    const response = await redeem(world, await authorizeCode(world, [MCP, REPORTS]), { resource: MCP })
    return response.body as TokenResponseBody
  }
  function refresh(world: World, refreshToken: string, extra: OAuthParams = {}) {
    return handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra },
      world.options(NOW + 1000, { authorization: CLI_AUTH, resources: RESOURCES }),
    )
  }

  it.each([
    ['no resource: the whole family audience', {}, [MCP, REPORTS]],
    ['a subset', { resource: REPORTS }, [REPORTS]],
  ] satisfies [string, OAuthParams, string[]][])('%s', async (_name, extra, audience) => {
    const world = createWorld()
    const first = await family(world)
    expect(await audienceOf(world, first)).toEqual([MCP])
    const response = await refresh(world, first.refresh_token!, extra)
    expect(response.status).toBe(200)
    expect(await audienceOf(world, response.body)).toEqual(audience)
  })

  it.each([
    ['a known resource outside the family', { resource: API }],
    ['an unknown resource', { resource: 'https://evil.example/' }],
  ] satisfies [string, OAuthParams][])(
    '%s → invalid_target; nothing issued, the refresh token still works',
    async (_name, extra) => {
      const world = createWorld()
      const first = await family(world)
      const before = (await world.tokens.listByOwner('alice')).length
      expect(await refresh(world, first.refresh_token!, extra)).toMatchObject({
        status: 400,
        body: { error: 'invalid_target' },
      })
      expect((await world.tokens.listByOwner('alice')).length).toBe(before)
      const next = await refresh(world, first.refresh_token!)
      expect(await audienceOf(world, next.body)).toEqual([MCP, REPORTS])
    },
  )

  it('a narrowed refresh leaves the family its audience: the next one may ask for all of it', async () => {
    const world = createWorld()
    const first = await family(world)
    const narrowed = (await refresh(world, first.refresh_token!, { resource: REPORTS }))
      .body as TokenResponseBody
    const again = await refresh(world, narrowed.refresh_token!, { resource: [MCP, REPORTS] })
    expect(await audienceOf(world, again.body)).toEqual([MCP, REPORTS])
  })
})

describe('device flow: resource at the device authorization endpoint and at the poll', () => {
  async function device(world: World, extra: OAuthParams = {}) {
    const { verifier, challenge } = pkcePair()
    const response = await handleDeviceAuthorizationRequest(
      { scope: 'data.metadata', code_challenge: challenge, code_challenge_method: 'S256', ...extra },
      {
        clients: lookupClient,
        state: world.state,
        now: NOW,
        verificationUri: 'https://data.example.org/device',
        authorization: CLI_AUTH,
        resources: RESOURCES,
      },
    )
    return { response, verifier }
  }
  async function approve(world: World, userCode: string) {
    const verified = await verifyUserCode({ userCode, attemptKey: 'k', now: NOW, store: world.state })
    if (!verified.ok) throw new Error(verified.reason)
    await decideDeviceAuthorization({
      grantId: verified.grant.grantId,
      userId: 'alice',
      decision: 'approve',
      now: NOW,
      store: world.state,
    })
    return verified.grant
  }
  function poll(world: World, deviceCode: string, verifier: string, extra: OAuthParams = {}) {
    return handleTokenRequest(
      { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, code_verifier: verifier, ...extra },
      world.options(NOW + 6000, { authorization: CLI_AUTH, resources: RESOURCES }),
    )
  }

  it.each([
    ['no resource: the default audience', {}, [API], {}, [API]],
    ['a requested resource', { resource: [MCP, REPORTS] }, [MCP, REPORTS], {}, [MCP, REPORTS]],
    ['narrowed at the poll', { resource: [MCP, REPORTS] }, [MCP, REPORTS], { resource: MCP }, [MCP]],
  ] satisfies [string, OAuthParams, string[], OAuthParams, string[]][])(
    '%s',
    async (_name, start, granted, atPoll, audience) => {
      const world = createWorld()
      const { response, verifier } = await device(world, start)
      const body = response.body as { device_code: string; user_code: string }
      const grant = await approve(world, body.user_code)
      expect(grant.audience).toEqual(granted)
      const token = await poll(world, body.device_code, verifier, atPoll)
      expect(token.status).toBe(200)
      expect(await audienceOf(world, token.body)).toEqual(audience)
    },
  )

  it.each([
    ['an unknown resource', { resource: 'https://evil.example/' }],
    ['a resource with a fragment', { resource: `${API}#x` }],
  ] satisfies [string, OAuthParams][])('%s at the start → invalid_target, no grant', async (_name, extra) => {
    const world = createWorld()
    const { response } = await device(world, extra)
    expect(response).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
  })

  it('widening at the poll → invalid_target, nothing issued, the grant still redeemable', async () => {
    const world = createWorld()
    const { response, verifier } = await device(world, { resource: MCP })
    const body = response.body as { device_code: string; user_code: string }
    await approve(world, body.user_code)
    expect(await poll(world, body.device_code, verifier, { resource: API })).toMatchObject({
      status: 400,
      body: { error: 'invalid_target' },
    })
    expect((await world.tokens.listByOwner('alice')).length).toBe(0)
    expect((await poll(world, body.device_code, verifier)).status).toBe(200)
  })

  it('startDeviceAuthorization takes resource and resources directly', async () => {
    const world = createWorld()
    await startDeviceAuthorization({
      resource: [REPORTS],
      resources: RESOURCES,
      codeChallenge: pkcePair().challenge,
      codeChallengeMethod: 'S256',
      verificationUri: 'https://data.example.org/device',
      now: NOW,
      store: world.state,
    })
    await expect(
      startDeviceAuthorization({
        resource: REPORTS,
        codeChallenge: pkcePair().challenge,
        codeChallengeMethod: 'S256',
        verificationUri: 'https://data.example.org/device',
        now: NOW,
        store: world.state,
      }),
    ).rejects.toMatchObject({ error: 'invalid_target' })
  })

  it('a host option that is not valid is thrown, not answered', async () => {
    const world = createWorld()
    await expect(
      handleDeviceAuthorizationRequest(
        {},
        {
          clients: lookupClient,
          state: world.state,
          now: NOW,
          verificationUri: 'https://data.example.org/device',
          resources: { known: [API], defaultResource: REPORTS },
        },
      ),
    ).rejects.toBeInstanceOf(ConfigError)
  })
})

describe('introspection answers aud (RFC 7662 §2.2)', () => {
  const RS_AUTH = basic('rs', RESOURCE_SECRET)
  function introspect(world: World, token: string) {
    return handleIntrospectionRequest({ token }, world.options(NOW, { authorization: RS_AUTH }))
  }

  it.each([
    ['a string for one resource', [MCP], MCP],
    ['an array for several', [MCP, REPORTS], [MCP, REPORTS]],
  ] satisfies [string, string[], string | string[]][])('%s', async (_name, granted, aud) => {
    const world = createWorld()
    const tokens = (await redeem(world, await authorizeCode(world, granted))).body as TokenResponseBody
    expect((await introspect(world, tokens.access_token)).body).toMatchObject({ active: true, aud })
    expect((await introspect(world, tokens.refresh_token!)).body).toMatchObject({ active: true, aud })
  })

  it('no aud for a token without audience', async () => {
    const world = createWorld()
    const { record, value } = createOAuthToken({
      userId: 'alice',
      scopes: 'data.data',
      clientId: 'cli',
      now: NOW,
    })
    await world.tokens.save(record)
    expect((await introspect(world, value)).body).not.toHaveProperty('aud')
  })
})
