/**
 * The remote token store (RFC 7662) under the policy: what an issuer's answers become, the cache's
 * bounds (TTL, size, one call per token at a time) and failing closed — every failure is a 503
 * reported to onError, never an allow, and never cached.
 */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { ConfigError } from '../../src/errors.js'
import { IntrospectionTokenStore } from '../../src/introspection/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { generateTokenValue, tokenValueHint } from '../../src/tokens/token-format.js'

const NOW = Date.parse('2026-11-26T12:00:00Z')
const ENDPOINT = 'https://as.example/oauth/introspect'

type Call = { readonly url: string; readonly init: RequestInit }

/** A fake issuer: answers with `respond`, records every call. */
function issuer(respond: (call: Call) => Response | Promise<Response>) {
  const calls: Call[] = []
  const fetch = (async (url: string, init: RequestInit) => {
    const call = { url, init }
    calls.push(call)
    return respond(call)
  }) as unknown as typeof globalThis.fetch
  return { calls, fetch }
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

const ACTIVE = {
  active: true,
  scope: 'public data.data',
  sub: 'alice',
  client_id: 'cli',
  token_type: 'Bearer',
  exp: Math.floor(NOW / 1000) + 3600,
  iat: Math.floor(NOW / 1000) - 10,
  jti: 'tok_abc',
}

function setup(respond: (call: Call) => Response | Promise<Response>, extra: object = {}) {
  let clock = NOW
  const { calls, fetch } = issuer(respond)
  const tokens = new IntrospectionTokenStore({
    endpoint: ENDPOINT,
    clientId: 'rs',
    clientSecret: 'rs secret:1',
    fetch,
    now: () => clock,
    ...extra,
  })
  const errors: unknown[] = []
  const policy = createAccessPolicy({
    tokens,
    now: () => clock,
    onError: (error) => errors.push(error),
  })
  const check = async (value: string) => {
    const result = await policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'https',
      clientAddress: '203.0.113.9',
    })
    return result.ok ? 'allowed' : result.decision.status
  }
  return { calls, tokens, policy, errors, check, advance: (ms: number) => (clock += ms) }
}

describe('IntrospectionTokenStore options', () => {
  test.each([
    [{ endpoint: 'http://as.example/introspect' }, 'options.endpoint'],
    [{ endpoint: 'https://u:p@as.example/introspect' }, 'options.endpoint'],
    [{ endpoint: 'nope' }, 'options.endpoint'],
    // A bare '#' is a fragment too, though it parses to an empty one.
    [{ endpoint: 'https://as.example/introspect#' }, 'options.endpoint'],
    [{ endpoint: 'https://as.example/introspect#x' }, 'options.endpoint'],
    [{ endpoint: 'http://127.0.0.2/introspect' }, 'options.endpoint'],
    [{ clientId: '' }, 'options.clientId'],
    [{ clientSecret: '' }, 'options.clientSecret'],
    [{ cacheTtlMs: 60_001 }, 'options.cacheTtlMs'],
    [{ cacheTtlMs: -1 }, 'options.cacheTtlMs'],
    [{ maxEntries: 0 }, 'options.maxEntries'],
    [{ timeoutMs: 0 }, 'options.timeoutMs'],
    [{ inactiveTtlMs: 600_001 }, 'options.inactiveTtlMs'],
    [{ inactiveTtlMs: -1 }, 'options.inactiveTtlMs'],
    [{ maxInactiveEntries: 0 }, 'options.maxInactiveEntries'],
    [{ missesPerNetwork: 0 }, 'options.missesPerNetwork'],
    [{ missesPerNetwork: 1.5 }, 'options.missesPerNetwork'],
    [{ missesTotal: 0 }, 'options.missesTotal'],
    [{ missesPerNetwork: 50, missesTotal: 40 }, 'options.missesTotal: must be at least missesPerNetwork'],
    [{ missWindowMs: 999 }, 'options.missWindowMs'],
    [{ missWindowMs: 3_600_001 }, 'options.missWindowMs'],
    [{ maxNetworks: 0 }, 'options.maxNetworks'],
    [{ ipv6Prefix: 0 }, 'options.ipv6Prefix'],
    [{ ipv6Prefix: 129 }, 'options.ipv6Prefix'],
    [{ ipv6Prefix: 56.5 }, 'options.ipv6Prefix'],
    [{ ipv6Prefix: '64' }, 'options.ipv6Prefix'],
    [{ extra: 1 }, 'options: unknown key "extra"'],
  ])('%j is refused naming %s', (bad, name) => {
    const options = { endpoint: ENDPOINT, clientId: 'rs', clientSecret: 's', ...bad }
    expect(() => new IntrospectionTokenStore(options as never)).toThrow(ConfigError)
    expect(() => new IntrospectionTokenStore(options as never)).toThrow(name)
  })

  test('an endpoint is refused with the rule it breaks', () => {
    expect(
      () =>
        new IntrospectionTokenStore({ endpoint: 'https://as.example/i#', clientId: 'rs', clientSecret: 's' }),
    ).toThrow(
      'options.endpoint: must be an absolute https URL (http only on a loopback host) without user info or fragment',
    )
  })

  test.each([
    'http://127.0.0.1:1/i',
    'http://localhost:8080/i',
    'http://[::1]/i',
    'https://as.example/oauth/introspect?tenant=a',
    'https://as.example:8443/introspect',
  ])('accepts %s (https, or http on a loopback host)', (endpoint) => {
    expect(() => new IntrospectionTokenStore({ endpoint, clientId: 'rs', clientSecret: 's' })).not.toThrow()
  })
})

