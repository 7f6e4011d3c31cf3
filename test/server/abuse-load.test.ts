/**
 * The reference server under load from one client (issue 17), measured on a server process of its
 * own (scripts/server-process.ts): device authorizations from a thousand addresses leave memory
 * bounded once the cap on grants is reached, and a flood of password checks from one IPv6 /64, each
 * from an address of its own, slows a real sign-in from another network by less than 3× on every
 * framework (the fair queue takes turns per network, issue 27).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { DEFAULT_ABUSE_LIMITS } from '../../examples/server/limits/abuse-limits.js'
import { DEMO_CLIENTS } from '../../examples/server/seed/demo-oauth.js'
import { type ServerProcess, startServerProcess } from '../../scripts/server-process.js'
import { pkcePair } from './oauth-fixtures.js'
import { csrfOf, WebClient } from './web-client.js'

const MB = 1024 * 1024
// Through the trusted proxy, which terminates TLS and names the client.
const from = (address: string) => ({ 'x-forwarded-for': address, 'x-forwarded-proto': 'https' })

// Runs `count` tasks, `concurrency` at a time.
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++)
    }),
  )
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

describe('device authorizations from many addresses', () => {
  let server: ServerProcess

  beforeAll(async () => {
    // A small young generation: the heap then grows and shrinks by less between samples.
    server = await startServerProcess(
      ['--port', '0', '--trust-proxy', 'loopback'],
      // A bounded old space: a leak past the cap would crash the server, and garbage is collected
      // before it can raise the RSS floor the test judges.
      ['--max-semi-space-size=1', '--max-old-space-size=64'],
    )
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  test('past the cap on grants, memory stops growing', { timeout: 300_000 }, async () => {
    const cap = DEFAULT_ABUSE_LIMITS.deviceGrants.max
    const perAddress = DEFAULT_ABUSE_LIMITS.deviceAuthorization.max
    const body = new URLSearchParams({
      client_id: DEMO_CLIENTS[0].id,
      scope: 'data.metadata',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }).toString()
    const statuses = new Map<number, number>()
    // Each address stays within its own limit: only the cap can stop them.
    const send = async (i: number) => {
      const address = `10.${Math.floor(i / perAddress / 250)}.${Math.floor(i / perAddress) % 250}.1`
      const response = await fetch(`${server.url}/oauth/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...from(address) },
        body,
      })
      await response.arrayBuffer()
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    }
    // RSS moves by tens of MB as the heap is collected, so each phase is judged by its floor: the
    // lowest of samples taken every 2,000 requests, which a leak raises and garbage does not.
    let sent = 0
    const phase = async (requests: number): Promise<number[]> => {
      const samples: number[] = []
      for (const end = sent + requests; sent < end; ) {
        const first = sent
        await pool(2000, 16, (i) => send(first + i))
        sent += 2000
        samples.push(server.rss())
      }
      return samples
    }
    // Warm-up: the cap is reached, and the heap grows to its working size.
    const warmSamples = await phase(cap + 8000)
    const warm = Math.min(...warmSamples.slice(-3))
    // Twenty thousand more from new addresses: without the cap, about 90 MB more of grants.
    const afterSamples = await phase(20_000)
    const after = Math.min(...afterSamples.slice(-5))
    expect((after - warm) / MB).toBeLessThan(30)
    expect(Object.fromEntries(statuses)).toEqual({ 200: cap, 429: sent - cap })
  })
})

// Enough concurrent checks to tell one queue per address from one per network, few enough that the
// flood drains quickly once it stops.
const FLOOD = 16
// Sign-ins timed alone and under the flood; their medians are compared (odd: one middle value).
const SAMPLES = 7

describe.each(FRAMEWORKS)('%s: password checks flooded from rotating addresses of one /64', (framework) => {
  let server: ServerProcess

  beforeAll(async () => {
    server = await startServerProcess(['--port', '0', '--trust-proxy', 'loopback', '--framework', framework])
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  // One real sign-in from its own address: the form, then the timed post.
  async function timedSignIn(address: string): Promise<number> {
    const client = new WebClient(server.port)
    const form = await client.get('/signin', { headers: from(address) })
    const started = performance.now()
    const answer = await client.post(
      '/signin',
      { handle: 'alice', password: 'alice-demo-password', csrf_token: csrfOf(form.body) },
      { headers: from(address) },
    )
    const elapsed = performance.now() - started
    expect(answer.status).toBe(303)
    return elapsed
  }

  test('a real sign-in from another network is slowed less than 3×', { timeout: 120_000 }, async () => {
    const alone: number[] = []
    for (let i = 0; i < SAMPLES; i++) alone.push(await timedSignIn(`192.0.2.${i + 1}`))

    // FLOOD requests at all times naming the confidential client with a wrong secret: one scrypt
    // each, each from a new address of 2001:db8:66:1::/64, as one IPv6 customer can send them.
    // Queued per address, a sign-in would wait for about FLOOD / 2 checks (8×); per network, one.
    let flooding = true
    let answered = 0
    let sent = 0
    const secret = Buffer.from(`${DEMO_CLIENTS[1].id}:wrong-secret`).toString('base64')
    const flood = Promise.all(
      Array.from({ length: FLOOD }, async () => {
        while (flooding) {
          const response = await fetch(`${server.url}/oauth/token`, {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              authorization: `Basic ${secret}`,
              ...from(`2001:db8:66:1:${(sent++).toString(16)}::1`),
            },
            body: 'grant_type=refresh_token&refresh_token=x',
          })
          await response.arrayBuffer()
          answered++
        }
      }),
    )
    try {
      // The flood is under way once the server has answered some of it.
      while (answered < FLOOD) await new Promise((resolve) => setTimeout(resolve, 20))
      const flooded: number[] = []
      for (let i = 0; i < SAMPLES; i++) flooded.push(await timedSignIn(`198.51.100.${i + 1}`))
      expect(median(flooded)).toBeLessThan(3 * median(alone))
    } finally {
      flooding = false
      await flood
    }
  })
})
