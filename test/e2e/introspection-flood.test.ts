/**
 * A resource server on `IntrospectionTokenStore` cannot be turned against its issuer: a Hono app on
 * Node HTTP (127.0.0.1, trusting the loopback proxy for X-Forwarded-For) faces 3,000 requests with
 * made-up, well-formed tokens from ten networks of one /24, while a legitimate user's token keeps
 * answering 200. The reference server is the issuer. The store passes on a bounded number of
 * introspection calls (the /24's miss budget, plus what refills meanwhile), each answered 200 by the
 * issuer, whose budgets for this resource server are left with room: a new user's token, from a
 * network that never showed one, still works afterwards.
 */
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { Hono } from 'hono'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type AccessEnv, accessControl } from '../../adapters/hono/index.js'
import { DEFAULT_ABUSE_LIMITS } from '../../examples/server/limits/abuse-limits.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { createAccessPolicy, deny } from '../../src/index.js'
import { IntrospectionTokenStore } from '../../src/introspection/index.js'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { listening } from '../adapters/listen.js'
import {
  OAUTH_SEED,
  postForm,
  REPORTS_RESOURCE,
  RS_SECRET,
  tokensThroughPages,
} from '../server/oauth-fixtures.js'

const FLOOD = 3000
const NETWORKS = 10
const PARALLEL = 100
// A bound for a hang: 3,000 HTTP requests take a while on a busy machine.
const FLOOD_TIMEOUT_MS = 300_000
// The store's defaults, which this test relies on being the documented ones.
const MISSES_TOTAL = 300
const MISSES_PER_BLOCK = 120
const MISS_WINDOW_MS = 60_000

let issuer: StartedServer
let remote: { url: string; close(): Promise<void> }
const calls: number[] = []
const errors: unknown[] = []

beforeAll(async () => {
  issuer = await startServer({ seed: await loadSeed(OAUTH_SEED), host: '127.0.0.1', port: 0 })
  // What the issuer sees: every introspection call the store makes, with the status it got.
  const counting = (async (input: string, init: RequestInit) => {
    const response = await fetch(input, init)
    calls.push(response.status)
    return response
  }) as unknown as typeof fetch
  const policy = createAccessPolicy({
    tokens: new IntrospectionTokenStore({
      endpoint: `${issuer.url}/oauth/introspect`,
      clientId: 'rs',
      clientSecret: RS_SECRET,
      fetch: counting,
    }),
    // The tokens name the resource they are for (RFC 8707): this server is the seed's reports one.
    resource: REPORTS_RESOURCE,
    onError: (error) => errors.push(error),
  })
  const app = new Hono<AccessEnv>()
  const access = accessControl({ policy, getConnInfo, trustProxy: 'loopback' })
  app.get('/reports/:name', access.authenticate, (c) => c.json({ reader: c.get('principal').userId }))
  app.notFound((c) => access.sendDenial(c, deny('not_found')))
  const { port, close } = await listening(
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server,
  )
  remote = { url: `http://127.0.0.1:${port}`, close }
})

afterAll(async () => {
  await remote?.close()
  await issuer?.close()
})

async function get(token: string, network: string): Promise<number> {
  const response = await fetch(`${remote.url}/reports/weekly`, {
    headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': network, 'x-forwarded-proto': 'https' },
  })
  await response.arrayBuffer()
  if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0)
  return response.status
}

test(
  '3,000 made-up tokens from ten networks: the user keeps 200, the issuer sees a bounded number of calls',
  async () => {
    const user = (await tokensThroughPages(issuer.url, 'data.metadata', [REPORTS_RESOURCE])).access_token
    expect(await get(user, '198.51.100.7')).toBe(200)
    const started = Date.now()
    const junk: Record<number, number> = {}
    const users: number[] = []
    for (let sent = 0; sent < FLOOD; sent += PARALLEL) {
      const batch = Array.from({ length: PARALLEL }, (_, i) =>
        get(generateTokenValue(i % 2 === 0 ? 'api' : 'oauth'), `203.0.113.${((sent + i) % NETWORKS) + 1}`),
      )
      const [statuses, userStatus] = await Promise.all([Promise.all(batch), get(user, '198.51.100.7')])
      for (const status of statuses) junk[status] = (junk[status] ?? 0) + 1
      users.push(userStatus)
    }
    const elapsed = Date.now() - started
    // The user: 200 throughout.
    expect(users.every((status) => status === 200)).toBe(true)
    // The flood: refused, mostly without a call (429), never a 503 or a 200.
    expect(Object.keys(junk).sort()).toEqual(['401', '429'])
    expect(junk[401]! + junk[429]!).toBe(FLOOD)
    // The issuer: the total miss budget, what it refilled meanwhile, and the user's token and its
    // revalidations (one per cache TTL of 5 s), at most.
    const refilled = Math.ceil((elapsed * MISSES_TOTAL) / MISS_WINDOW_MS)
    const userCalls = 1 + Math.ceil(elapsed / 5000)
    expect(calls.length).toBeLessThanOrEqual(MISSES_TOTAL + refilled + userCalls)
    // The flood's ten addresses share a /24, which bounds them together.
    const blockRefilled = Math.ceil((elapsed * MISSES_PER_BLOCK) / MISS_WINDOW_MS)
    expect(junk[401]).toBeLessThanOrEqual(MISSES_PER_BLOCK + blockRefilled)
    // Every call was answered: the issuer never rate-limited this resource server.
    expect(calls.every((status) => status === 200)).toBe(true)
    expect(calls.length).toBeLessThan(DEFAULT_ABUSE_LIMITS.introspectionInactive.max)
    expect(errors).toEqual([])
    // A new user, from a network that sent no junk and never showed a token: the flood spent its
    // /24's budget, not the total.
    const newcomer = (await tokensThroughPages(issuer.url, 'data.metadata', [REPORTS_RESOURCE])).access_token
    expect(await get(newcomer, '192.0.2.44')).toBe(200)
    // And the issuer still answers this resource server for its real users' tokens.
    const asked = await postForm(
      `${issuer.url}/oauth/introspect`,
      { token: user },
      { authorization: `Basic ${btoa(`rs:${RS_SECRET}`)}` },
    )
    expect(asked).toMatchObject({ status: 200, body: { active: true } })
  },
  FLOOD_TIMEOUT_MS,
)