describe('answers', () => {
  test('an active bearer token authenticates as its user, scopes and client', async () => {
    const { policy, calls } = setup(() => json(ACTIVE))
    const value = generateTokenValue('oauth')
    const result = await policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'https',
      clientAddress: '203.0.113.9',
    })
    expect(result).toMatchObject({
      ok: true,
      principal: { userId: 'alice', tokenId: 'tok_abc', tokenKind: 'oauth', clientId: 'cli' },
    })
    // client_secret_basic with the id and secret form-encoded first (RFC 6749 §2.3.1).
    expect(calls).toHaveLength(1)
    expect(calls[0]!.url).toBe(ENDPOINT)
    expect(calls[0]!.init.method).toBe('POST')
    const headers = calls[0]!.init.headers as Record<string, string>
    expect(headers.authorization).toBe(`Basic ${btoa('rs:rs+secret%3A1')}`)
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(new URLSearchParams(calls[0]!.init.body as string).get('token')).toBe(value)
  })

  test.each([
    ['public data.data', ['public', 'data.data']],
    ['', ['public']],
  ])('scope %j is the record granting %j, hinted like a stored token', async (scope, granted) => {
    const { tokens } = setup(() => json({ ...ACTIVE, scope }))
    const value = generateTokenValue('oauth')
    const record = await tokens.findByValue(value)
    expect(record?.scopes).toEqual(granted)
    expect(record?.hint).toBe(tokenValueHint(value))
    expect(record?.hint).toBe(`${value.slice(0, 4)}…${value.slice(-4)}`)
  })

  test.each([
    ['no aud: no audience', undefined, undefined],
    ['aud as a string (one resource)', 'https://api.example/v1', ['https://api.example/v1']],
    [
      'aud as an array (several)',
      ['https://api.example/v1', 'https://mcp.example/'],
      ['https://api.example/v1', 'https://mcp.example/'],
    ],
  ])('%s (RFC 7662 §2.2)', async (_name, aud, audience) => {
    const { tokens } = setup(() => json({ ...ACTIVE, aud }))
    const record = await tokens.findByValue(generateTokenValue('oauth'))
    expect(record?.audience).toEqual(audience)
  })

  test.each([
    ['an aud that is no resource identifier', 'not a uri'],
    ['an aud of another type', 42],
    ['an aud on an API token', 'https://api.example/v1'],
  ])('%s is a 503, never an allow', async (name, aud) => {
    const { check } = setup(() => json({ ...ACTIVE, aud }))
    expect(await check(generateTokenValue(name.includes('API') ? 'api' : 'oauth'))).toBe(503)
  })

  test.each([
    ['inactive', { active: false }, 401],
    ['active but expired by its exp', { ...ACTIVE, exp: Math.floor(NOW / 1000) - 1 }, 401],
  ])('%s → %s', async (_name, body, status) => {
    const { check, errors } = setup(() => json(body))
    expect(await check(generateTokenValue('api'))).toBe(status)
    expect(errors).toEqual([])
  })

  test.each([
    ['a 500', () => json({ error: 'server_error' }, 500)],
    ['a 401 (our credential refused)', () => json({ error: 'invalid_client' }, 401)],
    ['a 200 that is not JSON', () => new Response('<html>', { status: 200 })],
    ['JSON without active', () => json({ scope: 'public' })],
    ['active as a string', () => json({ ...ACTIVE, active: 'true' })],
    ['active without sub', () => json({ ...ACTIVE, sub: undefined })],
    ['active without scope', () => json({ ...ACTIVE, scope: undefined })],
    ['active without token_type', () => json({ ...ACTIVE, token_type: undefined })],
    ['a refresh token (not a bearer token)', () => json({ ...ACTIVE, token_type: 'refresh_token' })],
    ['an unknown scope', () => json({ ...ACTIVE, scope: 'public admin.all' })],
    // RFC 6749 §3.3 delimits scopes by single spaces: an empty entry is a bad scope, not skipped.
    ['a double space between scopes', () => json({ ...ACTIVE, scope: 'public  data.data' })],
    ['a trailing space after the scopes', () => json({ ...ACTIVE, scope: 'public data.data ' })],
    ['a network error', () => Promise.reject(new TypeError('fetch failed'))],
    ['an array', () => json([ACTIVE])],
    ['an aud that is not a resource identifier', () => json({ ...ACTIVE, aud: 'reports' })],
    ['an aud with a fragment', () => json({ ...ACTIVE, aud: ['https://rs.example/api#x'] })],
    ['an empty aud array', () => json({ ...ACTIVE, aud: [] })],
    ['an aud that is a number', () => json({ ...ACTIVE, aud: 7 })],
    ['an aud array holding a number', () => json({ ...ACTIVE, aud: ['https://rs.example/api', 7] })],
  ])('%s is a 503 reported to onError, never an allow, and never cached', async (_name, respond) => {
    const { check, errors, calls } = setup(respond)
    const value = generateTokenValue('oauth')
    expect(await check(value)).toBe(503)
    expect(await check(value)).toBe(503)
    expect(calls).toHaveLength(2)
    expect(errors).toHaveLength(2)
    expect((errors[0] as Error).name).toBe('TokenStoreError')
    expect(JSON.stringify(errors, Object.getOwnPropertyNames(errors[0]))).not.toContain(value)
  })

  test('an issuer slower than the deadline is a 503 at the deadline', async () => {
    const { check, errors } = setup(
      ({ init }) =>
        new Promise<Response>((_resolve, reject) =>
          init.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
        ),
      { timeoutMs: 50 },
    )
    expect(await check(generateTokenValue('oauth'))).toBe(503)
    expect(errors).toHaveLength(1)
  })
})

