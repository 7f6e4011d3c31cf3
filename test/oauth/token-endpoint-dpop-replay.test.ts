import { describe, expect, it } from 'vitest'
import { MemoryDpopReplayCache } from '../../src/dpop/index.js'
import type { DpopReplayCache } from '../../src/dpop/replay-cache.js'
import { decideDeviceAuthorization } from '../../src/oauth/decide-device-authorization.js'
import { handleDeviceAuthorizationRequest } from '../../src/oauth/handle-device-authorization-request.js'
import {
  DEVICE_CODE_GRANT_TYPE,
  handleTokenRequest,
  type TokenResponseBody,
} from '../../src/oauth/handle-token-request.js'
import type { OAuthParams } from '../../src/oauth/oauth-params.js'
import type { DeviceAuthorizationResponseBody } from '../../src/oauth/start-device-authorization.js'
import { verifyUserCode } from '../../src/oauth/verify-user-code.js'
import { dpopKey, dpopProof } from '../dpop/proofs.js'
import {
  authorize,
  basic,
  CLI_SECRET,
  codeParams,
  createWorld,
  lookupClient,
  NOW,
  pkcePair,
  type World,
} from './fixtures.js'

// The token endpoint records a proof in the replay cache only once the grant is good for the
// client: refused requests, which anyone can send with fresh proofs, take no room in the cache.

const TOKEN_URL = 'https://auth.example/oauth/token'

// A proof by a fresh key, as an attacker filling the cache would send.
async function freshProof(): Promise<string> {
  return dpopProof(await dpopKey(), { method: 'POST', url: TOKEN_URL, iat: NOW / 1000 })
}

function send(world: World, params: OAuthParams, proof: string, replayCache: DpopReplayCache, cli = false) {
  return handleTokenRequest(
    params,
    world.options(NOW, {
      ...(cli && { authorization: basic('cli', CLI_SECRET) }),
      dpop: { url: TOKEN_URL, replayCache },
      dpopProofs: [proof],
    }),
  )
}

function smallCache(): MemoryDpopReplayCache {
  return new MemoryDpopReplayCache({ maxEntries: 5, now: () => NOW })
}

function tokenOf(response: { readonly status: number; readonly body: unknown }): TokenResponseBody {
  if (response.status !== 200) throw new Error(JSON.stringify(response.body))
  return response.body as TokenResponseBody
}

function errorOf(response: { readonly body: unknown }): { error: string; error_description: string } {
  return response.body as { error: string; error_description: string }
}

// A device grant for a session client, approved or left pending; the poll's parameters.
async function deviceGrant(world: World, approve: boolean): Promise<OAuthParams> {
  const { verifier, challenge } = pkcePair()
  const started = await handleDeviceAuthorizationRequest(
    { scope: 'data.metadata', code_challenge: challenge, code_challenge_method: 'S256' },
    { clients: lookupClient, state: world.state, now: NOW, verificationUri: 'https://auth.example/device' },
  )
  const device = started.body as DeviceAuthorizationResponseBody
  if (approve) {
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
  }
  return { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: device.device_code, code_verifier: verifier }
}

// A refresh token of the confidential client `cli`.
async function cliRefreshToken(world: World): Promise<string> {
  const authorized = await authorize(world, { clientId: 'cli' })
  const body = tokenOf(
    await handleTokenRequest(
      codeParams(authorized),
      world.options(NOW, { authorization: basic('cli', CLI_SECRET) }),
    ),
  )
  return body.refresh_token!
}

