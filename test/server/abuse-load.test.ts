/**
 * The reference server under load from one client, measured on a server process of its
 * own (scripts/server-process.ts): device authorizations from a thousand addresses leave memory
 * bounded once the cap on grants is reached, and under a flood of password checks from one IPv6 /64,
 * each from an address of its own, a real sign-in from another network waits for a few of them, not
 * for the flood, on every framework (the fair queue takes turns per network).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { DEFAULT_ABUSE_LIMITS } from '../../examples/server/limits/abuse-limits.js'
import { DEMO_CLIENTS } from '../../examples/server/seed/demo-oauth.js'
import { type ServerProcess, startServerProcess } from '../../scripts/server-process.js'
import { pkcePair } from './oauth-fixtures.js'
import { FLOOD, from, median, signInForm, startFlood } from './password-flood.js'

const MB = 1024 * 1024

// Runs `count` tasks, `concurrency` at a time.
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++)
    }),
  )
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

// Sign-ins under the flood; the median of what each saw is judged (odd: one middle value).
const SAMPLES = 7

describe.each(FRAMEWORKS)('%s: password checks flooded from rotating addresses of one /64', (framework) => {
  let server: ServerProcess

  beforeAll(async () => {
    server = await startServerProcess(['--port', '0', '--trust-proxy', 'loopback', '--framework', framework])
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  // Counted, not timed: how many flood checks end while a sign-in is answered does not depend on
  // the machine's speed (the timing claim is abuse-load.timing.test.ts, in the loaded tier).
  test('a real sign-in from another network waits for a few flood checks, not for the flood', {
    timeout: 120_000,
  }, async () => {
    const flood = await startFlood(server)
    try {
      const meanwhile: number[] = []
      for (let i = 0; i < SAMPLES; i++) {
        const post = await signInForm(server, `198.51.100.${i + 1}`)
        const before = flood.answered()
        await post()
        meanwhile.push(flood.answered() - before)
      }
      // Queued per network, the sign-in waits for one running check, then runs beside the other
      // slot's: a few flood answers. Queued per address, it would wait behind the address of every
      // flood request that came before it: about FLOOD.
      expect(median(meanwhile)).toBeLessThan(FLOOD / 2)
    } finally {
      await flood.stop()
    }
  })
})
