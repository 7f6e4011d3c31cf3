/**
 * What a verified JWT's claims become (scopes, client, audience, DPoP binding, id, dates), the
 * store's read-only surface, its cache of verified tokens and the HMAC mode, with tokens signed by
 * a shared secret so that no JWKS is involved.
 */
import { SignJWT } from 'jose'
import { describe, expect, test } from 'vitest'
import { TokenStoreError } from '../../src/errors.js'
import { JwtTokenStore, type JwtTokenStoreOptions } from '../../src/jwt/index.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'

const NOW = Date.parse('2026-11-26T12:00:00Z')
const SECONDS = Math.floor(NOW / 1000)
const ISSUER = 'https://idp.example/'
const RESOURCE = 'https://data.example.org/api'
const SECRET = new TextEncoder().encode('a shared secret of at least 32 bytes!')
const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'
const BASE = { iss: ISSUER, sub: 'alice', aud: RESOURCE, exp: SECONDS + 600, iat: SECONDS - 10 }

function store(extra: Partial<Record<keyof JwtTokenStoreOptions, unknown>> = {}) {
  let clock = NOW
  const tokens = new JwtTokenStore({
    issuer: ISSUER,
    algorithms: ['HS256'],
    secret: SECRET,
    now: () => clock,
    ...extra,
  } as JwtTokenStoreOptions)
  return { tokens, advance: (ms: number) => (clock += ms) }
}

const sign = (claims: Record<string, unknown>, alg = 'HS256') =>
  new SignJWT({ ...BASE, ...claims }).setProtectedHeader({ alg }).sign(SECRET)

