import { describe, expect, it } from 'vitest'
import { ConfigError, InvalidArgumentError, TokenStoreError } from '../../src/errors.js'
import { authenticateClient } from '../../src/oauth/authenticate-client.js'
import { handleTokenRequest } from '../../src/oauth/handle-token-request.js'
import type { OAuthParams } from '../../src/oauth/oauth-params.js'
import { updateRecord } from '../../src/oauth/update-record.js'
import {
  authorize,
  basic,
  CLI,
  CLI_SECRET,
  codeParams,
  createWorld,
  lookupClient,
  NOW,
  WEB,
  wrapStore,
} from './fixtures.js'

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }
const CHALLENGE_401 = { ...NO_STORE, 'WWW-Authenticate': 'Basic realm="oauth"' }

describe('token endpoint: request shape', () => {
  it.each([
    ['a missing grant_type', {}, 'invalid_request'],
    ['an unknown grant_type', { grant_type: 'password' }, 'unsupported_grant_type'],
    ['client_credentials', { grant_type: 'client_credentials' }, 'unsupported_grant_type'],
    ['the implicit grant', { grant_type: 'implicit' }, 'unsupported_grant_type'],
    ['a prototype key as grant_type', { grant_type: 'constructor' }, 'unsupported_grant_type'],
    ['a repeated grant_type', { grant_type: ['authorization_code', 'refresh_token'] }, 'invalid_request'],
    ['a non-string grant_type (JSON)', { grant_type: 42 as unknown as string }, 'invalid_request'],
    [
      'a non-string code (JSON)',
      { grant_type: 'authorization_code', code: { $ne: '' } as unknown as string },
      'invalid_request',
    ],
  ] satisfies [string, OAuthParams, string][])(
    '%s → %s (400, RFC 6749 §5.2 JSON, no-store)',
    async (_name, params, error) => {
      const world = createWorld()
      const response = await handleTokenRequest(params, world.options(NOW))
      expect(response).toEqual({
        status: 400,
        headers: NO_STORE,
        body: { error, error_description: expect.any(String) },
        error: expect.objectContaining({ code: 'ERR_OAUTH', error }),
      })
    },
  )

  it('accepts a single-element array (a parsed query) as the value', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    const params = Object.fromEntries(Object.entries(codeParams(authorized)).map(([k, v]) => [k, [v!]]))
    expect((await handleTokenRequest(params, world.options(NOW))).status).toBe(200)
  })

  it('ignores unknown parameters (RFC 6749 §3.1)', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    expect(
      (await handleTokenRequest({ ...codeParams(authorized), foo: 'bar' }, world.options(NOW))).status,
    ).toBe(200)
  })

  it('answers a failing token store with server_error 503, never a token', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    const tokens = Object.assign(Object.create(null), {
      save: async () => {
        throw new TokenStoreError('redis down')
      },
    })
    const response = await handleTokenRequest(codeParams(authorized), { ...world.options(NOW), tokens })
    expect(response).toMatchObject({ status: 503, headers: NO_STORE, body: { error: 'server_error' } })
    expect(response.error?.cause).toBeInstanceOf(TokenStoreError)
  })

  it('answers a failing client registry with server_error 503', async () => {
    const world = createWorld()
    const response = await handleTokenRequest(
      { grant_type: 'authorization_code', client_id: 'cli' },
      {
        ...world.options(NOW),
        clients: () => {
          throw new Error('db down')
        },
      },
    )
    expect(response).toMatchObject({ status: 503, body: { error: 'server_error' } })
  })

  it.each([
    ['a bad clock', { now: -1 }, InvalidArgumentError],
    ['a realm with a quote', { realm: 'a"b' }, ConfigError],
    ['an empty realm', { realm: '' }, ConfigError],
    ['a zero access-token lifetime', { accessTokenTtlMs: 0 }, ConfigError],
    ['a fractional refresh-token lifetime', { refreshTokenTtlMs: 1.5 }, ConfigError],
    ['a refresh-token lifetime over a year', { refreshTokenTtlMs: 400 * 86_400_000 }, ConfigError],
  ])('throws for %s (the host’s mistake, not the client’s)', async (_name, overrides, type) => {
    const world = createWorld()
    await expect(
      handleTokenRequest({ grant_type: 'authorization_code' }, { ...world.options(NOW), ...overrides }),
    ).rejects.toThrow(type)
  })

  it('gives up when the state keeps changing under it', async () => {
    await expect(
      updateRecord(
        async () => ({ version: 0 }),
        async () => false,
        (current) => ({ result: 1, next: { version: (current?.version ?? 0) + 1 } }),
      ),
    ).rejects.toThrow(TokenStoreError)
  })
})

