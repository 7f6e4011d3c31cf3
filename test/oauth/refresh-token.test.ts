import { describe, expect, it } from 'vitest'
import { handleTokenRequest, type TokenResponseBody } from '../../src/oauth/handle-token-request.js'
import { MAX_REMEMBERED_REFRESH_TOKENS } from '../../src/oauth/issue-tokens.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { tokenStatus } from '../../src/tokens/token-record.js'
import {
  authorize,
  basic,
  CLI_SECRET,
  codeParams,
  createWorld,
  NOW,
  type World,
  wrapStore,
} from './fixtures.js'

const DAY = 86_400_000

type Session = { readonly world: World; readonly first: TokenResponseBody }

async function offlineSession(clientId = 'cli', scope = 'data.data wokflow.read'): Promise<Session> {
  const world = createWorld()
  const redirectUri = clientId === 'native' ? 'http://[::1]:4000/done' : 'http://127.0.0.1:8765/cb'
  const authorized = await authorize(world, { clientId, scope, redirectUri })
  const response = await handleTokenRequest(
    codeParams(authorized, { client_id: clientId }),
    auth(world, NOW, clientId),
  )
  if (response.status !== 200) throw new Error(JSON.stringify(response.body))
  return { world, first: response.body as TokenResponseBody }
}

function auth(world: World, now: number, clientId = 'cli') {
  return clientId === 'cli'
    ? world.options(now, { authorization: basic('cli', CLI_SECRET) })
    : world.options(now)
}

function refresh(
  world: World,
  refreshToken: string,
  now: number,
  extra: Record<string, string> = {},
  clientId = 'cli',
) {
  return handleTokenRequest(
    {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...(clientId !== 'cli' && { client_id: clientId }),
      ...extra,
    },
    auth(world, now, clientId),
  )
}

async function status(world: World, value: string, now: number) {
  const record = await world.tokens.findByHash(hashTokenValue(value))
  return record && tokenStatus(record, now)
}

describe('refresh tokens: who gets one (contract §5, design §6)', () => {
  it('a registered offline client always gets one, public or confidential', async () => {
    for (const clientId of ['cli', 'native']) {
      const { first } = await offlineSession(clientId)
      expect(first.refresh_token).toMatch(/^[0-9A-Za-z]{48}$/)
    }
  })

  it('a registered client without offline access, and a session client, never do', async () => {
    const world = createWorld()
    const web = await authorize(world, { clientId: 'web', redirectUri: 'https://web.example/cb' })
    const session = await authorize(world)
    for (const response of [
      await handleTokenRequest(codeParams(web, { client_id: 'web' }), world.options(NOW)),
      await handleTokenRequest(codeParams(session), world.options(NOW)),
    ]) {
      expect(response.status).toBe(200)
      expect(response.body).not.toHaveProperty('refresh_token')
    }
  })
})

