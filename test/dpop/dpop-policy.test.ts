/**
 * The DPoP half of authentication, at the policy: the `DPoP` scheme's grammar, the URL a proof must
 * name, the policy's `dpop` option, server nonces and the DPoP challenges.
 */
import { beforeAll, describe, expect, test } from 'vitest'
import { authenticateRequest } from '../../src/authentication/authenticate.js'
import { parseDpopHeader, requestUrlOf } from '../../src/authentication/dpop-authentication.js'
import { renderDenial, wwwAuthenticate } from '../../src/authentication/http-denial.js'
import { deny } from '../../src/decisions/decision.js'
import { createDpopNonces } from '../../src/dpop/index.js'
import { ConfigError } from '../../src/errors.js'
import { createAccessPolicy, type RequestContext } from '../../src/policy.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { createOAuthToken, revokeToken, type TokenRecord } from '../../src/tokens/token-record.js'
import { type DpopKey, dpopKey, dpopProof } from './proofs.js'

const PATH = '/api/v1/datasets/acme/open'

describe('parseDpopHeader', () => {
  test.each([
    ['DPoP abc', { kind: 'token', token: 'abc' }],
    ['dpop   a.b-c_d~e+f/g==', { kind: 'token', token: 'a.b-c_d~e+f/g==' }],
    ['DPoP', { kind: 'malformed' }],
    ['DPoP ', { kind: 'malformed' }],
    ['DPoP\tabc', { kind: 'malformed' }],
    ['DPoP a b', { kind: 'malformed' }],
    ['DPoPx abc', { kind: 'none' }],
    ['DPo', { kind: 'none' }],
    ['Bearer abc', { kind: 'none' }],
    [42, { kind: 'none' }],
  ])('%j is %j', (value, expected) => {
    expect(parseDpopHeader(value as string)).toEqual(expected)
  })
})

describe('requestUrlOf: the URL a proof must name', () => {
  const origin = 'https://data.example.org'
  test.each([
    [
      'the public origin, whatever the Host',
      { protocol: 'http', host: 'evil.example', target: PATH },
      origin,
      `${origin}${PATH}`,
    ],
    [
      'the scheme and Host without one',
      { protocol: 'https', host: 'api.example:8443', target: `${PATH}?x=1` },
      undefined,
      `https://api.example:8443${PATH}?x=1`,
    ],
    [
      'an absolute target, its host when no Host',
      { protocol: 'https', target: `http://h.example${PATH}?q` },
      undefined,
      `https://h.example${PATH}?q`,
    ],
    [
      'an absolute target under the public origin',
      { protocol: 'https', target: `http://h.example${PATH}` },
      origin,
      `${origin}${PATH}`,
    ],
    ['no target', { protocol: 'https', host: 'h.example' }, origin, undefined],
    ['an empty target', { protocol: 'https', host: 'h.example', target: '' }, origin, undefined],
    ['a target that is no URL', { protocol: 'https', target: 'http://[x' }, undefined, undefined],
    ['no Host and no origin', { protocol: 'https', target: PATH }, undefined, undefined],
    ['an empty Host', { protocol: 'https', host: '', target: PATH }, undefined, undefined],
    ['no scheme', { host: 'h.example', target: PATH }, undefined, undefined],
  ] as const)('%s', (_name, facts, publicOrigin, expected) => {
    expect(requestUrlOf(facts, publicOrigin)).toBe(expected)
  })
})

describe('the DPoP challenge', () => {
  test('names the default algorithms unless told others, and a nonce denial carries DPoP-Nonce', () => {
    const denial = { ...deny('invalid_dpop_proof'), description: 'x' }
    expect(wwwAuthenticate(denial, 'r')).toBe(
      'DPoP realm="r", error="invalid_dpop_proof", error_description="x", algs="ES256 EdDSA Ed25519 RS256 PS256"',
    )
    const nonce = { ...deny('use_dpop_nonce'), dpopNonce: 'n0nce' }
    expect(renderDenial(nonce, 'r', undefined, ['ES256']).headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'www-authenticate': 'DPoP realm="r", error="use_dpop_nonce", algs="ES256"',
      'dpop-nonce': 'n0nce',
    })
  })
})

