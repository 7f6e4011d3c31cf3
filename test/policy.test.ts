import { describe, expect, test } from 'vitest'
import { parseScopes } from '../src/decisions/scopes.js'
import { ConfigError } from '../src/errors.js'
import { createAccessPolicy } from '../src/policy.js'
import { MemoryTokenStore } from '../src/tokens/memory-token-store.js'
import { createApiToken, createOAuthToken } from '../src/tokens/token-record.js'

const NOW = Date.parse('2026-11-22T12:00:00Z')

async function policyWithToken(extra: object = {}) {
  const tokens = new MemoryTokenStore()
  const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW - 1 })
  await tokens.save(record)
  return { policy: createAccessPolicy({ tokens, now: () => NOW, ...extra }), value }
}

describe('createAccessPolicy options', () => {
  test.each([
    [{}, 'options.tokens: must be a TokenStore (findByHash, findById, save, update, listByOwner, touch)'],
    [
      { tokens: { findByHash() {} } },
      'options.tokens: must be a TokenStore (findByHash, findById, save, update, listByOwner, touch)',
    ],
    [
      { tokens: new MemoryTokenStore(), realm: '' },
      'options.realm: must be 1–200 printable ASCII characters',
    ],
    [
      { tokens: new MemoryTokenStore(), realm: 'a\r\nSet-Cookie: x' },
      'options.realm: must be 1–200 printable ASCII characters',
    ],
    [
      { tokens: new MemoryTokenStore(), storeTimeoutMs: 0 },
      'options.storeTimeoutMs: Too small: expected number to be >0',
    ],
    [
      { tokens: new MemoryTokenStore(), requireHttps: 'yes' },
      'options.requireHttps: Invalid input: expected boolean, received string',
    ],
    [{ tokens: new MemoryTokenStore(), now: 5 }, 'options.now: must be a function'],
    [
      { tokens: new MemoryTokenStore(), ipv6Prefix: 0 },
      'options.ipv6Prefix: Too small: expected number to be >=1',
    ],
    [
      { tokens: new MemoryTokenStore(), ipv6Prefix: 129 },
      'options.ipv6Prefix: Too big: expected number to be <=128',
    ],
    [
      { tokens: new MemoryTokenStore(), ipv6Prefix: 48.5 },
      'options.ipv6Prefix: Invalid input: expected int, received number',
    ],
    [{ tokens: new MemoryTokenStore(), reaml: 'x' }, 'options: unknown key "reaml"'],
  ])('%j → %s', (options, message) => {
    expect(() => createAccessPolicy(options as never)).toThrow(ConfigError)
    expect(() => createAccessPolicy(options as never)).toThrow(message)
  })

  test('defaults: realm data-api', () => {
    expect(createAccessPolicy({ tokens: new MemoryTokenStore() }).realm).toBe('data-api')
  })
})

// The network beside a token's last use is the one a host counts its clients in: `ipv6Prefix`.
describe('the network recorded beside a last use', () => {
  test.each([
    [undefined, '2001:db8:1:2ab::/64'],
    [48, '2001:db8:1::/48'],
    [56, '2001:db8:1:200::/56'],
    [128, '2001:db8:1:2ab:3:4:5:6/128'],
  ])('ipv6Prefix %s → %s; IPv4 stays whole', async (ipv6Prefix, network) => {
    for (const [address, expected] of [
      ['2001:db8:1:2ab:3:4:5:6', network],
      ['192.0.2.7', '192.0.2.7'],
    ] as const) {
      const { policy, value } = await policyWithToken(ipv6Prefix === undefined ? {} : { ipv6Prefix })
      const result = await policy.authenticate({
        authorization: [`Bearer ${value}`],
        protocol: 'https',
        clientAddress: address,
      })
      expect(result.ok).toBe(true)
      const [record] = await policy.tokens.listByOwner('alice')
      await expect
        .poll(async () => (await policy.tokens.findById(record!.id))?.lastUsedFrom, { timeout: 10_000 })
        .toBe(expected)
    }
  })
})

