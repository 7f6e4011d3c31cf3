/**
 * The JWT store under the policy, against a stand-in identity provider on loopback: what verifies
 * (each algorithm, key rotation), every refusal (401 `invalid_token`), the JWKS's cooldown, outage
 * and failures (503, reported), and what claims become.
 */
import { type JWTPayload, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigError, TokenStoreError } from '../../src/errors.js'
import { JwtTokenStore, type JwtTokenStoreOptions } from '../../src/jwt/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { type StandInIdp, startStandInIdp } from './stand-in-idp.js'

const NOW = Date.parse('2026-11-26T12:00:00Z')
const SECONDS = Math.floor(NOW / 1000)
const RESOURCE = 'https://data.example.org/api'
const CLAIMS = { sub: 'alice', aud: RESOURCE, exp: SECONDS + 3600, iat: SECONDS - 10, scope: 'data.data' }

let idp: StandInIdp
beforeAll(async () => {
  idp = await startStandInIdp()
})
afterAll(async () => {
  await idp.close()
})

function setup(extra: Partial<Record<keyof JwtTokenStoreOptions, unknown>> = {}) {
  let clock = NOW
  const tokens = new JwtTokenStore({
    issuer: idp.issuer,
    jwksUri: idp.jwksUri,
    algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    now: () => clock,
    ...extra,
  } as JwtTokenStoreOptions)
  const errors: unknown[] = []
  const policy = createAccessPolicy({
    tokens,
    resource: RESOURCE,
    now: () => clock,
    storeTimeoutMs: 10_000,
    onError: (error) => errors.push(error),
  })
  const authenticate = (value: string) =>
    policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'https',
      clientAddress: '203.0.113.9',
    })
  const check = async (value: string) => {
    const result = await authenticate(value)
    return result.ok ? 'allowed' : `${result.decision.status} ${result.decision.code}`
  }
  return { tokens, errors, authenticate, check, advance: (ms: number) => (clock += ms) }
}

const sign = (claims: Record<string, unknown> = {}, options = {}) =>
  idp.sign({ ...CLAIMS, ...claims } as JWTPayload, options)
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('JwtTokenStore options', () => {
  const base = { issuer: 'https://idp.example/', algorithms: ['RS256'] } as JwtTokenStoreOptions
  test.each([
    [{ algorithms: [] }, 'options.algorithms'],
    [{ algorithms: ['none'] }, 'options.algorithms[0]'],
    [{ algorithms: ['HS256'] }, 'options.algorithms'],
    [{ algorithms: ['HS256'], secret: 'x'.repeat(31) }, 'options.secret'],
    [{ algorithms: ['RS256', 'HS256'], secret: 'x'.repeat(32) }, 'options.algorithms'],
    [
      { algorithms: ['HS256'], secret: 'x'.repeat(32), jwksUri: 'https://idp.example/jwks' },
      'options.secret',
    ],
    [{ issuer: '' }, 'options.issuer'],
    [{ issuer: 'http://idp.example/' }, 'options.issuer'],
    [{ jwksUri: 'http://idp.example/jwks' }, 'options.jwksUri'],
    [{ audience: [] }, 'options.audience'],
    [{ audienceClaim: 'client_id' }, 'options.audience'],
    [{ audienceClaim: 'azp', audience: 'x' }, 'options.audienceClaim'],
    [{ clockToleranceSeconds: 301 }, 'options.clockToleranceSeconds'],
    [{ cooldownMs: 0 }, 'options.cooldownMs'],
    [{ refreshIntervalMs: 7_200_000 }, 'options.keysMaxAgeMs'],
    [{ cacheTtlMs: 300_001 }, 'options.cacheTtlMs'],
    [{ maxTokenLength: 100 }, 'options.maxTokenLength'],
    [{ claimsToScopes: 'permissions' }, 'options.claimsToScopes'],
    [{ extra: true }, 'options'],
  ])('%j is refused at %s', (bad, path) => {
    let error: unknown
    try {
      new JwtTokenStore({ ...base, ...bad } as JwtTokenStoreOptions)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).message.startsWith(`${path}:`)).toBe(true)
  })

  test('an http issuer is fine with a jwksUri, and an HMAC store with a secret', () => {
    expect(
      () => new JwtTokenStore({ ...base, issuer: 'http://idp.example/', jwksUri: idp.jwksUri }),
    ).not.toThrow()
    expect(
      () => new JwtTokenStore({ ...base, algorithms: ['HS256'], secret: new Uint8Array(32) }),
    ).not.toThrow()
  })
})