describe('claims become the record', () => {
  test.each([
    [
      'scope, other names ignored',
      { scope: 'openid profile data.metadata wokflow.read email' },
      ['public', 'data.metadata', 'wokflow.read'],
    ],
    ['scp as an array (Okta)', { scp: ['data.edit', 'offline_access'] }, ['public', 'data.edit']],
    [
      'scp as a string (Entra)',
      { scp: 'organization.read data.overview' },
      ['public', 'data.overview', 'organization.read'],
    ],
    [
      'scope and scp together',
      { scope: 'data.data', scp: ['workflow.write'] },
      ['public', 'data.data', 'workflow.write'],
    ],
    ['none of the nine: public only', { scope: 'openid profile' }, ['public']],
    ['no scope claim: public only', {}, ['public']],
    ['a wrongly cased name counts for nothing', { scope: 'DATA.DATA workflow.read' }, ['public']],
    ['scp of other types is ignored', { scp: [1, null, 'data.data'] }, ['public', 'data.data']],
    ['a scope that is not a string is ignored', { scope: 7 }, ['public']],
  ])('%s', async (_name, claims, scopes) => {
    expect((await store().tokens.findByValue(await sign(claims)))?.scopes).toEqual(scopes)
  })

  test('claimsToScopes adds custom claims (Auth0 permissions, Keycloak realm roles)', async () => {
    const { tokens } = store({
      claimsToScopes: (claims: Record<string, unknown>) => [
        ...((claims.permissions as string[] | undefined) ?? []),
        ...(((claims.realm_access as { roles?: string[] } | undefined)?.roles ?? []) as string[]),
      ],
    })
    const record = await tokens.findByValue(
      await sign({
        scope: 'data.overview',
        permissions: ['data.data', 'read:x'],
        realm_access: { roles: ['organization.write'] },
      }),
    )
    expect(record?.scopes).toEqual(['public', 'data.overview', 'data.data', 'organization.write'])
  })

  test.each([
    [
      'throws',
      () => {
        throw new Error('boom')
      },
      'claimsToScopes threw',
    ],
    ['answers a string', () => 'data.data', 'claimsToScopes must answer an array of scope names'],
    ['answers numbers', () => [1], 'claimsToScopes must answer an array of scope names'],
  ])('a hook that %s: the lookup rejects with a TokenStoreError (503)', async (_name, hook, message) => {
    const { tokens } = store({ claimsToScopes: hook })
    const lookup = tokens.findByValue(await sign({}))
    await expect(lookup).rejects.toThrow(TokenStoreError)
    await expect(lookup).rejects.toThrow(message)
  })

  test('the record: id from jti, the hash, dates, client, audience and DPoP binding', async () => {
    const token = await sign({ jti: 'at-42', client_id: 'reports-cli', azp: 'other', cnf: { jkt: JKT } })
    const record = await store().tokens.findByValue(token)
    expect(record).toEqual({
      id: 'at-42',
      kind: 'oauth',
      userId: 'alice',
      name: 'JWT access token',
      scopes: ['public'],
      hash: hashTokenValue(token),
      hint: `dao_…${hashTokenValue(token).slice(-4)}`,
      createdAt: (SECONDS - 10) * 1000,
      expiresAt: (SECONDS + 605) * 1000,
      clientId: 'reports-cli',
      audience: [RESOURCE],
      dpopJkt: JKT,
    })
    expect(Object.isFrozen(record)).toBe(true)
  })

  test.each([
    ['a jti that is no token id', { jti: 'has spaces' }, { id: 'jwt_' }],
    ['azp when there is no client_id', { azp: 'spa' }, { clientId: 'spa' }],
    ['a client id with spaces is dropped', { client_id: 'a b' }, { clientId: undefined }],
    ['an iat in the future: now', { iat: SECONDS + 100 }, { createdAt: NOW }],
    ['no iat: now', { iat: undefined }, { createdAt: NOW }],
    [
      'several audiences, one repeated',
      { aud: [RESOURCE, 'https://b.example/', RESOURCE] },
      { audience: [RESOURCE, 'https://b.example/'] },
    ],
  ])('%s', async (_name, claims, expected) => {
    const record = await store().tokens.findByValue(await sign(claims))
    const { id, ...rest } = expected as { id?: string }
    if (id !== undefined) expect(record?.id.startsWith(id)).toBe(true)
    for (const [key, value] of Object.entries(rest)) expect(record?.[key as 'clientId']).toEqual(value)
  })

  test.each([
    ['no aud', { aud: undefined }],
    ['an empty aud', { aud: [] }],
    ['17 audiences', { aud: Array.from({ length: 17 }, (_, i) => `https://r${i}.example/`) }],
    ['a cnf that is not an object', { cnf: 'jkt' }],
    ['an empty sub', { sub: '' }],
    ['an iat that is not a number', { iat: 'yesterday' }],
  ])('refused (undefined): %s', async (_name, claims) => {
    expect(await store().tokens.findByValue(await sign(claims))).toBeUndefined()
  })

  test('with the audience option, aud is checked by the store and the record carries none', async () => {
    const { tokens } = store({ audience: ['api://reports', 'reports'] })
    const record = await tokens.findByValue(await sign({ aud: 'reports' }))
    expect(record?.userId).toBe('alice')
    expect(record?.audience).toBeUndefined()
    expect(await tokens.findByValue(await sign({ aud: RESOURCE }))).toBeUndefined()
  })
})

describe('audienceClaim client_id (Cognito: no aud)', () => {
  test.each([
    ['an accepted client id, no aud', { aud: undefined, client_id: 'app-1' }, 'alice'],
    ['another client id', { aud: undefined, client_id: 'app-2' }, undefined],
    ['no client id', { aud: undefined }, undefined],
    ['a client id that is not a string', { aud: undefined, client_id: 7 }, undefined],
  ])('%s', async (_name, claims, userId) => {
    const { tokens } = store({ audienceClaim: 'client_id', audience: ['app-1'] })
    expect((await tokens.findByValue(await sign(claims)))?.userId).toBe(userId)
  })
})

