import { describe, expect, it } from 'vitest'
import { ConfigError, InvalidArgumentError } from '../../src/errors.js'
import { handleTokenRequest } from '../../src/oauth/handle-token-request.js'
import { issueAuthorizationCode } from '../../src/oauth/issue-authorization-code.js'
import { validateAuthorizationRequest } from '../../src/oauth/validate-authorization-request.js'
import { isWellFormedTokenValue, tokenKindOf } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { tokenStatus } from '../../src/tokens/token-record.js'
import {
  authorize,
  basic,
  CLI_SECRET,
  codeParams,
  createWorld,
  lookupClient,
  NOW,
  pkcePair,
  RFC_CHALLENGE,
  RFC_VERIFIER,
  wrapStore,
} from './fixtures.js'

const HOUR = 3_600_000
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }

describe('issueAuthorizationCode', () => {
  it('stores only the hash of a 190-bit code and redirects with code and state', async () => {
    const world = createWorld()
    const result = await validateAuthorizationRequest(
      {
        response_type: 'code',
        client_id: 'cli',
        redirect_uri: 'https://app.example/cb?tenant=7',
        code_challenge: RFC_CHALLENGE,
        code_challenge_method: 'S256',
        scope: 'data.data wokflow.read',
        state: 'a b',
      },
      lookupClient,
    )
    if (!result.ok) throw new Error('unexpected')
    const issued = await issueAuthorizationCode({
      request: result.request,
      userId: 'alice',
      now: NOW,
      store: world.state,
    })
    expect(issued.code).toMatch(/^[0-9A-Za-z]{32}$/)
    expect(issued.expiresAt).toBe(NOW + 60_000)
    expect(issued.location).toBe(`https://app.example/cb?tenant=7&code=${issued.code}&state=a+b`)
    const record = await world.state.findAuthorizationCode(hashTokenValue(issued.code), NOW)
    expect(record).toEqual({
      hash: hashTokenValue(issued.code),
      version: 0,
      clientId: 'cli',
      userId: 'alice',
      redirectUri: 'https://app.example/cb?tenant=7',
      codeChallenge: RFC_CHALLENGE,
      scopes: ['public', 'data.data', 'wokflow.read'],
      createdAt: NOW,
      expiresAt: NOW + 60_000,
      retainUntil: NOW + 120_000,
      issuedTokenIds: [],
    })
    expect(JSON.stringify(record)).not.toContain(issued.code)
  })

  it('draws a different code every time', async () => {
    const world = createWorld()
    const codes = new Set<string>()
    for (let i = 0; i < 20; i++) codes.add((await authorize(world)).code)
    expect(codes.size).toBe(20)
  })

  it.each([
    ['a lifetime over 60 s', { ttlMs: 60_001 }, ConfigError],
    ['a zero lifetime', { ttlMs: 0 }, ConfigError],
    ['a fractional lifetime', { ttlMs: 1.5 }, ConfigError],
    ['a bad clock', { now: Number.NaN }, InvalidArgumentError],
    ['an empty user id', { userId: '' }, InvalidArgumentError],
  ])('refuses %s', async (_name, overrides, type) => {
    const world = createWorld()
    const result = await validateAuthorizationRequest(
      {
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1:1/cb',
        code_challenge: RFC_CHALLENGE,
        code_challenge_method: 'S256',
      },
      lookupClient,
    )
    if (!result.ok) throw new Error('unexpected')
    await expect(
      issueAuthorizationCode({
        request: result.request,
        userId: 'alice',
        now: NOW,
        store: world.state,
        ...overrides,
      }),
    ).rejects.toThrow(type)
  })

  it('accepts a shorter lifetime', async () => {
    const world = createWorld()
    const result = await validateAuthorizationRequest(
      {
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1:1/cb',
        code_challenge: RFC_CHALLENGE,
        code_challenge_method: 'S256',
      },
      lookupClient,
    )
    if (!result.ok) throw new Error('unexpected')
    const issued = await issueAuthorizationCode({
      request: result.request,
      userId: 'a',
      now: NOW,
      store: world.state,
      ttlMs: 10_000,
    })
    expect(issued.expiresAt).toBe(NOW + 10_000)
    expect(issued.location).toBe(`http://127.0.0.1:1/cb?code=${issued.code}`)
  })
})

