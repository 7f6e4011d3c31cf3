/**
 * The token settings pages' bounds, over real HTTP: every change (create, rename, rescope,
 * regenerate, revoke) is limited per network and per signed-in user, on memory and on the Redis
 * that several instances share (429 with `Retry-After` and a page saying why, nothing changed); a
 * user holds at most `--max-live-tokens` live tokens; the network beside a token's last use is the
 * one `--ipv6-prefix` names; the create form's date field offers no date past
 * `--max-token-lifetime`. Client addresses come from `X-Forwarded-For`, trusted from loopback.
 */
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest'
import type { Framework } from '../../examples/server/flags.js'
import type { AbuseLimits } from '../../examples/server/limits/abuse-limits.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, type StartServerOptions, startServer } from '../../examples/server/server.js'
import { expiryDateBounds, readNewToken } from '../../examples/server/web/token-form.js'
import { DAY_MS } from '../../src/testing/index.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { csrfOf, tokenValueOf, WebClient } from './web-client.js'

const PASSWORDS = { alice: 'alice-demo-password', bob: 'bob-demo-password', carol: 'carol-demo-password' }
type Handle = keyof typeof PASSWORDS

const LIMITS: Partial<AbuseLimits> = {
  settingsWrites: { max: 6, windowMs: 600_000 },
  settingsWritesPerUser: { max: 4, windowMs: 600_000 },
}

// Through the trusted proxy, which terminates TLS.
const from = (address: string) => ({ 'x-forwarded-for': address, 'x-forwarded-proto': 'https' })

let lastAddress = 0
function nextAddress(): string {
  lastAddress++
  return `203.0.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`
}

const servers: StartedServer[] = []

async function serve(options: Partial<StartServerOptions> = {}): Promise<StartedServer> {
  const server = await startServer({
    seed: await loadSeed(DEMO_SEED),
    port: 0,
    trustProxy: ['loopback'],
    limits: LIMITS,
    ...options,
  })
  servers.push(server)
  return server
}

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
})

/** A signed-in browser behind one address (which it may change). */
class Browser {
  address = nextAddress()
  client: WebClient

  constructor(server: StartedServer) {
    this.client = new WebClient(server.port)
  }

  /** Moves to another instance of the same store, keeping the cookies. */
  on(server: StartedServer): this {
    const jar = this.client.jar
    this.client = new WebClient(server.port)
    for (const [name, value] of jar) this.client.jar.set(name, value)
    return this
  }

  async signIn(handle: Handle): Promise<this> {
    const form = await this.client.get('/signin', { headers: from(this.address) })
    const answer = await this.client.post(
      '/signin',
      { handle, password: PASSWORDS[handle], csrf_token: csrfOf(form.body) },
      { headers: from(this.address) },
    )
    expect(answer.status).toBe(303)
    return this
  }

  get(path: string) {
    return this.client.get(path, { headers: from(this.address) })
  }

  /** Posts a form of the page at `path` (its CSRF token read first). */
  async post(path: string, fields: Record<string, string | readonly string[]>, page = '/settings/tokens') {
    const csrf = csrfOf((await this.get(page)).body)
    return this.client.post(path, { csrf_token: csrf, ...fields }, { headers: from(this.address) })
  }

  create(name: string, fields: Record<string, string> = {}) {
    return this.post('/settings/tokens', {
      name,
      scopes: ['public', 'data.metadata'],
      lifetime: '30',
      ...fields,
    })
  }
}

let names = 0
const fresh = () => `token ${++names}`

async function tokensOf(server: StartedServer, handle: Handle) {
  return (await server.app.tokens.listByOwner(handle)).filter((token) => token.kind === 'api')
}

function expectRefused(
  answer: { status: number; headers: Record<string, unknown>; body: string },
  why: string,
) {
  expect(answer.status).toBe(429)
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
  expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(answer.body).toContain(`Too many changes to API tokens were made ${why}`)
  expect(answer.body).toContain('Nothing was changed.')
}