describe('tokens the identity provider signed', () => {
  test.each(['RS256', 'PS256', 'ES256', 'EdDSA'] as const)(
    '%s verifies, and its claims become the principal',
    async (alg) => {
      const { authenticate, errors } = setup()
      const result = await authenticate(await sign({ azp: 'reports-cli', jti: `id-${alg}` }, { alg }))
      expect(result.ok && result.principal).toMatchObject({
        kind: 'token',
        userId: 'alice',
        tokenId: `id-${alg}`,
        tokenKind: 'oauth',
        clientId: 'reports-cli',
      })
      expect(result.ok && String(result.principal.scopes)).toBe('public data.data')
      expect(errors).toEqual([])
    },
  )

  test('a rotated key: the new kid is fetched once the cooldown has passed, the old one is gone', async () => {
    const { check, advance } = setup()
    const before = await sign({}, { alg: 'ES256' })
    expect(await check(before)).toBe('allowed')
    const oldKid = idp.publicJwk('ES256').kid!
    await idp.rotate('ES256')
    const after = await sign({ jti: 'after' }, { alg: 'ES256' })
    advance(30_000)
    expect(await check(after)).toBe('allowed')
    // The rotated-out kid is gone from the JWKS: a new token naming it is refused.
    expect(await check(await sign({ jti: 'x' }, { alg: 'ES256', kid: oldKid }))).toBe('401 invalid_token')
  })
})

