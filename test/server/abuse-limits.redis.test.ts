/**
 * The reference server under abuse (issue 17), over real HTTP, on every framework and on both
 * stores: per-address limits answered 429 with `Retry-After` in each endpoint's own shape, counted
 * atomically before the work they guard (a parallel burst gets no more than the limit), sign-in
 * throttling that never locks the right password out from another address, the cap on device
 * grants, and refresh-token reuse detected however many rotations ago. Client addresses come from
 * `X-Forwarded-For`, which the servers trust from loopback (`--trust-proxy loopback`).
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type StoreOption } from '../../examples/server/flags.js'
import type { AbuseLimits } from '../../examples/server/limits/abuse-limits.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { PageAgent } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  BOB_PASSWORD,
  callApi,
  oauthSeed,
  pkcePair,
  postForm,
} from './oauth-fixtures.js'
import { csrfOf, WebClient } from './web-client.js'

const LIMITS: Partial<AbuseLimits> = {
  deviceAuthorization: { max: 3, windowMs: 60_000 },
  deviceGrants: { max: 10, windowMs: 60_000 },
  userCodeEntry: { max: 20, windowMs: 60_000 },
  signIn: { max: 8, windowMs: 60_000 },
}

const DEVICE_PARAMS = {
  client_id: 'web',
  scope: 'data.metadata',
  code_challenge: pkcePair().challenge,
  code_challenge_method: 'S256',
}

let redis: RedisServer

beforeAll(async () => {
  redis = await startRedisServer()
}, 30_000)

afterAll(async () => {
  await redis?.stop()
})

// Every test speaks from addresses of its own, so that counts shared on Redis never mix.
let lastAddress = 0
function nextAddress(): string {
  lastAddress++
  return `198.51.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`
}
// Through the trusted proxy, which terminates TLS: the pages and OAuth endpoints need HTTPS.
const from = (address: string) => ({ 'x-forwarded-for': address, 'x-forwarded-proto': 'https' })

const STORES: readonly (readonly [string, () => StoreOption])[] = [
  ['memory', () => ({ kind: 'memory' })],
  ['redis', () => ({ kind: 'redis', url: redis.url })],
]

const CASES = STORES.flatMap(([store, option]) =>
  FRAMEWORKS.map((framework) => [store, framework, option] as const),
)

describe.each(CASES)('%s store, %s', (store, framework, option) => {
  let server: StartedServer
  // Device grants this server has started so far, towards the cap of ten.
  let grants = 0

  beforeAll(async () => {
    if (store === 'redis') {
      // The cap on device grants counts everyone together: each server starts from zero.
      const client = new Redis(redis.url)
      await client.flushall()
      client.disconnect()
    }
    server = await startServer({
      seed: await oauthSeed(),
      framework,
      port: 0,
      trustProxy: ['loopback'],
      store: option(),
      limits: LIMITS,
    })
  }, 30_000)

  afterAll(async () => {
    await server?.close()
  })

  async function signInFrom(address: string, handle: string, password: string) {
    const client = new WebClient(server.port)
    const form = await client.get('/signin', { headers: from(address) })
    return client.post(
      '/signin',
      { handle, password, csrf_token: csrfOf(form.body) },
      { headers: from(address) },
    )
  }

  test('sign-in: failures lock one (handle, address) pair; the right password still works from elsewhere', async () => {
    const attacker = nextAddress()
    for (let i = 0; i < 5; i++) expect((await signInFrom(attacker, 'alice', 'wrong')).status).toBe(401)
    const locked = await signInFrom(attacker, 'alice', 'wrong')
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    expect(locked.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(locked.body).toContain('Too many sign-in attempts from this network.')
    // The pair stays locked even for the right password; from another address alice signs in.
    expect((await signInFrom(attacker, 'alice', ALICE_PASSWORD)).status).toBe(429)
    expect((await signInFrom(nextAddress(), 'alice', ALICE_PASSWORD)).status).toBe(303)
  })

  test('sign-in: an address is limited whatever handles it tries', async () => {
    const address = nextAddress()
    for (let i = 0; i < 8; i++) expect((await signInFrom(address, `user${i}`, 'wrong')).status).toBe(401)
    const limited = await signInFrom(address, 'bob', BOB_PASSWORD)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await signInFrom(nextAddress(), 'bob', BOB_PASSWORD)).status).toBe(303)
  })

  test('user codes: a parallel burst from one address has no more codes checked than the limit', async () => {
    const started = await postForm(
      `${server.url}/oauth/device_authorization`,
      DEVICE_PARAMS,
      from(nextAddress()),
    )
    expect(started.status).toBe(200)
    grants++
    const right = started.body.user_code as string
    const burst = nextAddress()
    // Fresh browsers (new cookies) each time: only the address ties the entries together.
    const browsers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const client = new WebClient(server.port)
        const page = await client.get('/device', { headers: from(burst) })
        return { client, csrf: csrfOf(page.body) }
      }),
    )
    const answers = await Promise.all(
      browsers.map(({ client, csrf }, i) =>
        client.post(
          '/device',
          {
            csrf_token: csrf,
            user_code: i === browsers.length - 1 ? right : `BCDF-${'GHJKLMNP'[i % 8]!.repeat(4)}`,
          },
          { headers: from(burst) },
        ),
      ),
    )
    const checked = answers.filter((answer) => answer.status !== 429)
    expect(checked.length).toBe(20)
    for (const answer of answers.filter((each) => each.status === 429)) {
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
      expect(answer.body).toContain('Too many codes were entered from this network.')
    }
    // The right code from another address is still accepted: the limit is the address's alone.
    const user = new WebClient(server.port)
    const page = await user.get('/device', { headers: from(nextAddress()) })
    const entered = await user.post(
      '/device',
      { csrf_token: csrfOf(page.body), user_code: right },
      { headers: from(nextAddress()) },
    )
    expect(entered.status).toBe(200)
    expect(entered.body).toContain('name="password"')
  })

  test('device authorization: per address, then a cap on grants from every address together', async () => {
    const url = `${server.url}/oauth/device_authorization`
    const params = DEVICE_PARAMS
    const address = nextAddress()
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await postForm(url, params, from(address)))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429])
    const limited = answers[3]!
    expect(limited.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'too many requests from this network; try again later',
    })
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('cache-control')).toBe('no-store')
    // More grants from other addresses reach the cap of ten; every address is then refused.
    const left = 10 - grants - 3
    const others = []
    for (let i = 0; i < 12; i++) others.push(await postForm(url, params, from(nextAddress())))
    expect(others.map((answer) => answer.status)).toEqual([
      ...Array(left).fill(200),
      ...Array(12 - left).fill(429),
    ])
    expect(others[11]!.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'too many device authorizations are pending on this server; try again later',
    })
    expect(Number(others[11]!.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test('refresh tokens: replaying one rotated out 70 refreshes ago revokes the family', async () => {
    const { verifier, challenge } = pkcePair()
    const agent = new PageAgent(server.url)
    const { callback } = await authorizeThroughPages(
      agent,
      authorizeUrl(server.url, {
        response_type: 'code',
        client_id: 'native',
        redirect_uri: 'http://[::1]/done',
        scope: 'data.metadata',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      { handle: 'alice', password: ALICE_PASSWORD },
    )
    const tokenUrl = `${server.url}/oauth/token`
    const first = await postForm(tokenUrl, {
      grant_type: 'authorization_code',
      client_id: 'native',
      code: callback.searchParams.get('code')!,
      redirect_uri: 'http://[::1]/done',
      code_verifier: verifier,
    })
    expect(first.status).toBe(200)
    const oldest = first.body.refresh_token as string
    let current = oldest
    let access = first.body.access_token as string
    for (let i = 0; i < 70; i++) {
      const next = await postForm(tokenUrl, {
        grant_type: 'refresh_token',
        client_id: 'native',
        refresh_token: current,
      })
      expect(next.status).toBe(200)
      current = next.body.refresh_token as string
      access = next.body.access_token as string
    }
    expect(await callApi(server.url, '/api/v1/users/alice/datasets', access)).toBe(200)
    const replay = await postForm(tokenUrl, {
      grant_type: 'refresh_token',
      client_id: 'native',
      refresh_token: oldest,
    })
    expect(replay).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'the refresh token was already used; its family is revoked',
      },
    })
    expect(await callApi(server.url, '/api/v1/users/alice/datasets', access)).toBe(401)
    const latest = await postForm(tokenUrl, {
      grant_type: 'refresh_token',
      client_id: 'native',
      refresh_token: current,
    })
    expect(latest.body).toEqual({
      error: 'invalid_grant',
      error_description: 'the refresh token was revoked',
    })
  })

  test('a malformed content type on the form pages is the page answer, never a 500', async () => {
    for (const contentType of ['', ';;;', 'a/b/c', 'text/pl\u00e9in']) {
      for (const path of ['/signin', '/device']) {
        const client = new WebClient(server.port)
        const answer = await client.send('POST', path, 'handle=alice&password=x', {
          headers: { 'content-type': contentType, ...from(nextAddress()) },
        })
        expect({ path, contentType, status: answer.status }).toEqual({ path, contentType, status: 403 })
        expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
      }
    }
  })
})