describe.each<Framework>(['express', 'fastify', 'hono'])('settings changes on %s', (framework) => {
  test('one user is limited from every network together; the limit covers each kind of change', async () => {
    const server = await serve({ framework })
    const alice = await new Browser(server).signIn('alice')
    expect((await alice.create(fresh())).status).toBe(200)
    const [token] = await tokensOf(server, 'alice')
    const path = `/settings/tokens/${token!.id}`
    alice.address = nextAddress()
    expect((await alice.post(path, { name: fresh() })).status).toBe(303)
    alice.address = nextAddress()
    expect((await alice.post(`${path}/regenerate`, { overlap: 'none' })).status).toBe(200)
    alice.address = nextAddress()
    expect((await alice.create(fresh())).status).toBe(200)
    const before = await tokensOf(server, 'alice')
    // The fifth change, from yet another network: refused, whatever it is.
    alice.address = nextAddress()
    expectRefused(await alice.create(fresh()), 'by your account')
    expectRefused(await alice.post(path, { name: fresh() }), 'by your account')
    expectRefused(await alice.post(`${path}/regenerate`, { overlap: 'none' }), 'by your account')
    expectRefused(await alice.post(`${path}/revoke`, { confirm: 'yes' }), 'by your account')
    expect(await tokensOf(server, 'alice')).toEqual(before)
    // Reading is not a change: the list still shows.
    expect((await alice.get('/settings/tokens')).status).toBe(200)
    // Another user from the same network is not alice.
    const bob = await new Browser(server).signIn('bob')
    bob.address = alice.address
    expect((await bob.create(fresh())).status).toBe(200)
  })

  test('one network is limited for every user behind it', async () => {
    const server = await serve({ framework })
    const address = nextAddress()
    const users = await Promise.all(
      (['alice', 'bob', 'carol'] as const).map(async (handle) => {
        const browser = new Browser(server)
        browser.address = address
        return browser.signIn(handle)
      }),
    )
    for (let i = 0; i < 6; i++) expect((await users[i % 3]!.create(fresh())).status).toBe(200)
    expectRefused(await users[0]!.create(fresh()), 'from your network')
    expectRefused(await users[2]!.create(fresh()), 'from your network')
    // The same users from elsewhere go on.
    users[0]!.address = nextAddress()
    expect((await users[0]!.create(fresh())).status).toBe(200)
  })

  test('a form that fails its CSRF check counts nothing', async () => {
    const server = await serve({ framework })
    const carol = await new Browser(server).signIn('carol')
    for (let i = 0; i < 6; i++) {
      const answer = await carol.client.post(
        '/settings/tokens',
        { csrf_token: 'forged', name: fresh(), scopes: ['public'] },
        { headers: from(carol.address) },
      )
      expect(answer.status).toBe(403)
    }
    expect((await carol.create(fresh())).status).toBe(200)
  })
})

describe('settings changes on Redis, shared by two instances', () => {
  let redis: RedisServer
  let first: StartedServer
  let second: StartedServer

  beforeAll(async () => {
    redis = await startRedisServer()
    const store = { kind: 'redis', url: redis.url } as const
    first = await serve({ framework: 'express', store })
    second = await serve({ framework: 'hono', store })
  }, 30_000)

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()])
    await redis?.stop()
  })

  test('a user spreading changes over the instances meets one count', async () => {
    const alice = await new Browser(first).signIn('alice')
    const seeded = (await tokensOf(first, 'alice')).length
    for (let i = 0; i < 4; i++) {
      alice.on(i % 2 === 0 ? first : second)
      expect((await alice.create(fresh())).status).toBe(200)
    }
    expectRefused(await alice.on(first).create(fresh()), 'by your account')
    expectRefused(await alice.on(second).create(fresh()), 'by your account')
    expect(await tokensOf(first, 'alice')).toHaveLength(seeded + 4)
  })
})

