import { beforeAll, describe, expect, it } from 'vitest'
import { MemoryDpopReplayCache } from '../../src/dpop/index.js'
import { ConfigError } from '../../src/errors.js'
import { decideDeviceAuthorization } from '../../src/oauth/decide-device-authorization.js'
import { handleDeviceAuthorizationRequest } from '../../src/oauth/handle-device-authorization-request.js'
import { handleIntrospectionRequest } from '../../src/oauth/handle-introspection-request.js'
import {
  DEVICE_CODE_GRANT_TYPE,
  type HandleTokenRequestOptions,
  handleTokenRequest,
  type TokenResponseBody,
} from '../../src/oauth/handle-token-request.js'
import { hashSecret } from '../../src/oauth/random-secret.js'
import type { DeviceAuthorizationResponseBody } from '../../src/oauth/start-device-authorization.js'
import type { TokenEndpointDpopOptions } from '../../src/oauth/token-endpoint-dpop.js'
import { validateAuthorizationRequest } from '../../src/oauth/validate-authorization-request.js'
import { verifyUserCode } from '../../src/oauth/verify-user-code.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import { type DpopKey, dpopKey, dpopProof } from '../dpop/proofs.js'
import {
  authorize,
  basic,
  CLI_SECRET,
  codeParams,
  createWorld,
  lookupClient,
  NOW,
  pkcePair,
  RESOURCE_SECRET,
  type World,
} from './fixtures.js'

const TOKEN_URL = 'https://auth.example/oauth/token'

// A proof for the token endpoint at NOW; `claims` override any of its claims.
function proof(key: DpopKey, claims: Record<string, unknown> = {}): Promise<string> {
  return dpopProof(key, { method: 'POST', url: TOKEN_URL, iat: NOW / 1000, claims })
}

function dpopOptions(extra: Partial<TokenEndpointDpopOptions> = {}): TokenEndpointDpopOptions {
  return { url: TOKEN_URL, replayCache: new MemoryDpopReplayCache({ now: () => NOW }), ...extra }
}

type Request = {
  readonly clientId?: 'cli' | 'native' | 'bound'
  readonly proofs?: readonly string[]
  readonly dpop?: TokenEndpointDpopOptions | undefined
}

function options(world: World, request: Request): HandleTokenRequestOptions {
  return world.options(NOW, {
    ...(request.clientId === 'cli' && { authorization: basic('cli', CLI_SECRET) }),
    dpop: 'dpop' in request ? request.dpop : dpopOptions(),
    ...(request.proofs !== undefined && { dpopProofs: request.proofs }),
  })
}

function redirectOf(clientId: string | undefined): string {
  return clientId === 'native' ? 'http://[::1]:4000/done' : 'http://127.0.0.1:8765/cb'
}

async function redeem(world: World, request: Request & { readonly dpopJkt?: string }) {
  const { clientId, dpopJkt } = request
  const authorized = await authorize(world, {
    ...(clientId !== undefined && { clientId }),
    redirectUri: redirectOf(clientId),
    ...(dpopJkt !== undefined && { dpopJkt }),
  })
  const params = codeParams(
    authorized,
    clientId === 'cli' || clientId === undefined ? {} : { client_id: clientId },
  )
  return handleTokenRequest(params, options(world, request))
}

function refresh(world: World, refreshToken: string, request: Request) {
  const { clientId = 'native' } = request
  return handleTokenRequest(
    {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...(clientId !== 'cli' && { client_id: clientId }),
    },
    options(world, { ...request, clientId }),
  )
}

function errorOf(response: { readonly body: unknown }): string {
  return (response.body as { error: string; error_description: string }).error
}

function descriptionOf(response: { readonly body: unknown }): string {
  return (response.body as { error_description: string }).error_description
}

// Asserts the answer is an invalid_dpop_proof refusal (400 unless `status`) whose description says `text`.
function expectInvalidProof(
  response: { readonly status: number; readonly body: unknown },
  text: string,
  status = 400,
) {
  expect([response.status, errorOf(response)]).toEqual([status, 'invalid_dpop_proof'])
  expect(descriptionOf(response)).toContain(text)
}

function tokenOf(response: { readonly status: number; readonly body: unknown }): TokenResponseBody {
  if (response.status !== 200) throw new Error(JSON.stringify(response.body))
  return response.body as TokenResponseBody
}

let alice: DpopKey
let mallory: DpopKey
beforeAll(async () => {
  alice = await dpopKey()
  mallory = await dpopKey()
})