describe('refresh tokens: rotation (RFC 9700 §4.14.2)', () => {
  it('rotates: a new access token and a new refresh token, the old one invalid', async () => {
    const { world, first } = await offlineSession()
    const response = await refresh(world, first.refresh_token!, NOW + 30 * 60_000)
    expect(response.status).toBe(200)
    const second = response.body as TokenResponseBody
    expect(second).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'public data.data wokflow.read',
      refresh_token: expect.any(String),
    })
    expect(second.refresh_token).not.toBe(first.refresh_token)
    expect(second.access_token).not.toBe(first.access_token)
    expect(await world.tokens.findByHash(hashTokenValue(second.access_token))).toMatchObject({
      clientId: 'cli',
      userId: 'alice',
      expiresAt: NOW + 30 * 60_000 + 3_600_000,
    })
    // The new one rotates in turn.
    const third = await refresh(world, second.refresh_token!, NOW + 40 * 60_000)
    expect(third.status).toBe(200)
  })

  it('revokes the family when a rotated refresh token is reused', async () => {
    const { world, first } = await offlineSession()
    const second = (await refresh(world, first.refresh_token!, NOW + 1000)).body as TokenResponseBody
    const reuse = await refresh(world, first.refresh_token!, NOW + 2000)
    expect(reuse.status).toBe(400)
    expect(reuse.body).toEqual({
      error: 'invalid_grant',
      error_description: 'the refresh token was already used; its family is revoked',
    })
    expect(await status(world, first.access_token, NOW + 2000)).toBe('revoked')
    expect(await status(world, second.access_token, NOW + 2000)).toBe('revoked')
    // The attacker's or the client's current refresh token is dead too.
    expect((await refresh(world, second.refresh_token!, NOW + 3000)).body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the refresh token was revoked',
    })
  })

  it('lets one of two concurrent refreshes with the same token win; the loser revokes the family', async () => {
    const { world, first } = await offlineSession()
    const responses = await Promise.all([
      refresh(world, first.refresh_token!, NOW + 1000),
      refresh(world, first.refresh_token!, NOW + 1000),
    ])
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400])
    const winner = responses.find((r) => r.status === 200)!.body as TokenResponseBody
    expect(await status(world, winner.access_token, NOW + 1000)).toBe('revoked')
    const owned = await world.tokens.listByOwner('alice')
    for (const record of owned) expect(tokenStatus(record, NOW + 1000)).toBe('revoked')
  })

  it('revokes the access token it just issued when the family is revoked mid-refresh', async () => {
    const { world, first } = await offlineSession()
    const state = world.state
    let raced = false
    const racing = wrapStore(state, {
      findRefreshFamily: async (id, now) => {
        if (!raced) {
          raced = true
          // Between the check and the rotation, another request revokes the family (as a reused
          // authorization code does).
          const family = await state.findRefreshFamily(id, now)
          await state.replaceRefreshFamily({ ...family!, version: family!.version + 1, revokedAt: now })
        }
        return state.findRefreshFamily(id, now)
      },
    })
    const response = await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token! },
      { ...auth(world, NOW + 1000), state: racing },
    )
    expect(response.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the refresh token was revoked',
    })
    const records = await world.tokens.listByOwner('alice')
    expect(records).toHaveLength(2)
    expect(records.filter((r) => r.revokedAt !== undefined)).toHaveLength(1)
  })

  it('expires 30 days after the last rotation by default, or as configured', async () => {
    const { world, first } = await offlineSession()
    const later = NOW + 29 * DAY
    const second = (await refresh(world, first.refresh_token!, later)).body as TokenResponseBody
    expect(second.refresh_token).toBeDefined()
    // Still retained (an access token of the family lives on), but expired for rotation.
    const expired = await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: second.refresh_token! },
      { ...auth(world, later + 3_599_000), refreshTokenTtlMs: 1000 },
    )
    expect(expired.status).toBe(200)
    const third = (expired.body as TokenResponseBody).refresh_token!
    const tooLate = await refresh(world, third, later + 3_599_000 + 1000)
    expect(tooLate.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the refresh token has expired',
    })
    expect((await refresh(world, third, later + 400 * DAY)).body).toMatchObject({
      error_description: 'unknown refresh token',
    })
  })

  it('indexes a bounded number of rotated tokens, and detects the reuse of any of them', async () => {
    const { world, first } = await offlineSession()
    let current = first.refresh_token!
    const rotated: string[] = []
    for (let i = 1; i <= MAX_REMEMBERED_REFRESH_TOKENS + 6; i++) {
      rotated.push(current)
      current = ((await refresh(world, current, NOW + i)).body as TokenResponseBody).refresh_token!
    }
    const family = await world.state.findRefreshFamilyByTokenHash(hashTokenValue(current), NOW + 100)
    expect(family?.tokenHashes).toHaveLength(MAX_REMEMBERED_REFRESH_TOKENS)
    // The first token is no longer indexed, and still names its family: a reuse, however old.
    expect((await refresh(world, rotated[0]!, NOW + 100)).body).toMatchObject({
      error_description: expect.stringMatching(/already used/),
    })
    expect((await refresh(world, current, NOW + 101)).body).toMatchObject({
      error_description: 'the refresh token was revoked',
    })
  })

  it('a made-up token that names no live family is unknown, and revokes nothing', async () => {
    const { world, first } = await offlineSession()
    for (const value of [`${'A'.repeat(16)}${'B'.repeat(32)}`, 'x', first.refresh_token!.slice(0, 47)]) {
      expect((await refresh(world, value, NOW + 1)).body).toMatchObject({
        error_description: 'unknown refresh token',
      })
    }
    expect((await refresh(world, first.refresh_token!, NOW + 2)).status).toBe(200)
  })

  it('drops expired access tokens from the family record as it rotates', async () => {
    const { world, first } = await offlineSession()
    const second = (await refresh(world, first.refresh_token!, NOW + 2 * 3_600_000)).body as TokenResponseBody
    const family = await world.state.findRefreshFamilyByTokenHash(
      hashTokenValue(second.refresh_token!),
      NOW + 2 * 3_600_000,
    )
    expect(family?.accessTokens).toHaveLength(1)
  })
})