describe('token endpoint: authorization_code grant', () => {
  it('issues a short-lived dao_ token, without refresh token, to a session client', async () => {
    const world = createWorld()
    const authorized = await authorize(world, { scope: 'data.metadata' })
    const response = await handleTokenRequest(codeParams(authorized), world.options(NOW + 5_000))
    expect(response.status).toBe(200)
    expect(response.headers).toEqual(NO_STORE)
    expect(response.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'public data.metadata',
    })
    const value = (response.body as { access_token: string }).access_token
    expect(isWellFormedTokenValue(value) && tokenKindOf(value)).toBe('oauth')
    const record = await world.token(value)
    expect(record).toMatchObject({
      kind: 'oauth',
      userId: 'alice',
      scopes: ['public', 'data.metadata'],
      expiresAt: NOW + 5_000 + HOUR,
    })
    expect(record).not.toHaveProperty('clientId')
  })

  it('issues a token bound to a registered public client, with a configurable lifetime', async () => {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'web', redirectUri: 'https://web.example/cb' })
    const response = await handleTokenRequest(
      codeParams(authorized, { client_id: 'web' }),
      world.options(NOW, { accessTokenTtlMs: 600_000 }),
    )
    expect(response.body).toMatchObject({ expires_in: 600 })
    expect(response.body).not.toHaveProperty('refresh_token')
    const record = await world.token((response.body as { access_token: string }).access_token)
    expect(record).toMatchObject({ clientId: 'web', expiresAt: NOW + 600_000 })
  })

  it('adds a refresh token for a registered offline client (confidential, client_secret_basic)', async () => {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'cli', scope: 'data.data' })
    const response = await handleTokenRequest(
      codeParams(authorized),
      world.options(NOW, { authorization: basic('cli', CLI_SECRET) }),
    )
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({
      scope: 'public data.data',
      refresh_token: expect.stringMatching(/^[0-9A-Za-z]{48}$/),
    })
  })

  it('accepts the RFC 7636 Appendix B pair end to end', async () => {
    const world = createWorld()
    const result = await validateAuthorizationRequest(
      {
        response_type: 'code',
        redirect_uri: 'http://[::1]:9/cb',
        code_challenge: RFC_CHALLENGE,
        code_challenge_method: 'S256',
      },
      lookupClient,
    )
    if (!result.ok) throw new Error('unexpected')
    const { code } = await issueAuthorizationCode({
      request: result.request,
      userId: 'bob',
      now: NOW,
      store: world.state,
    })
    const response = await handleTokenRequest(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://[::1]:9/cb',
        code_verifier: RFC_VERIFIER,
      },
      world.options(NOW),
    )
    expect(response.status).toBe(200)
  })

  // Design §7, PKCE outcomes and code bindings at the token endpoint.
  it.each([
    ['a wrong verifier', () => ({ code_verifier: pkcePair().verifier }), 'invalid_grant'],
    ['the challenge as verifier', (a) => ({ code_verifier: a.challenge }), 'invalid_grant'],
    ['a missing verifier', () => ({ code_verifier: undefined }), 'invalid_grant'],
    ['an empty verifier (absent, RFC 6749 §3.1)', () => ({ code_verifier: '' }), 'invalid_grant'],
    ['a malformed verifier (42 characters)', () => ({ code_verifier: 'a'.repeat(42) }), 'invalid_request'],
    ['a malformed verifier (a slash)', () => ({ code_verifier: `${'a'.repeat(42)}/` }), 'invalid_request'],
    ['another redirect URI', () => ({ redirect_uri: 'http://127.0.0.1:8766/cb' }), 'invalid_grant'],
    ['a missing redirect URI', () => ({ redirect_uri: undefined }), 'invalid_grant'],
    ['another client', () => ({ client_id: 'web' }), 'invalid_grant'],
    ['an unknown code', () => ({ code: 'A'.repeat(32) }), 'invalid_grant'],
    ['a missing code', () => ({ code: undefined }), 'invalid_request'],
  ] satisfies [string, (a: { challenge: string }) => Record<string, string | undefined>, string][])(
    'refuses %s',
    async (_name, change, error) => {
      const world = createWorld()
      const authorized = await authorize(world)
      const response = await handleTokenRequest(
        codeParams(authorized, change(authorized)),
        world.options(NOW),
      )
      expect(response.status).toBe(400)
      expect(response.headers).toEqual(NO_STORE)
      expect(response.body).toMatchObject({ error, error_description: expect.any(String) })
      expect(await world.tokens.listByOwner('alice')).toEqual([])
    },
  )

  it('refuses an expired code (lifetime ≤ 60 s)', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    expect(
      (await handleTokenRequest(codeParams(authorized), world.options(NOW + 60_000))).body,
    ).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the authorization code has expired',
    })
  })

  it('refuses a code issued to a registered client when redeemed without client_id', async () => {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'web', redirectUri: 'https://web.example/cb' })
    const response = await handleTokenRequest(codeParams(authorized), world.options(NOW))
    expect(response.body).toMatchObject({ error: 'invalid_grant' })
  })

  it('burns the code on a failed attempt: a later correct one is a reuse', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    await handleTokenRequest(codeParams(authorized, { code_verifier: undefined }), world.options(NOW))
    const response = await handleTokenRequest(codeParams(authorized), world.options(NOW))
    expect(response.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/already used/),
    })
  })

  it('does not burn the code on a malformed request', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    await handleTokenRequest(codeParams(authorized, { code_verifier: 'bad' }), world.options(NOW))
    const repeated = await handleTokenRequest(
      { ...codeParams(authorized), redirect_uri: ['a', 'b'] },
      world.options(NOW),
    )
    expect(repeated.body).toMatchObject({ error: 'invalid_request' })
    expect((await handleTokenRequest(codeParams(authorized), world.options(NOW))).status).toBe(200)
  })
})

