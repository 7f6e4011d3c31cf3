/**
 * What a remote store on introspection adds to guard its issuer and its resource: the answer's `aud`
 * checked against the policy's `resource`, inactive answers remembered, and the miss budgets that
 * refuse a flooding network (429 with Retry-After) without a call while tokens seen active keep
 * working. A simulated clock throughout.
 */
import { describe, expect, test } from 'vitest'
import type { Deny } from '../../src/decisions/decision.js'
import {
  IntrospectionTokenStore,
  type IntrospectionTokenStoreOptions,
} from '../../src/introspection/index.js'
import { createAccessPolicy } from '../../src/policy.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'

const NOW = Date.parse('2026-11-26T12:00:00Z')
const A = 'https://a.example/api'
const B = 'https://b.example/api'

const ACTIVE = {
  active: true,
  scope: 'public data.data',
  sub: 'alice',
  client_id: 'cli',
  token_type: 'Bearer',
  exp: Math.floor(NOW / 1000) + 3600,
}

const json = (body: unknown) =>
  new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })

/** An issuer that knows `active` token values (answering `body`) and nothing else. */
function setup(options: Partial<IntrospectionTokenStoreOptions> = {}, body: object = ACTIVE) {
  let clock = NOW
  const active = new Set<string>()
  const asked: string[] = []
  const fetch = (async (_url: string, init: RequestInit) => {
    const token = new URLSearchParams(init.body as string).get('token')!
    asked.push(token)
    return json(active.has(token) ? body : { active: false })
  }) as unknown as typeof globalThis.fetch
  const tokens = new IntrospectionTokenStore({
    endpoint: 'https://as.example/oauth/introspect',
    clientId: 'rs',
    clientSecret: 's',
    fetch,
    now: () => clock,
    ...options,
  })
  const errors: unknown[] = []
  const policy = createAccessPolicy({ tokens, now: () => clock, resource: A, onError: (e) => errors.push(e) })
  // `null`: a request whose client address the adapter does not know.
  const check = async (value: string, address: string | null = '203.0.113.9') => {
    const clientAddress = address ?? undefined
    const result = await policy.authenticate({
      authorization: [`Bearer ${value}`],
      protocol: 'https',
      clientAddress,
    })
    return result.ok ? 200 : result.decision
  }
  const status = async (value: string, address?: string | null) => {
    const answer = await check(value, address)
    return typeof answer === 'number' ? answer : answer.status
  }
  const issue = () => {
    const value = generateTokenValue('oauth')
    active.add(value)
    return value
  }
  return {
    tokens,
    policy,
    errors,
    asked,
    active,
    check,
    status,
    issue,
    advance: (ms: number) => (clock += ms),
  }
}

describe('audience (RFC 7662 aud against the policy resource)', () => {
  test.each([
    ['a string naming the resource', A, 200],
    ['an array naming it among others', [B, A], 200],
    ['a string naming another resource', B, 401],
    ['an array naming only others', [B, 'https://c.example/'], 401],
    ['no aud at all (a token for any resource of its issuer)', undefined, 200],
  ])('aud as %s (%j) → %s', async (_name, aud, expected) => {
    const { issue, check, errors } = setup({}, { ...ACTIVE, ...(aud !== undefined && { aud }) })
    const answer = await check(issue())
    if (expected === 200) expect(answer).toBe(200)
    else
      expect(answer).toMatchObject({
        status: 401,
        code: 'invalid_token',
        description: 'the token is for another resource',
      })
    expect(errors).toEqual([])
  })

  test('the audience is on the record, duplicates dropped', async () => {
    const { tokens, issue } = setup({}, { ...ACTIVE, aud: [A, B, A] })
    expect((await tokens.findByValue(issue()))?.audience).toEqual([A, B])
  })
})