describe('the cache', () => {
  test('reuses an answer within its TTL, asks again after it (revocation visible within the bound)', async () => {
    let body: object = ACTIVE
    const { check, calls, advance } = setup(() => json(body), { cacheTtlMs: 5000 })
    const value = generateTokenValue('oauth')
    expect(await check(value)).toBe('allowed')
    body = { active: false }
    advance(4999)
    expect(await check(value)).toBe('allowed')
    expect(calls).toHaveLength(1)
    advance(1)
    expect(await check(value)).toBe(401)
    expect(calls).toHaveLength(2)
  })

  test('defaults to a TTL of at most 5 s', async () => {
    let body: object = ACTIVE
    const { check, advance } = setup(() => json(body))
    const value = generateTokenValue('oauth')
    expect(await check(value)).toBe('allowed')
    body = { active: false }
    advance(5000)
    expect(await check(value)).toBe(401)
  })

  test('a TTL of 0 asks every time', async () => {
    const { check, calls } = setup(() => json(ACTIVE), { cacheTtlMs: 0 })
    const value = generateTokenValue('oauth')
    await check(value)
    await check(value)
    expect(calls).toHaveLength(2)
  })

  test('holds at most maxEntries answers, dropping the oldest', async () => {
    const { check, calls } = setup(() => json(ACTIVE), { maxEntries: 2 })
    const [a, b, c] = [1, 2, 3].map(() => generateTokenValue('oauth')) as [string, string, string]
    for (const value of [a, b, c]) await check(value)
    expect(calls).toHaveLength(3)
    await check(c)
    await check(b)
    expect(calls).toHaveLength(3)
    await check(a)
    expect(calls).toHaveLength(4)
  })

  test('concurrent requests for one token share one call', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const { check, calls } = setup(async () => {
      await gate
      return json(ACTIVE)
    })
    const value = generateTokenValue('oauth')
    const answers = Promise.all([check(value), check(value), check(value)])
    release()
    expect(await answers).toEqual(['allowed', 'allowed', 'allowed'])
    expect(calls).toHaveLength(1)
  })
})