describe('refresh tokens: scopes (RFC 6749 §6)', () => {
  it.each([
    ['the same scopes', 'data.data wokflow.read', 'public data.data wokflow.read'],
    ['a subset', 'wokflow.read', 'public wokflow.read'],
    ['an implied narrower scope', 'data.metadata', 'public data.metadata'],
    ['public only', 'public', 'public'],
  ])('may narrow to %s', async (_name, scope, granted) => {
    const { world, first } = await offlineSession()
    const response = await refresh(world, first.refresh_token!, NOW + 1, { scope })
    expect(response.body).toMatchObject({ scope: granted })
  })

  it.each([
    ['a scope not granted', 'data.edit'],
    ['an unknown scope', 'workflow.read'],
    ['a malformed scope string', 'data.data  public'],
  ])('refuses %s with invalid_scope, leaving the token usable', async (_name, scope) => {
    const { world, first } = await offlineSession()
    expect((await refresh(world, first.refresh_token!, NOW + 1, { scope })).body).toMatchObject({
      error: 'invalid_scope',
    })
    expect((await refresh(world, first.refresh_token!, NOW + 2)).status).toBe(200)
  })
})

describe('refresh tokens: refused requests', () => {
  it.each([
    ['a missing refresh_token', {}, 'invalid_request'],
    ['an unknown refresh token', { refresh_token: 'x'.repeat(32) }, 'invalid_grant'],
  ])('%s → %s', async (_name, params, error) => {
    const { world } = await offlineSession()
    const response = await handleTokenRequest({ grant_type: 'refresh_token', ...params }, auth(world, NOW))
    expect(response.body).toMatchObject({ error })
  })

  it('refuses a refresh without client authentication (invalid_client, 401 with a Basic challenge)', async () => {
    const { world, first } = await offlineSession()
    const response = await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token! },
      world.options(NOW),
    )
    expect(response.status).toBe(401)
    expect(response.body).toMatchObject({ error: 'invalid_client' })
    expect(response.headers['WWW-Authenticate']).toBe('Basic realm="oauth"')
  })

  it('refuses a registered client without offline access (unauthorized_client)', async () => {
    const { world, first } = await offlineSession()
    const response = await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: 'web' },
      world.options(NOW),
    )
    expect(response.body).toMatchObject({ error: 'unauthorized_client' })
  })

  it('refuses another offline client (invalid_grant), leaving the token usable', async () => {
    const { world, first } = await offlineSession()
    const response = await refresh(world, first.refresh_token!, NOW + 1, {}, 'native')
    expect(response.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the refresh token was issued to another client',
    })
    expect((await refresh(world, first.refresh_token!, NOW + 2)).status).toBe(200)
  })

  it('revokes the new access token when the state store fails while starting a family', async () => {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'cli' })
    const failing = wrapStore(world.state, {
      saveRefreshFamily: async () => {
        throw new Error('redis down')
      },
    })
    const response = await handleTokenRequest(codeParams(authorized), {
      ...auth(world, NOW),
      state: failing,
    })
    expect(response.status).toBe(503)
    expect(response.body).toEqual({
      error: 'server_error',
      error_description: 'the authorization server is temporarily unavailable',
    })
    const [record] = await world.tokens.listByOwner('alice')
    expect(record?.revokedAt).toBe(NOW)
  })
})
