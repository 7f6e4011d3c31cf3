import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { generateTokenValue } from '../../src/tokens/token-format.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { children, type Instance, startInstance, stopInstance } from './server-instances.js'
import { csrfOf, WebClient } from './web-client.js'

// A reference server on Redis whose process is stopped (SIGSTOP) for longer than the Redis command
// deadline in the middle of a burst: the replies Redis sent meanwhile wait in the sockets, and the
// deadlines have all passed when the process resumes. Every answer must still be a real one (or a
// 503), never a 500: an answer that has arrived is never thrown away.

const SECOND = 1000
const PASSWORD = 'alice-password-for-stall-tests'
// Longer than the 500 ms command deadline, with room for the resumed process to catch up.
const STOP_MS = 700
const REQUESTS = 600
const CONCURRENCY = 48
const FRAMEWORKS = ['express', 'fastify', 'hono'] as const

const directory = mkdtempSync(join(tmpdir(), 'dap-redis-stall-'))
const TOKEN = generateTokenValue('api')
const SEED = {
  users: [{ handle: 'alice', password: PASSWORD }],
  organizations: [],
  datasets: [{ owner: 'alice', name: 'notes', publicLevel: 'none' }],
  clients: [{ id: 'cli', redirectUris: ['http://127.0.0.1:8765/cb'] }],
  tokens: [{ user: 'alice', name: 'ci', scopes: ['data.overview'], value: TOKEN }],
}
const DATASET = '/api/v1/datasets/alice/notes'

let redis: RedisServer
const instances = new Map<string, Instance>()

beforeAll(async () => {
  redis = await startRedisServer()
  const seed = join(directory, 'seed.json')
  writeFileSync(seed, JSON.stringify(SEED))
  const started = await Promise.all(
    FRAMEWORKS.map((framework) =>
      startInstance(['--seed', seed, '--store', redis.url, '--port', '0', '--framework', framework]),
    ),
  )
  for (const [i, framework] of FRAMEWORKS.entries()) instances.set(framework, started[i]!)
}, 60 * SECOND)

afterAll(async () => {
  await Promise.all([...children].map(stopInstance))
  await redis?.stop()
  rmSync(directory, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A signed-in browser: its cookies and the CSRF token of the device page's form. */
async function browser(instance: Instance): Promise<{ cookie: string; csrf: string }> {
  const client = new WebClient(instance.port)
  const form = await client.get('/signin')
  const signedIn = await client.post('/signin', {
    handle: 'alice',
    password: PASSWORD,
    csrf_token: csrfOf(form.body),
  })
  expect(signedIn.status).toBe(303)
  const device = await client.get('/device')
  expect(device.status).toBe(200)
  return { cookie: client.cookieHeader(), csrf: csrfOf(device.body, '/device') }
}

describe.each(FRAMEWORKS)(
  '%s on Redis, stopped for longer than the command deadline during a burst',
  (framework) => {
    test(
      'answers every request of the burst below 500',
      async () => {
        const instance = instances.get(framework)!
        const { cookie, csrf } = await browser(instance)
        // Each kind of request reaches Redis: a user-code entry (session, rate limit, OAuth state), the
        // settings page (session, token listing), an API request with an unknown token (a lookup the
        // cache cannot answer) and one with the seed's token.
        const kinds: (() => Promise<Response>)[] = [
          () =>
            fetch(`${instance.url}/device`, {
              method: 'POST',
              headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ user_code: 'BCDF-GHJK', csrf_token: csrf }).toString(),
              redirect: 'manual',
            }),
          () => fetch(`${instance.url}/settings/tokens`, { headers: { cookie }, redirect: 'manual' }),
          () =>
            fetch(`${instance.url}${DATASET}`, {
              headers: { authorization: `Bearer ${generateTokenValue('api')}` },
            }),
          () => fetch(`${instance.url}${DATASET}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
        ]
        const statuses: number[] = []
        let next = 0
        let inFlight = 0
        const worker = async () => {
          while (next < REQUESTS) {
            const send = kinds[next++ % kinds.length]!
            inFlight++
            try {
              const response = await send()
              await response.arrayBuffer()
              statuses.push(response.status)
            } finally {
              inFlight--
            }
          }
        }
        const burst = Promise.all(Array.from({ length: CONCURRENCY }, worker))
        // Stop the server once the burst is well under way, with requests in flight.
        while (statuses.length < REQUESTS / 4) await sleep(5)
        const inFlightAtStop = inFlight
        instance.child.kill('SIGSTOP')
        await sleep(STOP_MS)
        instance.child.kill('SIGCONT')
        await burst

        expect(inFlightAtStop).toBeGreaterThan(0)
        expect(statuses).toHaveLength(REQUESTS)
        const failures = statuses.filter((status) => status >= 500)
        expect(failures).toEqual([])
        // The server kept answering for real: the valid token, the settings page, the entries.
        expect(statuses).toContain(200)
        expect(instance.child.exitCode).toBeNull()
      },
      120 * SECOND,
    )
  },
)

describe.each(FRAMEWORKS)('%s on Redis, with Redis not answering', (framework) => {
  test(
    'answers 503 on every page and endpoint that needs the store, reports why, and recovers',
    async () => {
      const instance = instances.get(framework)!
      const { cookie, csrf } = await browser(instance)
      const form = { 'content-type': 'application/x-www-form-urlencoded' }
      const requests: [string, () => Promise<Response>, string][] = [
        [
          'the settings page',
          () => fetch(`${instance.url}/settings/tokens`, { headers: { cookie } }),
          'text/html',
        ],
        [
          'a user-code entry',
          () =>
            fetch(`${instance.url}/device`, {
              method: 'POST',
              headers: { cookie, ...form },
              body: new URLSearchParams({ user_code: 'BCDF-GHJK', csrf_token: csrf }).toString(),
            }),
          'text/html',
        ],
        [
          'an API request',
          () =>
            fetch(`${instance.url}${DATASET}`, {
              headers: { authorization: `Bearer ${generateTokenValue('api')}` },
            }),
          'application/json',
        ],
        [
          'a token request',
          () =>
            fetch(`${instance.url}/oauth/token`, {
              method: 'POST',
              headers: form,
              body: 'grant_type=refresh_token&refresh_token=x&client_id=cli',
            }),
          'application/json',
        ],
        [
          'a device authorization',
          () =>
            fetch(`${instance.url}/oauth/device_authorization`, {
              method: 'POST',
              headers: form,
              body: 'client_id=cli',
            }),
          'application/json',
        ],
      ]
      const before = instance.output().length
      redis.pause()
      let answers: { what: string; status: number; type: string | null; expected: string }[]
      try {
        answers = await Promise.all(
          requests.map(async ([what, send, expected]) => {
            const response = await send()
            await response.arrayBuffer()
            return { what, status: response.status, type: response.headers.get('content-type'), expected }
          }),
        )
      } finally {
        redis.resume()
      }
      for (const { what, status, type, expected } of answers) {
        expect({ what, status }).toEqual({ what, status: 503 })
        expect(type).toContain(expected)
      }
      // Each cause reaches the server's error hook (stderr), named by its route.
      const reported = instance.output().slice(before)
      expect(reported).toContain('GET /settings/tokens:')
      expect(reported).toContain('POST /device:')
      // Redis back: the same page answers again, without a restart.
      const again = await fetch(`${instance.url}/settings/tokens`, { headers: { cookie } })
      await again.arrayBuffer()
      expect(again.status).toBe(200)
    },
    60 * SECOND,
  )
})