describe('the token endpoint binds tokens to the proof key (RFC 9449 §5)', () => {
  it.each([
    { name: 'a session client', clientId: undefined },
    { name: 'a confidential client', clientId: 'cli' as const },
    { name: 'a public client', clientId: 'native' as const },
    { name: 'a dpopBound client', clientId: 'bound' as const },
  ])('$name with a proof gets a DPoP token bound to the key', async ({ clientId }) => {
    const world = createWorld()
    const response = await redeem(world, {
      ...(clientId !== undefined && { clientId }),
      proofs: [await proof(alice)],
    })
    const body = tokenOf(response)
    expect(body.token_type).toBe('DPoP')
    expect((await world.token(body.access_token))?.dpopJkt).toBe(alice.jkt)
  })

  it.each([
    { name: 'without a proof', proofs: undefined, dpop: dpopOptions() },
    { name: 'with an empty list of proofs', proofs: [], dpop: dpopOptions() },
    { name: 'when the endpoint has no DPoP support, whatever the header', proofs: ['x'], dpop: undefined },
  ])('a bearer token $name', async ({ proofs, dpop }) => {
    const world = createWorld()
    const body = tokenOf(
      await redeem(world, { clientId: 'cli', dpop, ...(proofs !== undefined && { proofs }) }),
    )
    expect(body.token_type).toBe('Bearer')
    expect((await world.token(body.access_token))?.dpopJkt).toBeUndefined()
  })

  it("binds a public client's refresh family, not a confidential client's (bound by its secret)", async () => {
    for (const [clientId, expected] of [
      ['native', true],
      ['cli', false],
    ] as const) {
      const world = createWorld()
      const body = tokenOf(await redeem(world, { clientId, proofs: [await proof(alice)] }))
      const family = await world.state.findRefreshFamilyByTokenHash(hashSecret(body.refresh_token!), NOW)
      expect(family?.dpopJkt).toBe(expected ? alice.jkt : undefined)
    }
  })

  it.each([
    {
      name: 'two DPoP headers',
      proofs: async () => [await proof(alice), await proof(alice)],
      says: 'at most one DPoP header',
    },
    {
      name: 'a proof for another URL',
      proofs: async () => [await proof(alice, { htu: 'https://evil.example/oauth/token' })],
      says: 'htu',
    },
    {
      name: 'a proof for another method',
      proofs: async () => [await proof(alice, { htm: 'GET' })],
      says: 'htm',
    },
    {
      name: 'a stale proof',
      proofs: async () => [await proof(alice, { iat: NOW / 1000 - 3600 })],
      says: 'iat',
    },
    { name: 'a malformed proof', proofs: async () => ['not-a-jwt'], says: 'not a valid DPoP JWT' },
  ])('refuses $name with invalid_dpop_proof (400), consuming nothing', async ({ proofs, says }) => {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'cli' })
    const refused = await handleTokenRequest(
      codeParams(authorized),
      options(world, { clientId: 'cli', proofs: await proofs() }),
    )
    expect(refused.status).toBe(400)
    expect(errorOf(refused)).toBe('invalid_dpop_proof')
    expect(descriptionOf(refused)).toContain(says)
    // The code is still good: the proof was checked before the grant was touched.
    const retried = await handleTokenRequest(
      codeParams(authorized),
      options(world, { clientId: 'cli', proofs: [await proof(alice)] }),
    )
    expect(tokenOf(retried).token_type).toBe('DPoP')
  })

  it('refuses a replayed proof', async () => {
    const world = createWorld()
    const dpop = dpopOptions()
    const used = await proof(alice)
    expect(tokenOf(await redeem(world, { clientId: 'cli', dpop, proofs: [used] })).token_type).toBe('DPoP')
    const replayed = await redeem(world, { clientId: 'cli', dpop, proofs: [used] })
    expect([replayed.status, errorOf(replayed), descriptionOf(replayed)]).toEqual([
      400,
      'invalid_dpop_proof',
      'the proof was used before',
    ])
  })

  it('answers temporarily_unavailable (503) when the replay cache fails, and issues nothing', async () => {
    const world = createWorld()
    const cause = new Error('redis down')
    const dpop = dpopOptions({
      replayCache: {
        claim: () => {
          throw cause
        },
      },
    })
    const response = await redeem(world, { clientId: 'cli', dpop, proofs: [await proof(alice)] })
    expect([response.status, errorOf(response)]).toEqual([503, 'temporarily_unavailable'])
    expect(response.error?.cause).toBe(cause)
    expect(await world.tokens.listByOwner('alice')).toEqual([])
  })

  it.each([
    { name: 'without a proof', proofs: undefined, status: 400 },
    { name: 'on an endpoint without DPoP support', proofs: ['x'], dpop: undefined, status: 400 },
  ])('refuses a dpopBound client $name', async ({ proofs, ...rest }) => {
    const world = createWorld()
    const response = await redeem(world, {
      clientId: 'bound',
      ...('dpop' in rest && { dpop: rest.dpop }),
      ...(proofs !== undefined && { proofs }),
    })
    expectInvalidProof(response, 'client bound is registered for DPoP', rest.status)
  })

  it.each([
    { name: 'dpopJkt must be a thumbprint', extra: { dpopJkt: 'short' } },
    { name: 'dpop.url must be absolute', dpop: { url: '/oauth/token' } },
    { name: 'dpop.url has no query', dpop: { url: `${TOKEN_URL}?x=1` } },
    { name: 'dpop.replayCache is required', dpop: { replayCache: undefined } },
    { name: 'dpop.maxAgeSeconds is at most an hour', dpop: { maxAgeSeconds: 3601 } },
    { name: 'dpop.maxAgeSeconds is positive', dpop: { maxAgeSeconds: 0 } },
    { name: 'dpop.leewaySeconds is at most 300', dpop: { leewaySeconds: 301 } },
    { name: 'dpop.leewaySeconds is an integer', dpop: { leewaySeconds: 1.5 } },
  ])('configuration: $name', async ({ dpop, extra }) => {
    const world = createWorld()
    if (extra !== undefined) {
      expect(() => createOAuthToken({ userId: 'alice', scopes: [], now: NOW, ...extra })).toThrow(ConfigError)
      return
    }
    const broken = { ...dpopOptions(), ...dpop } as TokenEndpointDpopOptions
    await expect(
      handleTokenRequest({ grant_type: 'refresh_token' }, options(world, { dpop: broken })),
    ).rejects.toThrow(ConfigError)
  })
})