describe('refused token requests leave nothing in the replay cache', () => {
  it.each([
    {
      name: 'an unknown refresh token of a public client',
      params: async () => ({ grant_type: 'refresh_token', client_id: 'native', refresh_token: 'x' }),
      error: 'invalid_grant',
    },
    {
      name: "another client's refresh token",
      params: async (world: World) => ({
        grant_type: 'refresh_token',
        client_id: 'native',
        refresh_token: await cliRefreshToken(world),
      }),
      error: 'invalid_grant',
    },
    {
      name: 'an unknown authorization code',
      params: async () => ({
        grant_type: 'authorization_code',
        code: 'x',
        code_verifier: pkcePair().verifier,
      }),
      error: 'invalid_grant',
    },
    {
      name: "another client's authorization code",
      params: async (world: World) =>
        codeParams(await authorize(world, { clientId: 'cli' }), { client_id: 'native' }),
      error: 'invalid_grant',
    },
    {
      name: 'an expired authorization code',
      params: async (world: World) => codeParams(await authorize(world, { now: NOW - 3_600_000 })),
      error: 'invalid_grant',
    },
    {
      name: 'an unknown device code',
      params: async () => ({
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: 'x',
        code_verifier: pkcePair().verifier,
      }),
      error: 'invalid_grant',
    },
    {
      name: 'a device code not yet approved',
      params: (world: World) => deviceGrant(world, false),
      error: 'authorization_pending',
    },
    {
      name: 'an unsupported grant type',
      params: async () => ({ grant_type: 'password', client_id: 'native' }),
      error: 'unsupported_grant_type',
    },
  ])('$name, with fresh proofs from fresh keys', async ({ params, error }) => {
    const world = createWorld()
    const replayCache = smallCache()
    // More refused requests than the cache holds: each one must leave it as it was.
    for (let attempt = 0; attempt < 8; attempt++) {
      const refused = await send(world, await params(world), await freshProof(), replayCache)
      expect(errorOf(refused).error).toBe(error)
      expect(replayCache.size).toBe(0)
    }
    // The cache has all its room for a legitimate request.
    const legitimate = await send(world, codeParams(await authorize(world)), await freshProof(), replayCache)
    expect(tokenOf(legitimate).token_type).toBe('DPoP')
    expect(replayCache.size).toBe(1)
  })
})

describe('a replayed proof with a good grant is refused and spends nothing', () => {
  it.each([
    { name: 'an authorization code', params: async (world: World) => codeParams(await authorize(world)) },
    {
      name: 'a refresh token',
      params: async (world: World) => ({
        grant_type: 'refresh_token',
        refresh_token: await cliRefreshToken(world),
      }),
      cli: true,
    },
    { name: 'an approved device code', params: (world: World) => deviceGrant(world, true) },
  ])('$name', async ({ params, cli = false }) => {
    const world = createWorld()
    const replayCache = smallCache()
    const used = await freshProof()
    tokenOf(await send(world, codeParams(await authorize(world)), used, replayCache))
    const grant = await params(world)
    const replayed = await send(world, grant, used, replayCache, cli)
    expect([replayed.status, errorOf(replayed)]).toEqual([
      400,
      { error: 'invalid_dpop_proof', error_description: 'the proof was used before' },
    ])
    // The grant is still good: the replay was refused before it was consumed.
    const retried = await send(world, grant, await freshProof(), replayCache, cli)
    expect(tokenOf(retried).token_type).toBe('DPoP')
    expect(replayCache.size).toBe(2)
  })

  it('a replay cache that fails leaves the authorization code unused', async () => {
    const world = createWorld()
    const grant = codeParams(await authorize(world))
    const failing = await send(world, grant, await freshProof(), {
      claim: () => Promise.reject(new Error('redis down')),
    })
    expect([failing.status, errorOf(failing).error]).toEqual([503, 'temporarily_unavailable'])
    expect(tokenOf(await send(world, grant, await freshProof(), smallCache())).token_type).toBe('DPoP')
  })
})

describe("the token endpoint's replay window", () => {
  it.each([
    { name: 'by default', window: {}, seconds: 300 + 30 + 60 },
    {
      name: 'for a window of 60 s without leeway',
      window: { maxAgeSeconds: 60, leewaySeconds: 0 },
      seconds: 120,
    },
  ])(
    'remembers a proof past its window by the leeway and a minute of skew, $name',
    async ({ window, seconds }) => {
      const world = createWorld()
      const claims: number[] = []
      const replayCache = { claim: (_key: string, expiresAt: number) => claims.push(expiresAt) > 0 }
      const response = await handleTokenRequest(
        codeParams(await authorize(world)),
        world.options(NOW, {
          dpop: { url: TOKEN_URL, replayCache, ...window },
          dpopProofs: [await freshProof()],
        }),
      )
      expect(tokenOf(response).token_type).toBe('DPoP')
      expect(claims).toEqual([NOW + seconds * 1000])
    },
  )
})