describe('createDpopNonces', () => {
  const secret = 'x'.repeat(32)
  test('a nonce is accepted in its window and the next, not after, and never when absent', () => {
    const nonces = createDpopNonces({ secret, windowSeconds: 60 })
    const t = 1_800_000_000_000
    const nonce = nonces.current(t)
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(nonces.accepts(nonce, t)).toBe(true)
    expect(nonces.accepts(nonce, t + 60_000)).toBe(true)
    expect(nonces.accepts(nonce, t + 120_000)).toBe(false)
    expect(nonces.accepts(undefined, t)).toBe(false)
    expect(nonces.accepts('other', t)).toBe(false)
    // Many windows in turn: the memo stays small and answers alike.
    for (let i = 0; i < 10; i++)
      expect(nonces.accepts(nonces.current(t + i * 60_000), t + i * 60_000)).toBe(true)
  })

  test('instances sharing a secret agree; another secret does not', () => {
    const t = Date.now()
    const one = createDpopNonces({ secret: new TextEncoder().encode(secret) })
    expect(createDpopNonces({ secret }).accepts(one.current(t), t)).toBe(true)
    expect(createDpopNonces({ secret: 'y'.repeat(32) }).accepts(one.current(t), t)).toBe(false)
  })

  test.each([
    [{ secret: 'short' }, /secret: must be a string or bytes of at least 32 bytes/],
    [{ secret: 42 }, /secret/],
    [{ secret, windowSeconds: 5 }, /windowSeconds: must be an integer from 10 to 3600, got 5/],
    [{ secret, windowSeconds: 1.5 }, /windowSeconds/],
  ])('%j is refused', (options, message) => {
    expect(() => createDpopNonces(options as never)).toThrow(message)
  })
})

describe('the policy’s dpop option', () => {
  test.each([
    [{ algorithms: ['HS256'] }, /options\.dpop\.algorithms\[0\]/],
    [{ algorithms: [] }, /options\.dpop\.algorithms/],
    [{ maxAgeSeconds: 0 }, /options\.dpop\.maxAgeSeconds/],
    [{ leewaySeconds: 301 }, /options\.dpop\.leewaySeconds/],
    [{ replayCache: {} }, /options\.dpop\.replayCache: must be a DpopReplayCache/],
    [
      { publicUrl: 'https://data.example.org/api?x' },
      /options\.dpop\.publicUrl: must be an absolute http\(s\) URL/,
    ],
    [{ publicUrl: 'ftp://data.example.org' }, /options\.dpop\.publicUrl/],
    [{ publicUrl: 'https://u:p@data.example.org' }, /options\.dpop\.publicUrl/],
    [{ publicUrl: 'not a url' }, /options\.dpop\.publicUrl/],
    [{ nonces: { secret: 'short' } }, /options\.dpop\.nonces\.secret: must be/],
    [{ other: true }, /options\.dpop/],
  ])('%j is a ConfigError naming it', (dpop, message) => {
    const build = () => createAccessPolicy({ tokens: new MemoryTokenStore(), dpop: dpop as never })
    expect(build).toThrow(ConfigError)
    expect(build).toThrow(message)
  })
})