describe('dpop_jkt on the authorization request (RFC 9449 §10)', () => {
  it.each([
    { name: 'a proof by that key', key: () => alice, expected: 'DPoP' },
    {
      name: 'a proof by another key',
      key: () => mallory,
      expected: 'signed by another key than the authorization code',
    },
    { name: 'no proof', key: () => undefined, expected: 'the authorization code is bound to a DPoP key' },
  ])('a code requested with dpop_jkt, redeemed with $name', async ({ key, expected }) => {
    const world = createWorld()
    const signer = key()
    const response = await redeem(world, {
      clientId: 'cli',
      dpopJkt: alice.jkt,
      ...(signer !== undefined && { proofs: [await proof(signer)] }),
    })
    if (expected === 'DPoP') {
      expect(tokenOf(response).token_type).toBe('DPoP')
    } else {
      expectInvalidProof(response, expected)
    }
  })
})

describe('refreshing with DPoP (RFC 9449 §5)', () => {
  async function session(clientId: 'native' | 'cli', key?: DpopKey) {
    const world = createWorld()
    const body = tokenOf(
      await redeem(world, { clientId, ...(key !== undefined && { proofs: [await proof(key)] }) }),
    )
    return { world, body }
  }

  it.each([
    { name: 'a proof by the same key', key: () => alice, outcome: 'DPoP' },
    {
      name: 'a proof by another key',
      key: () => mallory,
      outcome: 'signed by another key than the refresh token',
    },
    { name: 'no proof', key: () => undefined, outcome: 'the refresh token is bound to a DPoP key' },
  ])("a public client's bound family refreshed with $name", async ({ key, outcome }) => {
    const { world, body } = await session('native', alice)
    const signer = key()
    const response = await refresh(
      world,
      body.refresh_token!,
      signer === undefined ? {} : { proofs: [await proof(signer)] },
    )
    if (outcome === 'DPoP') {
      const next = tokenOf(response)
      expect(next.token_type).toBe('DPoP')
      expect((await world.token(next.access_token))?.dpopJkt).toBe(alice.jkt)
      return
    }
    expectInvalidProof(response, outcome)
    // Nothing rotated: the refresh token still works with its key.
    const retried = await refresh(world, body.refresh_token!, { proofs: [await proof(alice)] })
    expect(tokenOf(retried).token_type).toBe('DPoP')
  })

  it("binds a public client's unbound family at its first refresh with a proof", async () => {
    const { world, body } = await session('native')
    expect(body.token_type).toBe('Bearer')
    const bound = tokenOf(await refresh(world, body.refresh_token!, { proofs: [await proof(alice)] }))
    expect(bound.token_type).toBe('DPoP')
    const withoutProof = await refresh(world, bound.refresh_token!, {})
    expect(errorOf(withoutProof)).toBe('invalid_dpop_proof')
  })

  it("leaves a confidential client's family unbound: each refresh binds to its own proof, or none", async () => {
    const { world, body } = await session('cli', alice)
    const rotated = tokenOf(
      await refresh(world, body.refresh_token!, { clientId: 'cli', proofs: [await proof(mallory)] }),
    )
    expect((await world.token(rotated.access_token))?.dpopJkt).toBe(mallory.jkt)
    const bearer = tokenOf(await refresh(world, rotated.refresh_token!, { clientId: 'cli' }))
    expect(bearer.token_type).toBe('Bearer')
  })
})

