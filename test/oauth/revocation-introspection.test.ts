/**
 * The revocation (RFC 7009) and introspection (RFC 7662) endpoints' rules, on the core functions:
 * who may call them, what each kind of token becomes, and that a store failure never reads as
 * revoked or active.
 */
import { describe, expect, it } from 'vitest'
import { handleIntrospectionRequest } from '../../src/oauth/handle-introspection-request.js'
import { handleRevocationRequest } from '../../src/oauth/handle-revocation-request.js'
import { handleTokenRequest, type TokenResponseBody } from '../../src/oauth/handle-token-request.js'
import type { OAuthParams } from '../../src/oauth/oauth-params.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import {
  createApiToken,
  revokeToken,
  rotateToken,
  type TokenRecord,
  tokenStatus,
} from '../../src/tokens/token-record.js'
import type { TokenStore } from '../../src/tokens/token-store.js'
import {
  authorize,
  basic,
  CLI_SECRET,
  codeParams,
  createWorld,
  NOW,
  RESOURCE_SECRET,
  type World,
  wrapStore,
} from './fixtures.js'

const CLI_AUTH = basic('cli', CLI_SECRET)
const RS_AUTH = basic('rs', RESOURCE_SECRET)

/** A session for `clientId` (cli: confidential and offline; native: public and offline; none: a session client). */
async function session(world: World, clientId: 'cli' | 'native' | undefined, now = NOW) {
  const redirectUri = clientId === 'native' ? 'http://[::1]:4000/done' : 'http://127.0.0.1:8765/cb'
  const authorized = await authorize(world, {
    ...(clientId !== undefined && { clientId }),
    scope: 'data.data',
    redirectUri,
    now,
  })
  const params = codeParams(authorized, clientId === 'native' ? { client_id: 'native' } : {})
  const response = await handleTokenRequest(
    params,
    world.options(now, clientId === 'cli' ? { authorization: CLI_AUTH } : {}),
  )
  if (response.status !== 200) throw new Error(JSON.stringify(response.body))
  return response.body as TokenResponseBody
}

function revoke(world: World, params: OAuthParams, authorization?: string, now = NOW) {
  return handleRevocationRequest(
    params,
    world.options(now, authorization === undefined ? {} : { authorization }),
  )
}

function introspect(world: World, params: OAuthParams, authorization: string | null = RS_AUTH, now = NOW) {
  return handleIntrospectionRequest(params, {
    ...world.options(now, authorization === null ? {} : { authorization }),
    usernameOf: (id: string) => `@${id}`,
  })
}

const down = () => Promise.reject(new Error('down'))

/** The world's token store with some methods replaced; the others reach it. */
function tokenStoreWith(store: TokenStore, overrides: Partial<TokenStore>): TokenStore {
  return {
    findByHash: (hash) => store.findByHash(hash),
    findById: (id) => store.findById(id),
    save: (record) => store.save(record),
    update: (record) => store.update(record),
    listByOwner: (userId) => store.listByOwner(userId),
    touch: (id, now, network) => store.touch(id, now, network),
    ...overrides,
  }
}

async function statusOf(world: World, value: string, now = NOW) {
  const record = await world.tokens.findByHash(hashTokenValue(value))
  return record && tokenStatus(record, now)
}