describe('every token that fails a check is 401 invalid_token, never an allow', () => {
  const rsaSecret = () => new TextEncoder().encode(JSON.stringify(idp.publicJwk('RS256')))
  const cases: [string, () => Promise<string>, Partial<Record<keyof JwtTokenStoreOptions, unknown>>?][] = [
    ['alg none', async () => `${b64({ alg: 'none' })}.${b64(CLAIMS)}.`],
    ['alg none with a signature', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(CLAIMS)}.AAAA`],
    [
      'HS256 signed with the RSA public key as secret',
      async () =>
        new SignJWT({ ...CLAIMS, iss: idp.issuer })
          .setProtectedHeader({ alg: 'HS256', kid: idp.publicJwk('RS256').kid! })
          .sign(rsaSecret()),
    ],
    ['an algorithm the store does not allow', () => sign({}, { alg: 'PS256' }), { algorithms: ['RS256'] }],
    ['another issuer', () => sign({ iss: 'https://evil.example/' })],
    ['the issuer with a trailing slash', () => sign({ iss: `${idp.issuer}/` })],
    ['another audience (the policy resource)', () => sign({ aud: 'https://other.example/api' })],
    [
      'another audience (the audience option)',
      () => sign({ aud: 'api://other' }),
      { audience: 'api://reports' },
    ],
    ['no audience', () => sign({ aud: undefined })],
    ['an audience that is not a resource identifier, unchecked', () => sign({ aud: 'reports' })],
    ['expired', () => sign({ exp: SECONDS - 6 })],
    ['not yet valid (nbf)', () => sign({ nbf: SECONDS + 60 })],
    ['no exp', () => sign({ exp: undefined })],
    ['no sub', () => sign({ sub: undefined })],
    ['a sub longer than 256', () => sign({ sub: 'a'.repeat(257) })],
    ['typ JWT when at+jwt is required', () => sign({}, { typ: 'JWT' }), { requireTyp: true }],
    ['no typ when at+jwt is required', () => sign(), { requireTyp: true }],
    ['an unknown kid within the cooldown', () => sign({}, { kid: 'never-seen' })],
    ['bound by a certificate (cnf x5t#S256)', () => sign({ cnf: { 'x5t#S256': 'abc' } })],
    ['a malformed cnf.jkt', () => sign({ cnf: { jkt: 'short' } })],
    [
      'a tampered payload',
      async () => {
        const [header, , signature] = (await sign()).split('.')
        return `${header}.${b64({ ...CLAIMS, iss: idp.issuer, scope: 'data.edit' })}.${signature}`
      },
    ],
    ['oversized (past maxTokenLength)', () => sign({ pad: 'x'.repeat(9000) })],
    ['not a JWS', async () => 'abc.def'],
    ['a dap_ token', async () => generateTokenValue('api')],
  ]
  test.each(cases)('%s', async (_name, make, extra) => {
    const { check, errors } = setup(extra)
    await check(await sign()) // keys fetched
    expect(await check(await make())).toBe('401 invalid_token')
    expect(errors).toEqual([])
  })

  test('a token for another resource is told so', async () => {
    const { authenticate } = setup()
    const result = await authenticate(await sign({ aud: 'https://other.example/api' }))
    expect(!result.ok && result.decision.description).toBe('the token is for another resource')
  })

  test('a token just past exp is good within the clock tolerance, refused past it', async () => {
    const { check } = setup({ cacheTtlMs: 0 })
    expect(await check(await sign({ exp: SECONDS - 4 }))).toBe('allowed')
    expect(await check(await sign({ exp: SECONDS - 6 }))).toBe('401 invalid_token')
  })

  test('an oversized token costs no fetch', async () => {
    const { check } = setup()
    const fetches = idp.jwksFetches()
    expect(await check(await sign({ pad: 'x'.repeat(9000) }))).toBe('401 invalid_token')
    expect(idp.jwksFetches()).toBe(fetches)
  })
})

describe('the JWKS', () => {
  test('100 requests with an unknown kid past the cooldown cost one fetch, and are refused', async () => {
    const { check, advance } = setup()
    expect(await check(await sign())).toBe('allowed')
    advance(30_000)
    const fetches = idp.jwksFetches()
    const unknown = await Promise.all(
      Array.from({ length: 100 }, (_, i) => sign({ jti: `u${i}` }, { kid: `unknown-${i}` })),
    )
    expect(new Set(await Promise.all(unknown.map(check)))).toEqual(new Set(['401 invalid_token']))
    expect(idp.jwksFetches()).toBe(fetches + 1)
    expect(await check(await sign({}, { kid: 'unknown-again' }))).toBe('401 invalid_token')
    expect(idp.jwksFetches()).toBe(fetches + 1)
  })

  test('keys are kept through an outage until keysMaxAgeMs, then every token is 503', async () => {
    const { check, advance, errors } = setup({ cacheTtlMs: 0 })
    const token = await sign({ exp: SECONDS + 86_400 })
    expect(await check(token)).toBe('allowed')
    idp.setMode('error')
    try {
      advance(600_000)
      expect(await check(token)).toBe('allowed') // refresh fails in the background
      advance(2_000_000)
      expect(await check(token)).toBe('allowed')
      expect(await check(await sign({ exp: SECONDS + 86_400 }, { kid: 'rotated-in' }))).toBe(
        '503 service_unavailable',
      )
      advance(1_000_000)
      expect(await check(token)).toBe('503 service_unavailable')
      expect(errors.length).toBeGreaterThan(0)
      expect(errors.every((error) => error instanceof TokenStoreError)).toBe(true)
      idp.setMode('ok')
      advance(30_000)
      expect(await check(token)).toBe('allowed')
    } finally {
      idp.setMode('ok')
    }
  })

  test.each(['error', 'garbage', 'not-a-jwks', 'no-signing-key'] as const)(
    'a JWKS that answers %s with no key known: 503, reported, one fetch per cooldown',
    async (mode) => {
      idp.setMode(mode)
      try {
        const { check, errors, advance } = setup()
        const fetches = idp.jwksFetches()
        expect(await check(await sign())).toBe('503 service_unavailable')
        expect(await check(await sign({ jti: 'b' }))).toBe('503 service_unavailable')
        expect(idp.jwksFetches()).toBe(fetches + 1)
        expect(errors).toHaveLength(2)
        expect(errors[0]).toBeInstanceOf(TokenStoreError)
        idp.setMode('ok')
        advance(30_000)
        expect(await check(await sign())).toBe('allowed')
      } finally {
        idp.setMode('ok')
      }
    },
  )

  test('a JWKS that hangs past timeoutMs: 503', async () => {
    idp.setMode('hang')
    try {
      const { check, errors } = setup({ timeoutMs: 200 })
      expect(await check(await sign())).toBe('503 service_unavailable')
      expect((errors[0] as Error).message).toContain('the JWKS did not answer')
    } finally {
      idp.setMode('ok')
    }
  })

  test('without jwksUri, the JWKS is found through OpenID Connect discovery', async () => {
    const { check } = setup({ jwksUri: undefined, issuer: idp.issuer })
    const discoveries = idp.discoveryFetches()
    expect(await check(await sign())).toBe('allowed')
    expect(idp.discoveryFetches()).toBe(discoveries + 1)
  })

  test('discovery metadata for another issuer is refused: 503', async () => {
    let clock = NOW
    const tokens = new JwtTokenStore({
      issuer: `${idp.issuer}/tenant`,
      algorithms: ['RS256'],
      now: () => clock,
      fetch: (async (url: string) =>
        String(url).endsWith('/tenant/.well-known/openid-configuration')
          ? Response.json({ issuer: idp.issuer, jwks_uri: idp.jwksUri })
          : new Response('{}', { status: 404 })) as typeof fetch,
    })
    const token = await sign({ iss: `${idp.issuer}/tenant` })
    await expect(tokens.findByValue(token)).rejects.toThrow('the issuer metadata does not name this issuer')
    clock += 30_000
  })

  test('RFC 8414 metadata is the second place discovery looks', async () => {
    const asked: string[] = []
    const tokens = new JwtTokenStore({
      issuer: `${idp.issuer}/tenant`,
      algorithms: ['RS256'],
      now: () => NOW,
      fetch: (async (url: string) => {
        asked.push(String(url))
        if (String(url).includes('oauth-authorization-server')) {
          return Response.json({ issuer: `${idp.issuer}/tenant`, jwks_uri: idp.jwksUri })
        }
        return String(url) === idp.jwksUri ? fetch(url) : new Response('{}', { status: 404 })
      }) as typeof fetch,
    })
    expect(await tokens.findByValue(await sign({ iss: `${idp.issuer}/tenant` }))).toMatchObject({
      userId: 'alice',
    })
    expect(asked).toEqual([
      `${idp.issuer}/tenant/.well-known/openid-configuration`,
      `${idp.issuer}/.well-known/oauth-authorization-server/tenant`,
      idp.jwksUri,
    ])
  })
})