describe('token endpoint: a reused authorization code (RFC 6749 §4.1.2)', () => {
  it('is invalid_grant and revokes the access token the code issued', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    const first = await handleTokenRequest(codeParams(authorized), world.options(NOW))
    const value = (first.body as { access_token: string }).access_token
    const second = await handleTokenRequest(codeParams(authorized), world.options(NOW + 1000))
    expect(second.status).toBe(400)
    expect(second.body).toMatchObject({ error: 'invalid_grant' })
    const record = await world.token(value)
    expect(record && tokenStatus(record, NOW + 1000)).toBe('revoked')
    // A third use still answers invalid_grant and keeps the first revocation.
    const third = await handleTokenRequest(codeParams(authorized), world.options(NOW + 2000))
    expect(third.body).toMatchObject({ error: 'invalid_grant' })
    expect((await world.token(value))?.revokedAt).toBe(NOW + 1000)
  })

  it('is detected after the code expired, and also revokes the refresh-token family', async () => {
    const world = createWorld()
    const authorized = await authorize(world, { clientId: 'cli' })
    const options = (now: number) => world.options(now, { authorization: basic('cli', CLI_SECRET) })
    const first = await handleTokenRequest(codeParams(authorized), options(NOW))
    const { access_token, refresh_token } = first.body as { access_token: string; refresh_token: string }
    // The refresh token rotates once, issuing a second access token in the family.
    const refreshed = await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token },
      options(NOW + 1000),
    )
    const second = (refreshed.body as { access_token: string }).access_token
    const reuse = await handleTokenRequest(codeParams(authorized), options(NOW + 10 * 60_000))
    expect(reuse.body).toMatchObject({ error: 'invalid_grant' })
    for (const value of [access_token, second]) {
      expect((await world.token(value))?.revokedAt).toBe(NOW + 10 * 60_000)
    }
    const newRefresh = (refreshed.body as { refresh_token: string }).refresh_token
    const afterwards = await handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token: newRefresh },
      options(NOW + 10 * 60_000 + 1),
    )
    expect(afterwards.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the refresh token was revoked',
    })
  })

  it('issues at most one token when redeemed twice concurrently, and none stays active', async () => {
    const world = createWorld()
    const authorized = await authorize(world)
    const responses = await Promise.all([
      handleTokenRequest(codeParams(authorized), world.options(NOW)),
      handleTokenRequest(codeParams(authorized), world.options(NOW)),
    ])
    expect(responses.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1)
    expect(responses.some((r) => r.status === 400)).toBe(true)
    const issued = await world.tokens.listByOwner('alice')
    expect(issued.length).toBeLessThanOrEqual(1)
    for (const record of issued) expect(tokenStatus(record, NOW)).toBe('revoked')
  })

  it('revokes a token issued while the reuse was being handled', async () => {
    // The reuse lands between consumption and recording: it finds nothing to revoke, so the
    // redemption that loses the race revokes its own token.
    const world = createWorld()
    const authorized = await authorize(world)
    const state = world.state
    let reused = false
    const racing = wrapStore(state, {
      replaceAuthorizationCode: async (next) => {
        if (next.issuedTokenIds.length > 0 && !reused) {
          reused = true
          await handleTokenRequest(codeParams(authorized), world.options(NOW))
        }
        return state.replaceAuthorizationCode(next)
      },
    })
    const response = await handleTokenRequest(codeParams(authorized), {
      ...world.options(NOW),
      state: racing,
    })
    expect(response.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/used again/),
    })
    const [record] = await world.tokens.listByOwner('alice')
    expect(record && tokenStatus(record, NOW)).toBe('revoked')
  })
})