describe('authentication of DPoP requests', () => {
  let key: DpopKey
  let tokens: MemoryTokenStore
  let bound: string
  let revoked: string
  beforeAll(async () => {
    key = await dpopKey()
    tokens = new MemoryTokenStore()
    const now = Date.now()
    const one = createOAuthToken({ userId: 'alice', scopes: 'data.data', dpopJkt: key.jkt, now })
    const two = createOAuthToken({ userId: 'alice', scopes: 'data.data', dpopJkt: key.jkt, now })
    await tokens.save(one.record)
    await tokens.save(revokeToken(two.record, now))
    bound = one.value
    revoked = two.value
  })

  const request = (authorization: string, extra: Partial<RequestContext> = {}): RequestContext => ({
    authorization: [authorization],
    method: 'GET',
    target: PATH,
    host: 'api.example:8443',
    protocol: 'https',
    clientAddress: '203.0.113.7',
    ...extra,
  })

  test('without a public URL the proof names the scheme and Host; dpop.publicUrl names one', async () => {
    const byHost = createAccessPolicy({ tokens })
    const hostProof = await dpopProof(key, {
      method: 'GET',
      url: `https://api.example:8443${PATH}`,
      token: bound,
    })
    expect((await byHost.authenticate(request(`DPoP ${bound}`, { dpop: [hostProof] }))).ok).toBe(true)
    const byOrigin = createAccessPolicy({
      tokens,
      dpop: { publicUrl: 'https://data.example.org/', algorithms: ['ES256'] },
    })
    const originProof = await dpopProof(key, {
      method: 'GET',
      url: `https://data.example.org${PATH}`,
      token: bound,
    })
    expect((await byOrigin.authenticate(request(`DPoP ${bound}`, { dpop: [originProof] }))).ok).toBe(true)
    const refused = await byOrigin.authenticate(request(`DPoP ${bound}`, { dpop: [hostProof] }))
    if (refused.ok) throw new Error('the proof for the Host was accepted')
    expect(refused.decision.code).toBe('invalid_dpop_proof')
    expect(byOrigin.render(refused.decision).headers['www-authenticate']).toContain('algs="ES256"')
  })

  test.each([
    [
      'an access_token parameter beside it',
      (t: string) => request(`DPoP ${t}`, { accessTokenParameter: true }),
      400,
      'invalid_request',
    ],
    ['a value that is no token', () => request('DPoP abc'), 401, 'invalid_token'],
    ['a revoked token', () => request(`DPoP ${revoked}`), 401, 'invalid_token'],
    [
      'a request without its method',
      (t: string) => request(`DPoP ${t}`, { dpop: ['x'], method: undefined }),
      401,
      'invalid_dpop_proof',
    ],
    [
      'a request without its URL',
      (t: string) => request(`DPoP ${t}`, { dpop: ['x'], target: undefined }),
      401,
      'invalid_dpop_proof',
    ],
    [
      'a proof that is no JWT',
      (t: string) => request(`DPoP ${t}`, { dpop: ['x'] }),
      401,
      'invalid_dpop_proof',
    ],
  ])('%s is %s %s', async (_name, make, status, code) => {
    const policy = createAccessPolicy({ tokens })
    const result = await policy.authenticate(make(bound))
    expect(result).toMatchObject({ ok: false, decision: { status, code } })
  })

  test('a store with a token format of its own (a JWT issuer’s) vouches for its syntax under DPoP too', async () => {
    const own = 'own.token-of-another-format'
    const { record } = createOAuthToken({
      userId: 'alice',
      scopes: 'data.data',
      dpopJkt: key.jkt,
      now: Date.now(),
    })
    const ownRecord: TokenRecord = { ...record, hash: hashTokenValue(own) }
    class OwnFormat extends MemoryTokenStore {
      acceptsTokenValue(value: string): boolean {
        return value.startsWith('own.')
      }
      findByValue(value: string): TokenRecord | undefined {
        return value === own ? ownRecord : undefined
      }
    }
    const policy = createAccessPolicy({ tokens: new OwnFormat() })
    const proof = await dpopProof(key, { method: 'GET', url: `https://api.example:8443${PATH}`, token: own })
    expect((await policy.authenticate(request(`DPoP ${own}`, { dpop: [proof] }))).ok).toBe(true)
    // A value the store does not vouch for is refused before any lookup.
    expect(await policy.authenticate(request('DPoP other.value', { dpop: [proof] }))).toMatchObject({
      ok: false,
      decision: { status: 401, code: 'invalid_token' },
    })
  })

  test('a description quotes the client’s claims in printable ASCII, at most 200 characters', async () => {
    const policy = createAccessPolicy({ tokens, dpop: { publicUrl: 'https://data.example.org' } })
    const url = `https://data.example.org/${'é'.repeat(300)}`
    const proof = await dpopProof(key, { method: 'GET', url, token: bound, claims: { htm: 'GÉT' } })
    const long = await dpopProof(key, { method: 'GET', url, token: bound })
    const refused = async (dpop: string) => {
      const result = await policy.authenticate(request(`DPoP ${bound}`, { dpop: [dpop] }))
      if (result.ok) throw new Error('accepted')
      return result.decision.description!
    }
    expect(await refused(proof)).toBe("the proof's htm is 'G?T', expected 'GET'")
    const description = await refused(long)
    expect(description).toHaveLength(200)
    expect(description).toMatch(
      /^the proof's htu is "https:\/\/data\.example\.org\/(%C3%A9)+|^the proof's htu is .*\.\.\.$/,
    )
    expect(description.endsWith('...')).toBe(true)
  })

  test('DPoP headers that cannot be read are a 503 told to onError', async () => {
    const errors: unknown[] = []
    const policy = createAccessPolicy({ tokens, onError: (error) => errors.push(error) })
    const hostile = new Proxy([] as string[], {
      get: (target, name) => {
        if (name === 'length') throw new Error('boom')
        return Reflect.get(target, name)
      },
    })
    const result = await policy.authenticate(request(`DPoP ${bound}`, { dpop: hostile as never }))
    expect(result).toMatchObject({ ok: false, decision: { status: 503 } })
    expect(errors).toHaveLength(1)
  })

  test('authenticateRequest without a DPoP check refuses the DPoP scheme', async () => {
    const result = await authenticateRequest(request(`DPoP ${bound}`), {
      tokens,
      now: Date.now,
      storeTimeoutMs: 100,
    })
    expect(result).toMatchObject({
      ok: false,
      decision: {
        code: 'invalid_token',
        scheme: 'DPoP',
        description: 'this resource does not check DPoP proofs',
      },
    })
  })

  test('createOAuthToken refuses a dpopJkt that is no thumbprint', () => {
    expect(() =>
      createOAuthToken({ userId: 'a', scopes: 'data.data', dpopJkt: 'abc', now: Date.now() }),
    ).toThrow(/dpopJkt: must be an RFC 7638 SHA-256 thumbprint \(43 base64url characters\), got "abc"/)
  })
})