describe('revocation (RFC 7009)', () => {
  it('revokes an access token of the authenticated client: 200 with an empty object, never cached', async () => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    const response = await revoke(world, { token: tokens.access_token }, CLI_AUTH)
    expect(response).toMatchObject({ status: 200, body: {} })
    expect(response.headers['Cache-Control']).toBe('no-store')
    expect(await statusOf(world, tokens.access_token)).toBe('revoked')
  })

  it.each([
    ['no hint', {}],
    ['the right hint', { token_type_hint: 'refresh_token' }],
    ['a wrong hint', { token_type_hint: 'access_token' }],
    ['an unknown hint', { token_type_hint: 'id_token' }],
  ])(
    'a refresh token (%s) revokes its family and every access token the family issued',
    async (_name, hint) => {
      const world = createWorld()
      const first = await session(world, 'cli')
      const rotated = await handleTokenRequest(
        { grant_type: 'refresh_token', refresh_token: first.refresh_token! },
        world.options(NOW + 1000, { authorization: CLI_AUTH }),
      )
      const second = rotated.body as TokenResponseBody
      const response = await revoke(world, { token: second.refresh_token!, ...hint }, CLI_AUTH, NOW + 2000)
      expect(response.status).toBe(200)
      expect(await statusOf(world, first.access_token, NOW + 2000)).toBe('revoked')
      expect(await statusOf(world, second.access_token, NOW + 2000)).toBe('revoked')
      const again = await handleTokenRequest(
        { grant_type: 'refresh_token', refresh_token: second.refresh_token! },
        world.options(NOW + 3000, { authorization: CLI_AUTH }),
      )
      expect(again.body).toMatchObject({ error: 'invalid_grant' })
    },
  )

  it('lets a public client revoke with its client_id, and a session client without one', async () => {
    const world = createWorld()
    const native = await session(world, 'native')
    expect((await revoke(world, { token: native.refresh_token!, client_id: 'native' })).status).toBe(200)
    expect(await statusOf(world, native.access_token)).toBe('revoked')
    const own = await session(world, undefined)
    expect((await revoke(world, { token: own.access_token })).status).toBe(200)
    expect(await statusOf(world, own.access_token)).toBe('revoked')
  })

  it.each([
    ['an unknown well-formed token', () => generateTokenValue('oauth')],
    ['a malformed value', () => 'not-a-token'],
    ['an unknown refresh-shaped value', () => 'A'.repeat(48)],
  ])('answers 200 for %s', async (_name, value) => {
    const world = createWorld()
    expect(await revoke(world, { token: value() }, CLI_AUTH)).toMatchObject({ status: 200, body: {} })
  })

  it('answers 200 for a token already revoked, and again', async () => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    for (let i = 0; i < 2; i++) {
      expect((await revoke(world, { token: tokens.refresh_token! }, CLI_AUTH)).status).toBe(200)
    }
  })

  it('refuses an API token with unsupported_token_type, leaving it active (RFC 7009 §2.2.1)', async () => {
    const world = createWorld()
    const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW })
    await world.tokens.save(record)
    const response = await revoke(world, { token: value }, CLI_AUTH)
    expect(response).toMatchObject({ status: 400, body: { error: 'unsupported_token_type' } })
    expect(await statusOf(world, value)).toBe('active')
  })

  it.each([
    ['revoked', (record: TokenRecord) => revokeToken(record, NOW - 1)],
    ['expired', (record: TokenRecord) => record],
    ['unknown', undefined],
  ] as const)(
    'answers 200 for an API token that is %s, as for any token that no longer works (§2.2)',
    async (state, stored) => {
      const world = createWorld()
      const DAY = 86_400_000
      const { record, value } = createApiToken({
        userId: 'alice',
        name: 'ci',
        scopes: 'data.data',
        now: NOW - 2 * DAY,
        ...(state === 'expired' && { expiresAt: NOW - DAY }),
      })
      if (stored !== undefined) await world.tokens.save(stored(record))
      const response = await revoke(world, { token: value }, CLI_AUTH)
      expect(response).toMatchObject({ status: 200, body: {} })
    },
  )

  it.each([
    ['another client', { client_id: 'native' }, undefined, 400, 'invalid_request'],
    ['a session client', {}, undefined, 400, 'invalid_request'],
    ['a wrong secret', {}, basic('cli', 'wrong'), 401, 'invalid_client'],
    ['an unknown client', { client_id: 'nobody' }, undefined, 401, 'invalid_client'],
    ['a confidential client without its secret', { client_id: 'cli' }, undefined, 401, 'invalid_client'],
  ])('refuses %s, revoking nothing', async (_name, extra, authorization, status, error) => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    const response = await revoke(world, { token: tokens.access_token, ...extra }, authorization)
    expect(response).toMatchObject({ status, body: { error } })
    if (status === 401) expect(response.headers['WWW-Authenticate']).toBe('Basic realm="oauth"')
    expect(await statusOf(world, tokens.access_token)).toBe('active')
  })

  it.each([
    ['a missing token', {}],
    ['a repeated token', { token: ['a', 'b'] }],
  ])('refuses %s (invalid_request)', async (_name, params) => {
    const world = createWorld()
    expect(await revoke(world, params, CLI_AUTH)).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    })
  })

  it('answers server_error (503) when the state store fails: never a 200', async () => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    const state = wrapStore(world.state, {
      findRefreshFamilyByTokenHash: () => Promise.reject(new Error('down')),
    })
    const response = await handleRevocationRequest(
      { token: tokens.refresh_token! },
      { ...world.options(NOW), state, authorization: CLI_AUTH },
    )
    expect(response).toMatchObject({ status: 503, body: { error: 'server_error' } })
  })

  // A token-store failure must not read as revoked either: 503, the token still working, and a retry
  // once the store is back revokes it (a refresh token's family is revoked before its access tokens,
  // so the retry finds the family revoked and revokes the access tokens it issued).
  it.each([
    ['findByHash rejects, for an access token', 'access_token', { findByHash: down }],
    ['update rejects, for an access token', 'access_token', { update: down }],
    ['update rejects, for a refresh token (its family)', 'refresh_token', { update: down }],
  ] as const)(
    'answers server_error (503) when the token store fails (%s); a retry revokes',
    async (_name, which, failing) => {
      const world = createWorld()
      const tokens = await session(world, 'cli')
      const response = await handleRevocationRequest(
        { token: tokens[which]! },
        { ...world.options(NOW), tokens: tokenStoreWith(world.tokens, failing), authorization: CLI_AUTH },
      )
      expect(response).toMatchObject({ status: 503, body: { error: 'server_error' } })
      expect(await statusOf(world, tokens.access_token)).toBe('active')
      expect(await revoke(world, { token: tokens[which]! }, CLI_AUTH)).toMatchObject({
        status: 200,
        body: {},
      })
      expect(await statusOf(world, tokens.access_token)).toBe('revoked')
      if (which === 'refresh_token') {
        const again = await handleTokenRequest(
          { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
          world.options(NOW + 1000, { authorization: CLI_AUTH }),
        )
        expect(again.body).toMatchObject({ error: 'invalid_grant' })
      }
    },
  )
})

