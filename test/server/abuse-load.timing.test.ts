/**
 * The timing claim behind the fair queue of password checks, made only by the loaded tier
 * (`npm run test:loaded`, or `npm run test:timing` alone), never by the default suite: a real
 * sign-in from another network, timed while one IPv6 /64 floods the server with checks from
 * rotating addresses, is slowed less than 3× on every framework. Queued per address instead, it
 * would be about FLOOD / 2 times slower. The suite asserts the queue's order and counts instead
 * (hash-queue.test.ts, abuse-load.test.ts), which hold however busy the machine is.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS } from '../../examples/server/flags.js'
import { type ServerProcess, startServerProcess } from '../../scripts/server-process.js'
import { median, signInForm, startFlood } from './password-flood.js'

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

  async function timedSignIn(address: string): Promise<number> {
    const post = await signInForm(server, address)
    const started = performance.now()
    await post()
    return performance.now() - started
  }

  test('a real sign-in from another network is slowed less than 3×', { timeout: 120_000 }, async () => {
    const alone: number[] = []
    for (let i = 0; i < SAMPLES; i++) alone.push(await timedSignIn(`192.0.2.${i + 1}`))
    const flood = await startFlood(server)
    try {
      const flooded: number[] = []
      for (let i = 0; i < SAMPLES; i++) flooded.push(await timedSignIn(`198.51.100.${i + 1}`))
      expect(median(flooded)).toBeLessThan(3 * median(alone))
    } finally {
      await flood.stop()
    }
  })
})