describe('the device-code grant with DPoP', () => {
  it('issues a DPoP token to a poll with a proof', async () => {
    const world = createWorld()
    const { verifier, challenge } = pkcePair()
    const started = await handleDeviceAuthorizationRequest(
      { scope: 'data.metadata', code_challenge: challenge, code_challenge_method: 'S256' },
      { clients: lookupClient, state: world.state, now: NOW, verificationUri: 'https://auth.example/device' },
    )
    const device = started.body as DeviceAuthorizationResponseBody
    const verified = await verifyUserCode({
      userCode: device.user_code,
      attemptKey: 's',
      now: NOW,
      store: world.state,
    })
    if (!verified.ok) throw new Error(verified.reason)
    await decideDeviceAuthorization({
      grantId: verified.grant.grantId,
      userId: 'alice',
      decision: 'approve',
      now: NOW,
      store: world.state,
    })
    const response = await handleTokenRequest(
      { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: device.device_code, code_verifier: verifier },
      options(world, { proofs: [await proof(alice)] }),
    )
    const body = tokenOf(response)
    expect(body.token_type).toBe('DPoP')
    expect((await world.token(body.access_token))?.dpopJkt).toBe(alice.jkt)
  })
})

describe('introspection of bound tokens (RFC 9449 §6.2)', () => {
  function introspect(world: World, token: string) {
    return handleIntrospectionRequest(
      { token },
      {
        clients: lookupClient,
        state: world.state,
        tokens: world.tokens,
        now: NOW,
        authorization: basic('rs', RESOURCE_SECRET),
      },
    )
  }

  it.each([
    {
      name: 'a bound access token',
      key: true,
      which: 'access_token',
      expected: { token_type: 'DPoP', cnf: true },
    },
    {
      name: 'an unbound access token',
      key: false,
      which: 'access_token',
      expected: { token_type: 'Bearer', cnf: false },
    },
    {
      name: 'a bound refresh token',
      key: true,
      which: 'refresh_token',
      expected: { token_type: undefined, cnf: true },
    },
  ] as const)('$name', async ({ key, which, expected }) => {
    const world = createWorld()
    const body = tokenOf(
      await redeem(world, { clientId: 'native', ...(key && { proofs: [await proof(alice)] }) }),
    )
    const answer = (await introspect(world, body[which]!)).body as Record<string, unknown>
    expect(answer.active).toBe(true)
    expect(answer.token_type).toBe(expected.token_type)
    expect(answer.cnf).toEqual(expected.cnf ? { jkt: alice.jkt } : undefined)
  })
})

describe('validateAuthorizationRequest reads dpop_jkt', () => {
  const base = {
    response_type: 'code',
    client_id: 'cli',
    redirect_uri: 'http://127.0.0.1:8765/cb',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 's',
  }

  it.each([
    { name: 'a thumbprint', value: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', ok: true },
    { name: 'absent', value: undefined, ok: true },
    { name: 'too short', value: 'NzbLsXh8uDCcd', ok: false },
    { name: 'padded', value: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9X=', ok: false },
    { name: 'repeated', value: ['a', 'b'], ok: false },
  ])('$name', async ({ value, ok }) => {
    const result = await validateAuthorizationRequest({ ...base, dpop_jkt: value }, lookupClient)
    if (ok) {
      expect(result.ok && result.request.dpopJkt).toBe(value ?? undefined)
      return
    }
    expect(result.ok).toBe(false)
    if (result.ok || result.respond !== 'redirect') throw new Error('expected an error redirect')
    expect(result.error.error).toBe('invalid_request')
    expect(new URL(result.location).searchParams.get('error_description')).toMatch(/dpop_jkt/)
  })
})