describe('introspection (RFC 7662)', () => {
  it('describes an active OAuth access token, never with its value', async () => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    const record = await world.tokens.findByHash(hashTokenValue(tokens.access_token))
    const response = await introspect(world, { token: tokens.access_token })
    expect(response.status).toBe(200)
    expect(response.headers['Cache-Control']).toBe('no-store')
    expect(response.body).toEqual({
      active: true,
      scope: 'public data.data',
      client_id: 'cli',
      sub: 'alice',
      username: '@alice',
      token_type: 'Bearer',
      exp: Math.floor(record!.expiresAt! / 1000),
      iat: Math.floor(NOW / 1000),
      jti: record!.id,
    })
    expect(JSON.stringify(response.body)).not.toContain(tokens.access_token)
  })

  it('describes an API token (no client_id, no exp when it never expires)', async () => {
    const world = createWorld()
    const { record, value } = createApiToken({ userId: 'bob', name: 'ci', scopes: 'data.metadata', now: NOW })
    await world.tokens.save(record)
    expect((await introspect(world, { token: value, token_type_hint: 'refresh_token' })).body).toEqual({
      active: true,
      scope: 'public data.metadata',
      sub: 'bob',
      username: '@bob',
      token_type: 'Bearer',
      iat: Math.floor(NOW / 1000),
      jti: record.id,
    })
  })

  // A store answers the rotated token's record for the replaced value too: introspection must apply
  // the overlap as authentication does, or a resource server keeps a replaced value alive.
  it.each([
    ['no overlap, at once', 0, NOW + 1, false],
    ['no overlap, ten days on', 0, NOW + 10 * 86_400_000, false],
    ['inside a 1 h overlap', 3_600_000, NOW + 1000, true],
    ['after a 1 h overlap', 3_600_000, NOW + 3_600_000, false],
  ])(
    'a value a rotation replaced (%s): active only inside its overlap',
    async (_name, overlapMs, at, active) => {
      const world = createWorld()
      const created = createApiToken({ userId: 'bob', name: 'ci', scopes: 'data.metadata', now: NOW })
      await world.tokens.save(created.record)
      const rotated = rotateToken(created.record, { overlapMs, now: NOW })
      await world.tokens.rotate!(rotated.record)
      const old = await introspect(world, { token: created.value }, RS_AUTH, at)
      if (active) {
        expect(old.body).toMatchObject({
          active: true,
          sub: 'bob',
          exp: Math.floor((NOW + overlapMs) / 1000),
        })
      } else {
        expect(old.body).toEqual({ active: false })
      }
      expect((await introspect(world, { token: rotated.value }, RS_AUTH, at)).body).toMatchObject({
        active: true,
      })
    },
  )

  it('describes the current refresh token, without token_type, and a rotated one as inactive', async () => {
    const world = createWorld()
    const first = await session(world, 'cli')
    expect((await introspect(world, { token: first.refresh_token! })).body).toMatchObject({
      active: true,
      client_id: 'cli',
      sub: 'alice',
    })
    expect((await introspect(world, { token: first.refresh_token! })).body).not.toHaveProperty('token_type')
    await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token! },
      world.options(NOW + 1000, { authorization: CLI_AUTH }),
    )
    expect((await introspect(world, { token: first.refresh_token! }, RS_AUTH, NOW + 1000)).body).toEqual({
      active: false,
    })
  })

  it.each([
    ['an unknown token', async () => generateTokenValue('oauth'), NOW],
    ['a malformed value', async () => 'garbage', NOW],
    [
      'a revoked token',
      async (world: World) => {
        const tokens = await session(world, 'cli')
        await revoke(world, { token: tokens.access_token }, CLI_AUTH)
        return tokens.access_token
      },
      NOW,
    ],
    ['an expired token', async (world: World) => (await session(world, 'cli')).access_token, NOW + 3_600_000],
  ])('answers {"active": false} for %s', async (_name, make, now) => {
    const world = createWorld()
    const value = await make(world)
    expect(await introspect(world, { token: value }, RS_AUTH, now)).toMatchObject({
      status: 200,
      body: { active: false },
    })
    expect(Object.keys((await introspect(world, { token: value }, RS_AUTH, now)).body)).toEqual(['active'])
  })

  it.each([
    ['no client authentication', null, {}, 401, 'invalid_client'],
    ['a public client', null, { client_id: 'native' }, 401, 'invalid_client'],
    ['a wrong secret', basic('rs', 'wrong'), {}, 401, 'invalid_client'],
    ['a confidential client not allowed to introspect', CLI_AUTH, {}, 400, 'unauthorized_client'],
  ])('refuses %s', async (_name, authorization, extra, status, error) => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    const response = await introspect(world, { token: tokens.access_token, ...extra }, authorization)
    expect(response).toMatchObject({ status, body: { error } })
    expect(JSON.stringify(response.body)).not.toContain('active')
  })

  it('refuses a missing token (invalid_request)', async () => {
    const world = createWorld()
    expect(await introspect(world, {})).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
  })

  it('answers server_error (503) when the token store fails: never active', async () => {
    const world = createWorld()
    const tokens = await session(world, 'cli')
    const failing = Object.create(world.tokens, {
      findByHash: { value: () => Promise.reject(new Error('down')) },
    })
    const response = await handleIntrospectionRequest(
      { token: tokens.access_token },
      { ...world.options(NOW), tokens: failing, authorization: RS_AUTH },
    )
    expect(response).toMatchObject({ status: 503, body: { error: 'server_error' } })
  })
})