describe('inactive answers are remembered', () => {
  test('for inactiveTtlMs, then asked again; findByHash answers them meanwhile', async () => {
    const { status, asked, advance, tokens } = setup({ inactiveTtlMs: 10_000 })
    const junk = generateTokenValue('api')
    expect(await status(junk)).toBe(401)
    expect(await status(junk)).toBe(401)
    expect(asked).toHaveLength(1)
    expect(tokens.findByHash(hashTokenValue(junk))).toBeUndefined()
    advance(10_000)
    expect(await status(junk)).toBe(401)
    expect(asked).toHaveLength(2)
  })

  test('an inactiveTtlMs of 0 remembers none', async () => {
    const { status, asked } = setup({ inactiveTtlMs: 0 })
    const junk = generateTokenValue('api')
    await status(junk)
    await status(junk)
    expect(asked).toHaveLength(2)
  })

  test('at most maxInactiveEntries, the least recently asked going first, apart from active ones', async () => {
    const { status, asked, issue } = setup({ maxInactiveEntries: 2, maxEntries: 1 })
    const user = issue()
    expect(await status(user)).toBe(200)
    const [a, b, c] = [1, 2, 3].map(() => generateTokenValue('api')) as [string, string, string]
    for (const value of [a, b, c]) await status(value)
    expect(asked).toHaveLength(4)
    await status(b)
    await status(c)
    await status(user)
    expect(asked).toHaveLength(4)
    await status(a)
    expect(asked).toHaveLength(5)
  })

  test('a token seen active and later found inactive is refused, and remembered as such', async () => {
    const { status, asked, advance, issue, active } = setup({ missesPerNetwork: 1, missesTotal: 1 })
    const user = issue()
    expect(await status(user)).toBe(200)
    active.delete(user)
    advance(5000)
    // Asked again as a token seen active: no miss is spent (the only one went on its first call).
    expect(await status(user)).toBe(401)
    expect(await status(user)).toBe(401)
    expect(asked).toHaveLength(2)
  })
})

describe('miss budgets', () => {
  const budget = { missesPerNetwork: 3, missesTotal: 10, missWindowMs: 60_000 }

  test('a network past its budget is refused with 429 and Retry-After, without a call', async () => {
    const { check, asked, errors, advance } = setup(budget)
    for (let i = 0; i < 3; i++) expect(await check(generateTokenValue('api'))).toMatchObject({ status: 401 })
    const refused = (await check(generateTokenValue('api'))) as Deny
    expect(refused).toMatchObject({
      status: 429,
      code: 'rate_limited',
      message: 'Too many requests',
      retryAfter: 20,
    })
    expect(asked).toHaveLength(3)
    // Not a failure: the hook hears nothing.
    expect(errors).toEqual([])
    advance(20_000)
    expect(await check(generateTokenValue('api'))).toMatchObject({ status: 401 })
    expect(asked).toHaveLength(4)
  })

  test('only the flooding network: another network and tokens seen active keep working', async () => {
    const { status, asked, issue, advance } = setup(budget)
    const known = issue()
    expect(await status(known, '198.51.100.1')).toBe(200)
    for (let i = 0; i < 4; i++) await status(generateTokenValue('api'), '203.0.113.9')
    expect(await status(generateTokenValue('api'), '203.0.113.9')).toBe(429)
    // The same token from the flooding network, from the cache and past its TTL alike.
    expect(await status(known, '203.0.113.9')).toBe(200)
    advance(6000)
    expect(await status(known, '203.0.113.9')).toBe(200)
    expect(await status(issue(), '198.51.100.2')).toBe(200)
    expect(asked).toHaveLength(6)
  })

  test('an IPv6 client counts in its network of ipv6Prefix bits', async () => {
    const { status } = setup({ ...budget, ipv6Prefix: 56 })
    for (let i = 0; i < 3; i++) await status(generateTokenValue('api'), `2001:db8:1:${i + 1}::1`)
    expect(await status(generateTokenValue('api'), '2001:db8:1:ff::1')).toBe(429)
    expect(await status(generateTokenValue('api'), '2001:db8:1:100::1')).toBe(401)
  })

  test('an IPv6 client counts in its /64 by default; an unknown address shares one network', async () => {
    const { status } = setup(budget)
    for (let i = 0; i < 3; i++) await status(generateTokenValue('api'), `2001:db8:1:2::${i + 1}`)
    expect(await status(generateTokenValue('api'), '2001:db8:1:2:ffff::9')).toBe(429)
    expect(await status(generateTokenValue('api'), '2001:db8:1:3::1')).toBe(401)
    for (let i = 0; i < 3; i++) await status(generateTokenValue('api'), null)
    expect(await status(generateTokenValue('api'), 'not an address')).toBe(429)
  })

  test('the total bounds every network together; its reserve is for networks that showed an active token', async () => {
    const { status, asked, issue } = setup(budget)
    expect(await status(issue(), '198.51.100.1')).toBe(200)
    const answers: number[] = []
    for (let n = 0; n < 6; n++) {
      for (let i = 0; i < 3; i++) answers.push(await status(generateTokenValue('api'), `192.0.${n}.1`))
    }
    // 10 in total, 1 kept in reserve: the flood's networks never showed an active token.
    expect(answers.filter((s) => s === 401)).toHaveLength(8)
    expect(answers.filter((s) => s === 429)).toHaveLength(10)
    expect(await status(issue(), '192.0.99.1')).toBe(429)
    // The user's network did: a new token from there takes the reserve.
    expect(await status(issue(), '198.51.100.1')).toBe(200)
    expect(asked).toHaveLength(10)
  })

  test('a block bounds its networks together: an IPv4 /24, an IPv6 /48', async () => {
    // 4 times the network's budget per block.
    const { status } = setup({ ...budget, missesTotal: 100 })
    const answers = async (address: (i: number) => string) => {
      const statuses: number[] = []
      for (let i = 0; i < 13; i++) statuses.push(await status(generateTokenValue('api'), address(i)))
      return statuses.filter((s) => s === 401).length
    }
    expect(await answers((i) => `192.0.2.${i}`)).toBe(12)
    expect(await answers((i) => `2001:db8:1:${i}::1`)).toBe(12)
    // With an IPv6 network as coarse as a block, there is no block above it: its own budget only.
    const coarse = setup({ ...budget, missesTotal: 100, ipv6Prefix: 48 })
    expect(await coarse.status(generateTokenValue('api'), '2001:db8:1:1::1')).toBe(401)
    expect(await coarse.status(generateTokenValue('api'), '2001:db8:1:2::1')).toBe(401)
    expect(await coarse.status(generateTokenValue('api'), '2001:db8:1:3::1')).toBe(401)
    expect(await coarse.status(generateTokenValue('api'), '2001:db8:1:4::1')).toBe(429)
    expect(await coarse.status(generateTokenValue('api'), '2001:db8:2:4::1')).toBe(401)
  })

  test('concurrent requests for one new token spend one miss', async () => {
    const { status, asked } = setup({ ...budget, missesPerNetwork: 1, missesTotal: 1 })
    const junk = generateTokenValue('api')
    expect(await Promise.all([status(junk), status(junk), status(junk)])).toEqual([401, 401, 401])
    expect(asked).toHaveLength(1)
  })
})