describe('token endpoint: client authentication (RFC 6749 §2.3.1)', () => {
  async function redeemAs(
    params: Record<string, string | undefined>,
    authorization?: string,
    realm?: string,
  ) {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'cli' })
    return handleTokenRequest(codeParams(authorized, params), {
      ...world.options(NOW, { authorization }),
      ...(realm !== undefined && { realm }),
    })
  }

  it.each([
    ['client_secret_basic', {}, basic('cli', CLI_SECRET)],
    [
      'client_secret_basic with a matching client_id in the body',
      { client_id: 'cli' },
      basic('cli', CLI_SECRET),
    ],
    [
      'client_secret_basic with a lower-case scheme and two spaces',
      {},
      `basic  ${btoa(`cli:${CLI_SECRET}`)}`,
    ],
    ['client_secret_post', { client_id: 'cli', client_secret: CLI_SECRET }, undefined],
    [
      'client_secret_post, with an unrelated Bearer header ignored',
      { client_id: 'cli', client_secret: CLI_SECRET },
      'Bearer x',
    ],
  ])('authenticates a confidential client with %s', async (_name, params, authorization) => {
    expect((await redeemAs(params, authorization)).status).toBe(200)
  })

  it.each([
    ['no secret', { client_id: 'cli' }, undefined, 'invalid_client'],
    ['a wrong secret (post)', { client_id: 'cli', client_secret: 'wrong' }, undefined, 'invalid_client'],
    ['a wrong secret (basic)', {}, basic('cli', 'wrong'), 'invalid_client'],
    ['a secret of another length', {}, basic('cli', `${CLI_SECRET}x`), 'invalid_client'],
    ['an empty secret (basic)', {}, basic('cli', ''), 'invalid_client'],
    ['an unknown client (basic)', {}, basic('nobody', 'x'), 'invalid_client'],
    ['malformed base64', {}, 'Basic !!!', 'invalid_client'],
    ['base64 without a colon', {}, `Basic ${btoa('cli')}`, 'invalid_client'],
    ['a bad percent-encoding', {}, `Basic ${btoa('cli:%zz')}`, 'invalid_client'],
    ['invalid UTF-8', {}, `Basic ${btoa('cli:\xff')}`, 'invalid_client'],
    ['a Basic header without credentials', {}, 'Basic', 'invalid_client'],
    ['a tab after Basic', {}, `Basic\t${btoa(`cli:${CLI_SECRET}`)}`, 'invalid_client'],
  ])(
    'refuses %s with 401 invalid_client and a Basic challenge',
    async (_name, params, authorization, error) => {
      const response = await redeemAs(params, authorization)
      expect(response).toMatchObject({ status: 401, headers: CHALLENGE_401, body: { error } })
    },
  )

  it('names the configured realm in the challenge', async () => {
    const response = await redeemAs({ client_id: 'cli' }, undefined, 'data api')
    expect(response.headers['WWW-Authenticate']).toBe('Basic realm="data api"')
  })

  it.each([
    ['both methods at once', { client_secret: CLI_SECRET }, basic('cli', CLI_SECRET)],
    ['a body client_id naming another client', { client_id: 'web' }, basic('cli', CLI_SECRET)],
  ])('refuses %s with invalid_request', async (_name, params, authorization) => {
    expect((await redeemAs(params, authorization)).body).toMatchObject({ error: 'invalid_request' })
  })

  it('decodes form-urlencoded credentials', async () => {
    const lookup = async (id: string) => (id === 'a b:c' ? { ...CLI, id: 'a b:c' } : undefined)
    const client = await authenticateClient({
      params: {},
      authorization: basic('a b:c', CLI_SECRET),
      lookupClient: lookup,
    })
    expect(client?.id).toBe('a b:c')
  })

  it.each([
    ['a public client sending a secret', { client_id: 'web', client_secret: 'x' }],
    ['a secret without client_id', { client_secret: 'x' }],
  ])('refuses %s', async (_name, params) => {
    await expect(authenticateClient({ params, lookupClient })).rejects.toMatchObject({
      error: 'invalid_client',
      status: 401,
    })
  })

  it('identifies a public client by client_id, and a session client by its absence', async () => {
    expect(await authenticateClient({ params: { client_id: 'web' }, lookupClient })).toBe(WEB)
    expect(await authenticateClient({ params: {}, lookupClient })).toBeUndefined()
    expect(await authenticateClient({ params: {}, authorization: basic('web', ''), lookupClient })).toBe(WEB)
  })

  it('fails closed on a client registry that answers for another id', async () => {
    await expect(
      authenticateClient({ params: { client_id: 'web' }, lookupClient: () => CLI }),
    ).rejects.toMatchObject({
      error: 'invalid_client',
    })
  })
})

describe('token endpoint: store faults never leak a token', () => {
  it('answers 503 when the state store fails at redemption', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    const failing = wrapStore(world.state, {
      findAuthorizationCode: async () => {
        throw new TokenStoreError('redis down')
      },
    })
    const response = await handleTokenRequest(codeParams(authorized), {
      ...world.options(NOW),
      state: failing,
    })
    expect(response.status).toBe(503)
    expect(await world.tokens.listByOwner('alice')).toEqual([])
  })
})