describe('transport (design §4)', () => {
  test.each([
    ['https from anywhere', 'https', '203.0.113.9', true],
    ['http from loopback IPv4', 'http', '127.0.0.1', true],
    ['http from loopback IPv6', 'http', '::1', true],
    ['http from another host', 'http', '203.0.113.9', false],
    ['http from an unknown address', 'http', undefined, false],
  ])('%s', async (_name, protocol, clientAddress, ok) => {
    const { policy, value } = await policyWithToken()
    const result = await policy.authenticate({ authorization: [`Bearer ${value}`], protocol, clientAddress })
    expect(result.ok).toBe(ok)
    if (!result.ok) expect(result.decision).toMatchObject({ status: 403, code: 'https_required' })
  })

  test('the host may opt out of the HTTPS requirement', async () => {
    const { policy, value } = await policyWithToken({ requireHttps: false })
    const result = await policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'http',
      clientAddress: '203.0.113.9',
    })
    expect(result.ok).toBe(true)
  })

  test('anonymous callers only where the host opts in', async () => {
    const closed = await policyWithToken()
    const open = await policyWithToken({ allowAnonymous: true })
    const request = { authorization: [], protocol: 'https', clientAddress: '203.0.113.9' }
    expect((await closed.policy.authenticate(request)).ok).toBe(false)
    expect(await open.policy.authenticate(request)).toMatchObject({
      ok: true,
      principal: { kind: 'anonymous' },
    })
  })
})

describe('authorize answers garbage with a denial, never a throw', () => {
  const principal = { kind: 'token' as const, userId: 'alice', scopes: parseScopes('data.data') }
  const dataset = { kind: 'dataset', publicLevel: 'data', userLevel: 'edit' } as const

  test.each([
    ['no principal', () => [null, 'table.read', dataset]],
    ['an unknown operation', () => [principal, 'table.drop', dataset]],
    ['a null resource', () => [principal, 'table.read', null]],
  ])('%s is 403 invalid_input', (_name, args) => {
    const policy = createAccessPolicy({ tokens: new MemoryTokenStore() })
    const [who, operation, resource] = args() as Parameters<typeof policy.authorize>
    expect(policy.authorize(who, operation, resource)).toMatchObject({
      allowed: false,
      status: 403,
      code: 'invalid_input',
    })
  })
})

describe('guard', () => {
  const principal = { kind: 'token' as const, userId: 'alice', scopes: parseScopes('data.data') }

  test('a resolver that throws or rejects is 503', async () => {
    const { policy } = await policyWithToken()
    const sync = await policy.guard(principal, 'dataset.overview', () => {
      throw new Error('db down')
    })
    const async_ = await policy.guard(principal, 'dataset.overview', async () =>
      Promise.reject(new Error('db down')),
    )
    expect(sync).toMatchObject({ allowed: false, status: 503, code: 'service_unavailable' })
    expect(async_).toMatchObject({ allowed: false, status: 503, code: 'service_unavailable' })
  })

  test('authenticate and guard answer with a promise, even when every step is synchronous', async () => {
    const { policy, value } = await policyWithToken()
    const authenticated = policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'https',
      clientAddress: undefined,
    })
    expect(authenticated).toBeInstanceOf(Promise)
    expect(await authenticated).toMatchObject({ ok: true })
    const guarded = policy.guard(principal, 'dataset.overview', () => undefined)
    expect(guarded).toBeInstanceOf(Promise)
    expect(await guarded).toMatchObject({ status: 404 })
  })

  test('undefined is 404, a resource is decided', async () => {
    const { policy } = await policyWithToken()
    expect(await policy.guard(principal, 'dataset.overview', () => undefined)).toMatchObject({ status: 404 })
    const allowed = await policy.guard(principal, 'table.read', async () => ({
      kind: 'dataset' as const,
      publicLevel: 'none' as const,
      userLevel: 'data' as const,
    }))
    expect(allowed.allowed).toBe(true)
  })

  test('render uses the realm', async () => {
    const { policy } = await policyWithToken({ realm: 'my "api"' })
    expect(
      policy.render({ allowed: false, status: 401, code: 'missing_token', message: 'Invalid credentials' })
        .headers,
    ).toMatchObject({
      'www-authenticate': 'Bearer realm="my \\"api\\""',
    })
  })
})