// The exploit of many networks in one allocation, at the defaults (30 per network, 300 in total per
// minute): 21 networks of one /48 send 15 made-up tokens each at once, then a fresh network of the
// flood sends one every 200 ms for two minutes, while genuine users bring new tokens.
describe('a flood from the many networks of one allocation', () => {
  const network64 = (block: number, n: number) => `2001:db8:${block}:${n.toString(16)}::1`
  const network56 = (block: number, n: number) => `2001:db8:${block}:${((n % 256) << 8).toString(16)}::1`
  const ipv4 = (i: number) => `198.51.${i}.7`
  type Row = {
    readonly options: Partial<IntrospectionTokenStoreOptions>
    // How many /48s the flood's networks are spread over, and the address of its nth network in one.
    readonly blocks: number
    readonly flooder: (block: number, n: number) => string
    readonly genuine: (i: number) => string
    readonly everyMs: number
    // What a new token from a network never seen active gets right after the first burst.
    readonly stranger: number
    readonly refusedAtLeast: number
  }
  const one48 = {
    options: {},
    blocks: 1,
    flooder: network64,
    everyMs: 1000,
    stranger: 200,
    refusedAtLeast: 500,
  }
  test.each<readonly [string, Row]>([
    ['fresh IPv4 addresses, one per token, every second', { ...one48, genuine: ipv4 }],
    ['networks of another /48, one per token', { ...one48, genuine: (i) => `2001:db8:ff:${i}::7` }],
    [
      'IPv4 addresses, with IPv6 networks of /56',
      { ...one48, options: { ipv6Prefix: 56 }, flooder: network56, genuine: ipv4 },
    ],
    // Four allocations spend the total down to its reserve, which only the user's network may take.
    [
      'a network that showed an active token, against four /48s',
      {
        ...one48,
        blocks: 4,
        genuine: () => '198.51.100.7',
        everyMs: 4000,
        stranger: 429,
        refusedAtLeast: 45,
      },
    ],
  ])('genuine new tokens from %s get through', async (_name, row) => {
    const { status, issue, advance, asked } = setup(row.options)
    expect(await status(issue(), '198.51.100.7')).toBe(200)
    let sent = 0
    const flood = () =>
      status(generateTokenValue('api'), row.flooder(sent % row.blocks, Math.floor(sent++ / row.blocks)))
    const floodAnswers: number[] = []
    for (let i = 0; i < 21 * 15; i++) floodAnswers.push(await flood())
    expect(await status(issue(), '192.0.2.200')).toBe(row.stranger)
    const genuineAnswers: number[] = []
    for (let ms = 0; ms < 120_000; ms += 200) {
      advance(200)
      floodAnswers.push(await flood())
      if (ms % row.everyMs === 0) genuineAnswers.push(await status(issue(), row.genuine(ms / row.everyMs)))
    }
    expect(genuineAnswers).toEqual(genuineAnswers.map(() => 200))
    expect(floodAnswers.filter((s) => s === 429).length).toBeGreaterThanOrEqual(row.refusedAtLeast)
    // The issuer: at most the total and what refilled in two minutes.
    expect(asked.length).toBeLessThanOrEqual(300 + 600)
  })
})