describe('--max-live-tokens', () => {
  // The demo seed gives alice tokens of her own: they count.
  const seeded = async (server: StartedServer) =>
    (await tokensOf(server, 'alice')).filter(
      (token) => token.revokedAt === undefined && (token.expiresAt ?? Number.POSITIVE_INFINITY) > Date.now(),
    ).length

  test('creation past the bound is refused naming it; a revoked or expired token frees its place', async () => {
    let offset = 0
    const probe = await serve({ limits: {} })
    const bound = (await seeded(probe)) + 2
    const server = await serve({ maxLiveTokens: bound, limits: {}, now: () => Date.now() + offset })
    const alice = await new Browser(server).signIn('alice')
    const count = async () => (await tokensOf(server, 'alice')).length
    expect((await alice.create(fresh(), { lifetime: '7' })).status).toBe(200)
    expect((await alice.create(fresh())).status).toBe(200)
    const before = await count()
    const refused = await alice.create(fresh())
    expect(refused.status).toBe(400)
    expect(refused.body).toContain(`you have ${bound} live tokens, and one account may hold at most ${bound}`)
    expect(await count()).toBe(before)
    // The 7-day token expires: its place is free.
    offset = 8 * DAY_MS
    // Sessions end long before that: sign in again.
    await alice.signIn('alice')
    expect((await alice.create(fresh())).status).toBe(200)
    expect((await alice.create(fresh())).status).toBe(400)
    const [live] = (await tokensOf(server, 'alice')).filter(
      (token) => token.revokedAt === undefined && token.expiresAt! > Date.now() + offset,
    )
    expect((await alice.post(`/settings/tokens/${live!.id}/revoke`, { confirm: 'yes' })).status).toBe(303)
    expect((await alice.create(fresh())).status).toBe(200)
  })

  test('creates sent side by side never leave the user past the bound (Redis: the reads interleave)', async () => {
    const probe = await serve({ limits: {} })
    const bound = (await seeded(probe)) + 2
    const redis = await startRedisServer()
    onTestFinished(() => redis.stop())
    const server = await serve({ maxLiveTokens: bound, limits: {}, store: { kind: 'redis', url: redis.url } })
    const alice = await new Browser(server).signIn('alice')
    const answers = await Promise.all(Array.from({ length: 6 }, () => alice.create(fresh())))
    for (const answer of answers) expect([200, 400]).toContain(answer.status)
    expect(answers.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(2)
    expect(await seeded(server)).toBeLessThanOrEqual(bound)
  })

  test('the default is 100', async () => {
    const server = await serve({ limits: {} })
    const alice = await new Browser(server).signIn('alice')
    const room = 100 - (await seeded(server))
    for (let i = 0; i < room; i++) expect((await alice.create(fresh())).status).toBe(200)
    const refused = await alice.create(fresh())
    expect(refused.status).toBe(400)
    expect(refused.body).toContain('you have 100 live tokens, and one account may hold at most 100')
  }, 60_000)
})

describe('--ipv6-prefix and the last-used network', () => {
  test.each([
    [undefined, '2001:db8:7:2ab::/64'],
    [48, '2001:db8:7::/48'],
  ])('--ipv6-prefix %s: a token used from 2001:db8:7:2ab::5 shows %s', async (ipv6Prefix, network) => {
    const server = await serve(ipv6Prefix === undefined ? {} : { ipv6Prefix })
    const alice = await new Browser(server).signIn('alice')
    const name = fresh()
    const value = tokenValueOf((await alice.create(name)).body)!
    const response = await fetch(`${server.url}/api/v1/datasets/acme/claims/metadata`, {
      headers: { authorization: `Bearer ${value}`, ...from('2001:db8:7:2ab::5') },
    })
    expect(response.status).toBe(200)
    const token = (await tokensOf(server, 'alice')).find((each) => each.name === name)
    await expect
      .poll(async () => (await server.app.tokens.findById(token!.id))?.lastUsedFrom, { timeout: 10_000 })
      .toBe(network)
    expect((await alice.get('/settings/tokens')).body).toContain(network)
  })
})

describe('the create form’s date field', () => {
  const dateInput = (page: string) => /<input type="date"[^>]*>/.exec(page)?.[0] ?? ''

  test('its max is the last date within --max-token-lifetime, its min the first in the future', async () => {
    const now = Date.parse('2026-11-28T22:00:00Z')
    const capped = await serve({ maxTokenLifetimeDays: 90, now: () => now })
    const open = await serve({ now: () => now })
    const cappedPage = (await (await new Browser(capped).signIn('alice')).get('/settings/tokens')).body
    expect(dateInput(cappedPage)).toContain('min="2026-11-29" max="2027-02-26"')
    const openPage = (await (await new Browser(open).signIn('alice')).get('/settings/tokens')).body
    expect(dateInput(openPage)).toContain('min="2026-11-29"')
    expect(dateInput(openPage)).not.toContain('max=')
  })

  // The bounds the form offers are exactly the dates the server accepts.
  test.each([
    ['2026-11-28T22:00:00Z', 90],
    ['2026-11-28T00:00:00Z', 1],
    ['2026-11-28T23:59:59Z', 7],
    ['2024-02-28T12:00:00Z', 365],
  ])('at %s under a %i-day cap, max is accepted and the day after refused', (at, cap) => {
    const now = Date.parse(at)
    const { min, max } = expiryDateBounds(now, cap)
    const read = (date: string) =>
      readNewToken(
        new URLSearchParams({ name: 'n', scopes: 'public', lifetime: 'date', expiresAt: date }),
        [],
        now,
        cap,
      ).ok
    const dayAfter = (date: string, days: number) =>
      new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)
    expect(read(max!)).toBe(true)
    expect(read(dayAfter(max!, 1))).toBe(false)
    expect(read(min)).toBe(true)
    expect(read(dayAfter(min, -1))).toBe(false)
  })
})