describe('resourceMetadata (RFC 9728 §5.1)', () => {
  const URL_ = 'https://data.example.org/.well-known/oauth-protected-resource/api/v1'

  test.each([
    'not a url',
    '/.well-known/oauth-protected-resource',
    'http://data.example.org/.well-known/oauth-protected-resource',
    'https://user:pw@data.example.org/.well-known/oauth-protected-resource',
    'https://data.example.org/.well-known/oauth-protected-resource#x',
    'https://data.example.org/.well-known/oauth-protected-resource#',
    'https://data.example.org/a"b',
    'https://data.example.org/\r\nSet-Cookie: x',
    'ftp://data.example.org/meta',
  ])('refuses %j', (resourceMetadata) => {
    expect(() => createAccessPolicy({ tokens: new MemoryTokenStore(), resourceMetadata })).toThrow(
      'options.resourceMetadata: must be an absolute https URL (http only on a loopback host)',
    )
  })

  test.each([
    ['missing_token', 'Bearer realm="data-api", resource_metadata="URL"'],
    ['invalid_token', 'Bearer realm="data-api", error="invalid_token", resource_metadata="URL"'],
  ] as const)('a 401 %s challenge names the metadata', async (code, challenge) => {
    const { policy } = await policyWithToken({ resourceMetadata: URL_ })
    const { deny } = await import('../src/decisions/decision.js')
    expect(policy.render(deny(code)).headers['www-authenticate']).toBe(challenge.replace('URL', URL_))
  })

  test('other challenges (400, 403) and other denials are as without it', async () => {
    const { policy } = await policyWithToken({ resourceMetadata: URL_ })
    const plain = createAccessPolicy({ tokens: new MemoryTokenStore() })
    const { deny } = await import('../src/decisions/decision.js')
    for (const code of [
      'invalid_request',
      'insufficient_access',
      'not_found',
      'service_unavailable',
    ] as const) {
      expect(policy.render(deny(code))).toEqual(plain.render(deny(code)))
    }
    const scope = { ...deny('insufficient_scope'), scope: 'data.data' as const }
    expect(policy.render(scope)).toEqual(plain.render(scope))
  })

  test('a function is asked once, at the first 401, and its answer kept', async () => {
    let asked = 0
    const { policy } = await policyWithToken({
      resourceMetadata: () => {
        asked++
        return URL_
      },
    })
    const { deny } = await import('../src/decisions/decision.js')
    expect(asked).toBe(0)
    expect(policy.render(deny('not_found')).headers['www-authenticate']).toBeUndefined()
    expect(asked).toBe(0)
    expect(policy.render(deny('missing_token')).headers['www-authenticate']).toContain(URL_)
    expect(policy.render(deny('invalid_token')).headers['www-authenticate']).toContain(URL_)
    expect(asked).toBe(1)
  })

  test('a function answering a bad URL is reported once and the challenges go without it', async () => {
    const errors: unknown[] = []
    const { policy } = await policyWithToken({
      resourceMetadata: () => 'http://0.0.0.0:3000/.well-known/oauth-protected-resource',
      onError: (error: unknown) => errors.push(error),
    })
    const { deny } = await import('../src/decisions/decision.js')
    expect(policy.render(deny('missing_token')).headers['www-authenticate']).toBe('Bearer realm="data-api"')
    expect(policy.render(deny('invalid_token')).headers['www-authenticate']).toBe(
      'Bearer realm="data-api", error="invalid_token"',
    )
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toContain('options.resourceMetadata')
  })

  test('an http URL is accepted on a loopback host', () => {
    expect(() =>
      createAccessPolicy({
        tokens: new MemoryTokenStore(),
        resourceMetadata: 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/api/v1',
      }),
    ).not.toThrow()
  })
})

describe('render', () => {
  test('renders a shared denial once and a host-built one every time', async () => {
    const { policy } = await policyWithToken()
    const { deny } = await import('../src/decisions/decision.js')
    expect(policy.render(deny('not_found'))).toBe(policy.render(deny('not_found')))
    const mutable = { allowed: false, status: 404, code: 'not_found', message: 'Not found' } as const
    expect(policy.render(mutable)).toEqual(policy.render(deny('not_found')))
    expect(policy.render(mutable)).not.toBe(policy.render(mutable))
  })
})

