/**
 * A flood of password checks against a reference server process, and real sign-ins beside it:
 * shared by the suite's check of the queue's fairness (abuse-load.test.ts, counts) and the timing
 * claim that only the loaded tier makes (abuse-load.timing.test.ts).
 */
import { expect } from 'vitest'
import { DEMO_CLIENTS } from '../../examples/server/seed/demo-oauth.js'
import type { ServerProcess } from '../../scripts/server-process.js'
import { csrfOf, WebClient } from './web-client.js'

/** Headers of a request through the trusted proxy, which terminates TLS and names the client. */
export const from = (address: string) => ({ 'x-forwarded-for': address, 'x-forwarded-proto': 'https' })

/**
 * Enough concurrent checks to tell one queue per address from one per network, few enough that the
 * flood drains quickly once it stops.
 */
export const FLOOD = 16

/** A running flood: how many of its requests the server has answered so far. */
export interface Flood {
  readonly answered: () => number
  readonly stop: () => Promise<void>
}

/**
 * Starts FLOOD requests at all times naming the confidential client with a wrong secret: one scrypt
 * each, each from a new address of 2001:db8:66:1::/64, as one IPv6 customer can send them. Resolves
 * once the server has answered FLOOD of them, so the flood is under way.
 *
 * @example
 * const flood = await startFlood(server)
 * await flood.stop()
 */
export async function startFlood(server: ServerProcess): Promise<Flood> {
  let flooding = true
  let answered = 0
  let sent = 0
  const secret = Buffer.from(`${DEMO_CLIENTS[1].id}:wrong-secret`).toString('base64')
  const requests = Promise.all(
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
        expect(response.status).toBe(401)
        answered++
      }
    }),
  )
  const stop = async () => {
    flooding = false
    await requests
  }
  while (answered < FLOOD) {
    // A failed request ends the wait with its error rather than a hang.
    await Promise.race([requests, new Promise((resolve) => setTimeout(resolve, 20))])
  }
  return { answered: () => answered, stop }
}

/**
 * One real sign-in from its own address: loads the form, and returns the post of it (answered 303),
 * so that a test can observe the post alone.
 *
 * @example
 * const post = await signInForm(server, '192.0.2.1')
 * await post()
 */
export async function signInForm(server: ServerProcess, address: string): Promise<() => Promise<void>> {
  const client = new WebClient(server.port)
  const form = await client.get('/signin', { headers: from(address) })
  return async () => {
    const answer = await client.post(
      '/signin',
      { handle: 'alice', password: 'alice-demo-password', csrf_token: csrfOf(form.body) },
      { headers: from(address) },
    )
    expect(answer.status).toBe(303)
  }
}

/**
 * The middle value of an odd number of samples.
 *
 * @example
 * median([3, 1, 2]) // 2
 */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