describe('findByHash', () => {
  test('answers a fresh active answer, and refuses once it is stale (the value is needed to ask)', async () => {
    const { tokens, advance } = setup(() => json(ACTIVE))
    const value = generateTokenValue('oauth')
    const record = await tokens.findByValue(value)
    expect(tokens.findByHash(record!.hash)).toBe(record)
    advance(5000)
    expect(() => tokens.findByHash(record!.hash)).toThrow('by value')
  })
})

describe('the rest of TokenStore', () => {
  test('writes and listings reject (the issuer manages tokens); touch does nothing', async () => {
    const { tokens } = setup(() => json(ACTIVE))
    await expect(tokens.findById('x')).rejects.toThrow('read-only')
    await expect(tokens.listByOwner('alice')).rejects.toThrow('read-only')
    const record = (await tokens.findByValue(generateTokenValue('oauth')))!
    await expect(tokens.save(record)).rejects.toThrow('read-only')
    await expect(tokens.update(record)).rejects.toThrow('read-only')
    await expect(tokens.touch('x', NOW)).resolves.toBeUndefined()
    expect(() => tokens.findByHash('0'.repeat(64))).toThrow('by value')
  })
})

describe('IntrospectionTokenStore fetch', () => {
  const base = { endpoint: ENDPOINT, clientId: 'rs', clientSecret: 's' }

  afterEach(() => {
    vi.unstubAllGlobals()
  })

  test('uses the global fetch unless given one', async () => {
    const seen: string[] = []
    vi.stubGlobal('fetch', async (url: string) => {
      seen.push(url)
      return new Response('{"active":false}', { status: 200 })
    })
    const tokens = new IntrospectionTokenStore(base)
    expect(await tokens.findByValue(generateTokenValue('api'))).toBeUndefined()
    expect(seen).toEqual([ENDPOINT])
  })

  test('a failed status whose body cannot be cancelled is still a TokenStoreError', async () => {
    const body = new ReadableStream({
      cancel() {
        throw new Error('cannot cancel')
      },
    })
    const fetch = (async () => new Response(body, { status: 500 })) as unknown as typeof globalThis.fetch
    const tokens = new IntrospectionTokenStore({ ...base, fetch })
    await expect(tokens.findByValue(generateTokenValue('api'))).rejects.toThrow(
      'the introspection endpoint answered 500',
    )
  })
})