describe('resource (RFC 8707 audiences)', () => {
  const API = 'https://data.example.org/api/v1'
  const MCP = 'https://data.example.org/mcp'
  const OTHER =
    'Bearer realm="data-api", error="invalid_token", error_description="the token is for another resource"'

  async function presented(options: object, audience?: string[]) {
    const tokens = new MemoryTokenStore()
    const { record, value } = createOAuthToken({
      userId: 'alice',
      scopes: 'data.data',
      now: NOW - 1,
      ...(audience === undefined ? {} : { audience }),
    })
    await tokens.save(record)
    const policy = createAccessPolicy({ tokens, now: () => NOW, ...options })
    const result = await policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'https',
      clientAddress: undefined,
    })
    return { policy, result }
  }

  test.each([
    ['no audience, no resource', {}, undefined, true],
    ['no audience, a resource', { resource: API }, undefined, true],
    ['an audience naming the resource', { resource: API }, [MCP, API], true],
    ['an audience naming another resource', { resource: API }, [MCP], false],
    ['an audience, no resource', {}, [API], false],
    ['an audience, a resource answered by a function', { resource: () => API }, [API], true],
    ['another audience, a resource answered by a function', { resource: () => API }, [MCP], false],
  ])('%s → accepted: %s', async (_name, options, audience, accepted) => {
    const { policy, result } = await presented(options, audience)
    expect(result.ok).toBe(accepted)
    if (!result.ok) {
      expect(result.decision.code).toBe('invalid_token')
      expect(policy.render(result.decision).headers['www-authenticate']).toContain(OTHER)
    }
  })

  test.each([['/api/v1'], ['https://data.example.org/api#x'], ['https://u:p@data.example.org/api'], [42]])(
    'refuses the resource %j',
    (resource) => {
      expect(() => createAccessPolicy({ tokens: new MemoryTokenStore(), resource } as never)).toThrow(
        'options.resource: must be an absolute http or https URI without fragment or user info',
      )
    },
  )

  test('policy.resource answers the identifier; a function is asked once, at first need', async () => {
    let asked = 0
    const policy = createAccessPolicy({
      tokens: new MemoryTokenStore(),
      resource: () => {
        asked++
        return API
      },
    })
    expect(asked).toBe(0)
    expect(policy.resource).toBe(API)
    expect(policy.resource).toBe(API)
    expect(asked).toBe(1)
    expect(createAccessPolicy({ tokens: new MemoryTokenStore() }).resource).toBeUndefined()
  })

  test('a function answering a bad identifier is reported, and audience-bound tokens are refused', async () => {
    const errors: unknown[] = []
    const { result } = await presented(
      { resource: () => 'not a uri', onError: (error: unknown) => errors.push(error) },
      [API],
    )
    expect(result.ok).toBe(false)
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toContain('options.resource: answered "not a uri"')
  })

  test.each([
    [API, 'https://data.example.org/.well-known/oauth-protected-resource/api/v1'],
    ['https://data.example.org', 'https://data.example.org/.well-known/oauth-protected-resource'],
    ['https://data.example.org/', 'https://data.example.org/.well-known/oauth-protected-resource'],
    ['https://a.example/x?t=1', 'https://a.example/.well-known/oauth-protected-resource/x?t=1'],
    ['http://127.0.0.1:3000/api/v1', 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/api/v1'],
  ])('without resourceMetadata, challenges name the metadata derived from %s', async (resource, metadata) => {
    const { deny } = await import('../src/decisions/decision.js')
    for (const option of [resource, () => resource]) {
      const policy = createAccessPolicy({ tokens: new MemoryTokenStore(), resource: option })
      expect(policy.render(deny('missing_token')).headers['www-authenticate']).toBe(
        `Bearer realm="data-api", resource_metadata="${metadata}"`,
      )
    }
  })

  test('a plain http resource off loopback derives no metadata URL, and resourceMetadata wins', async () => {
    const { deny } = await import('../src/decisions/decision.js')
    const plain = createAccessPolicy({ tokens: new MemoryTokenStore(), resource: 'http://host/dap/api/v1' })
    expect(plain.render(deny('missing_token')).headers['www-authenticate']).toBe('Bearer realm="data-api"')
    const named = createAccessPolicy({
      tokens: new MemoryTokenStore(),
      resource: API,
      resourceMetadata: 'https://meta.example.org/m',
    })
    expect(named.render(deny('missing_token')).headers['www-authenticate']).toBe(
      'Bearer realm="data-api", resource_metadata="https://meta.example.org/m"',
    )
  })
})

describe('challenges on a route (RFC 6750 §3 scope)', () => {
  test('withChallengeScope names the scope on 401s only, and shares the result', async () => {
    const { deny, withChallengeScope } = await import('../src/decisions/decision.js')
    const policy = createAccessPolicy({ tokens: new MemoryTokenStore() })
    const scoped = withChallengeScope(deny('missing_token'), 'data.metadata')
    expect(scoped).toBe(withChallengeScope(deny('missing_token'), 'data.metadata'))
    expect(Object.isFrozen(scoped)).toBe(true)
    expect(policy.render(scoped).headers['www-authenticate']).toBe(
      'Bearer realm="data-api", scope="data.metadata"',
    )
    expect(
      policy.render(withChallengeScope(deny('invalid_token'), 'data.data')).headers['www-authenticate'],
    ).toBe('Bearer realm="data-api", error="invalid_token", scope="data.data"')
    expect(withChallengeScope(deny('not_found'), 'data.data')).toBe(deny('not_found'))
    expect(withChallengeScope(deny('invalid_request'), 'data.data')).toBe(deny('invalid_request'))
  })
})