describe('the store', () => {
  test('writes and listings reject; touch does nothing; findByHash answers only what it verified', async () => {
    const { tokens, advance } = store()
    await expect(tokens.findById('x')).rejects.toThrow(TokenStoreError)
    await expect(tokens.save({} as never)).rejects.toThrow('read-only')
    await expect(tokens.update({} as never)).rejects.toThrow('read-only')
    await expect(tokens.listByOwner('alice')).rejects.toThrow('read-only')
    await expect(tokens.touch('x', NOW)).resolves.toBeUndefined()
    const token = await sign({})
    expect(() => tokens.findByHash(hashTokenValue(token))).toThrow('a JWT store looks tokens up by value')
    const record = await tokens.findByValue(token)
    expect(tokens.findByHash(hashTokenValue(token))).toBe(record)
    advance(60_000)
    expect(() => tokens.findByHash(hashTokenValue(token))).toThrow(TokenStoreError)
  })

  test('a verified token is reused until cacheTtlMs, never past its exp', async () => {
    const { tokens, advance } = store({ cacheTtlMs: 60_000 })
    const token = await sign({ exp: SECONDS + 30 })
    const record = await tokens.findByValue(token)
    expect(tokens.findByValue(token)).toBe(record) // synchronously, from the cache
    advance(30_000)
    const again = tokens.findByValue(token)
    expect(again).toBeInstanceOf(Promise)
    expect(await again).not.toBe(record) // verified again, within the tolerance
    advance(6_000)
    expect(await tokens.findByValue(token)).toBeUndefined()
  })

  test('cacheTtlMs 0 verifies every time; maxEntries bounds the cache', async () => {
    const uncached = store({ cacheTtlMs: 0 }).tokens
    const token = await sign({})
    expect(uncached.findByValue(token)).toBeInstanceOf(Promise)
    expect(uncached.findByValue(token)).toBeInstanceOf(Promise)
    const { tokens } = store({ maxEntries: 1 })
    const first = await sign({ jti: 'one' })
    await tokens.findByValue(first)
    await tokens.findByValue(await sign({ jti: 'two' }))
    expect(tokens.findByValue(first)).toBeInstanceOf(Promise)
  })

  test.each([
    ['a JWS', 'aGVhZGVy.cGF5bG9hZA.c2ln', true],
    ['an empty signature', 'aGVhZGVy.cGF5bG9hZA.', false],
    ['an empty header', '.cGF5bG9hZA.c2ln', false],
    ['two segments', 'aGVhZGVy.cGF5bG9hZA', false],
    ['four segments', 'a.b.c.d', false],
    ['base64 padding', 'aGVhZGVy.cGF5bG9hZA==.c2ln', false],
    ['a slash', 'aGVh/ZGVy.cGF5bG9hZA.c2ln', false],
    ['a non-ASCII letter', 'aGVhé.cGF5bG9hZA.c2ln', false],
    ['past maxTokenLength', `a.b.${'c'.repeat(8192)}`, false],
    ['a dap_ token', 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5', false],
  ])('acceptsTokenValue: %s → %s', (_name, value, accepted) => {
    expect(store().tokens.acceptsTokenValue(value)).toBe(accepted)
    if (!accepted) expect(store().tokens.findByValue(value)).toBeUndefined()
  })

  test('an HMAC store refuses a token signed with another algorithm, and a wrong secret', async () => {
    const { tokens } = store()
    const other = await new SignJWT(BASE).setProtectedHeader({ alg: 'HS512' }).sign(SECRET)
    expect(await tokens.findByValue(other)).toBeUndefined()
    const forged = await new SignJWT(BASE).setProtectedHeader({ alg: 'HS256' }).sign(new Uint8Array(32))
    expect(await tokens.findByValue(forged)).toBeUndefined()
  })

  test('a string secret is its UTF-8 bytes', async () => {
    const { tokens } = store({ secret: new TextDecoder().decode(SECRET) })
    expect((await tokens.findByValue(await sign({})))?.userId).toBe('alice')
  })
})
