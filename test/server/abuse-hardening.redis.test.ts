/**
 * The reference server's limits as an attacker tries them (issue 27), over real HTTP on every
 * framework and on both stores: a network already refused creates no key, and a full table never
 * resets anyone's count (3, 9); IPv6 clients counted per /64 and IPv4-mapped addresses as IPv4, a
 * per-account sign-in limit that spares a browser holding the account's device cookie (4); a cap
 * on device grants that invalid requests do not spend (5); consent pages bounded per user and
 * answerable on any instance of a shared store (8); `Retry-After` on every 429 (12). Client
 * addresses come from `X-Forwarded-For`, trusted from loopback.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type StoreOption } from '../../examples/server/flags.js'
import type { AbuseLimits } from '../../examples/server/limits/abuse-limits.js'
import { MemoryRateLimitStore } from '../../examples/server/limits/rate-limits.js'
import { RedisRateLimitStore } from '../../examples/server/limits/redis-rate-limits.js'
import {
  MAX_PENDING_CONSENTS_PER_GRANT,
  MAX_PENDING_CONSENTS_PER_OWNER,
  MemoryPendingConsents,
} from '../../examples/server/oauth/pending-consents.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { DEVICE_COOKIE } from '../../examples/server/web/device-cookies.js'
import { type RedisClusterServers, startRedisCluster } from '../adapters/redis/redis-cluster.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'
import { formWith, PageAgent, type PageForm, type PageResponse, signInThrough } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeUrl,
  BOB_PASSWORD,
  CLI_REDIRECT,
  oauthSeed,
  pkcePair,
  postForm,
  RFC_CHALLENGE,
  testClock,
} from './oauth-fixtures.js'
import { csrfOf, WebClient, type WebResponse } from './web-client.js'

const LIMITS: Partial<AbuseLimits> = {
  deviceAuthorization: { max: 3, windowMs: 60_000 },
  deviceGrants: { max: 4, windowMs: 60_000 },
  token: { max: 5, windowMs: 60_000 },
  userCodeEntry: { max: 8, windowMs: 60_000 },
  signIn: { max: 6, windowMs: 60_000 },
  signInHandle: { max: 3, windowMs: 60_000 },
  signInAccount: { max: 4, windowMs: 60_000 },
  signInDevice: { max: 3, windowMs: 60_000 },
}

const DEVICE_PARAMS = {
  client_id: 'web',
  scope: 'data.metadata',
  code_challenge: pkcePair().challenge,
  code_challenge_method: 'S256',
}

const AUTHORIZE = {
  response_type: 'code',
  client_id: 'cli',
  redirect_uri: CLI_REDIRECT,
  scope: 'data.overview',
  state: 'st-27',
  code_challenge: RFC_CHALLENGE,
  code_challenge_method: 'S256',
} as const

let redis: RedisServer

beforeAll(async () => {
  redis = await startRedisServer()
}, 30_000)

afterAll(async () => {
  await redis?.stop()
})

// Fresh IPv4 addresses, and fresh IPv6 /64 networks, so that tests never share a count.
let lastAddress = 0
function nextAddress(): string {
  lastAddress++
  return `203.0.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`
}
let lastNetwork = 0
/** `count` addresses in one fresh IPv6 /64, each different in its last 64 bits. */
function networkAddresses(count: number): string[] {
  lastNetwork++
  return Array.from({ length: count }, (_, i) => `2001:db8:27:${lastNetwork.toString(16)}:${i + 1}::${i + 7}`)
}
// Through the trusted proxy, which terminates TLS: the pages and OAuth endpoints need HTTPS.
const from = (address: string) => ({ 'x-forwarded-for': address, 'x-forwarded-proto': 'https' })

/** A 429 must say when to come back (finding 12). */
function expectTooMany(answer: {
  readonly status: number
  readonly headers: Headers | WebResponse['headers']
}) {
  expect(answer.status).toBe(429)
  const retryAfter =
    answer.headers instanceof Headers ? answer.headers.get('retry-after') : answer.headers['retry-after']
  expect(Number(retryAfter)).toBeGreaterThan(0)
}

const STORES: readonly (readonly [string, () => StoreOption])[] = [
  ['memory', () => ({ kind: 'memory' })],
  ['redis', () => ({ kind: 'redis', url: redis.url })],
]

const CASES = STORES.flatMap(([store, option]) =>
  FRAMEWORKS.map((framework) => [store, framework, option] as const),
)

describe.each(CASES)('%s store, %s', (store, framework, option) => {
  let server: StartedServer
  // Device grants this server has created, towards the cap.
  let grants = 0

  async function start(extra: { readonly rateLimits?: MemoryRateLimitStore } = {}) {
    return startServer({
      seed: await oauthSeed(),
      framework,
      port: 0,
      trustProxy: ['loopback'],
      store: option(),
      limits: LIMITS,
      ...extra,
    })
  }

  beforeAll(async () => {
    if (store === 'redis') {
      // Counts are shared on Redis: each case starts from none.
      const client = new Redis(redis.url)
      await client.flushall()
      client.disconnect()
    }
    server = await start()
  }, 30_000)

  afterAll(async () => {
    await server?.close()
  })

  async function signInFrom(
    port: number,
    address: string,
    handle: string,
    password: string,
    client = new WebClient(port),
  ): Promise<WebResponse> {
    const form = await client.get('/signin', { headers: from(address) })
    return client.post(
      '/signin',
      { handle, password, csrf_token: csrfOf(form.body) },
      { headers: from(address) },
    )
  }

  test('an address already refused creates no key; a full table never resets a count (3, 9)', async () => {
    const table = new MemoryRateLimitStore(30)
    const own = store === 'memory' ? await start({ rateLimits: table }) : server
    const keys = new Redis(redis.url)
    const keyCount = async () => (store === 'memory' ? table.size : (await keys.keys('dap:limit*')).length)
    try {
      // On its own server, the cap on device grants is used up (on Redis the shared one is kept
      // for the test of the cap below).
      const granted = Array.from({ length: 4 }, nextAddress)
      if (own !== server) {
        for (const address of granted) {
          expect(
            (await postForm(`${own.url}/oauth/device_authorization`, DEVICE_PARAMS, from(address))).status,
          ).toBe(200)
        }
      }
      // A victim's count for one handle reaches its limit.
      const victim = nextAddress()
      for (let i = 0; i < 3; i++) expect((await signInFrom(own.port, victim, 'victim', 'x')).status).toBe(401)
      expectTooMany(await signInFrom(own.port, victim, 'victim', 'x'))
      // One address sends 20 sign-ins with made-up handles: its own limit stops it after 6, and no
      // key is created for the 14 handles it names after that.
      const attacker = nextAddress()
      const before = await keyCount()
      const statuses = []
      for (let i = 0; i < 20; i++)
        statuses.push((await signInFrom(own.port, attacker, `made-up-${i}`, 'x')).status)
      expect(statuses).toEqual([...Array(6).fill(401), ...Array(14).fill(429)])
      // Its network's count, and a handle and an account count per attempt let through.
      expect((await keyCount()) - before).toBeLessThanOrEqual(1 + 6 + 6)
      if (store === 'redis') {
        // Every key expires with its window.
        for (const key of await keys.keys('dap:limit*')) expect(await keys.pttl(key)).toBeGreaterThan(0)
      } else {
        // Fresh addresses fill the table, until a new key is refused rather than an old one forgotten.
        let refused: WebResponse | undefined
        for (let i = 0; i < 30 && refused === undefined; i++) {
          const answer = await signInFrom(own.port, nextAddress(), `filler-${i}`, 'x')
          if (answer.status === 429) refused = answer
          else expect(answer.status).toBe(401)
        }
        expect(refused).toBeDefined()
        expectTooMany(refused!)
        // Each limit has its own 30: the networks', the handles' and the accounts' keys of sign-in.
        for (const limit of ['signIn', 'signInHandle', 'signInAccount']) {
          expect(table.sizeOf(limit)).toBeLessThanOrEqual(30)
        }
        // The flood of made-up handles filled sign-in's share only: a new network still reaches the
        // token endpoint (a refresh without client authentication: 401, not 429).
        const token = await postForm(
          `${own.url}/oauth/token`,
          { grant_type: 'refresh_token', refresh_token: 'x' },
          from(nextAddress()),
        )
        expect(token.status).toBe(401)
      }
      // Neither flood reset the victim's count, nor the attacker's, nor the cap on device grants.
      expectTooMany(await signInFrom(own.port, victim, 'victim', 'x'))
      expectTooMany(await signInFrom(own.port, attacker, 'made-up-0', 'x'))
      if (own !== server) {
        const capped = await postForm(
          `${own.url}/oauth/device_authorization`,
          DEVICE_PARAMS,
          from(granted[0]!),
        )
        expectTooMany(capped)
        expect(capped.body.error_description).toBe(
          'too many device authorizations are pending on this server; try again later',
        )
      }
    } finally {
      keys.disconnect()
      if (own !== server) await own.close()
    }
  })

  test('IPv6 clients count per /64, IPv4-mapped addresses as IPv4 (4, 12)', async () => {
    // Sign-in: one handle guessed from three addresses of one /64, then refused from a fourth.
    const signIns = networkAddresses(4)
    for (const address of signIns.slice(0, 3)) {
      expect((await signInFrom(server.port, address, 'guessed', 'x')).status).toBe(401)
    }
    const refused = await signInFrom(server.port, signIns[3]!, 'guessed', 'x')
    expectTooMany(refused)
    expect(refused.body).toContain('Too many sign-in attempts from this network.')
    // The token endpoint: five from one /64, then every address of it is refused.
    const tokens = networkAddresses(6)
    const tokenAnswers = []
    for (const address of tokens) {
      tokenAnswers.push(
        await postForm(
          `${server.url}/oauth/token`,
          { grant_type: 'refresh_token', refresh_token: 'x' },
          from(address),
        ),
      )
    }
    // A refresh without client authentication is invalid_client (401); the sixth is over the limit.
    expect(tokenAnswers.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401, 429])
    expectTooMany(tokenAnswers[5]!)
    // Device authorization: three per /64 (invalid ones count here, not against the grant cap).
    const devices = networkAddresses(4)
    const deviceAnswers = []
    for (const address of devices) {
      deviceAnswers.push(await postForm(`${server.url}/oauth/device_authorization`, {}, from(address)))
    }
    expect(deviceAnswers.map((answer) => answer.status)).toEqual([400, 400, 400, 429])
    expectTooMany(deviceAnswers[3]!)
    // User codes: eight per /64, from fresh browsers at fresh addresses.
    const entries = networkAddresses(9)
    const codeAnswers = []
    for (const address of entries) {
      const browser = new WebClient(server.port)
      const page = await browser.get('/device', { headers: from(address) })
      codeAnswers.push(
        await browser.post(
          '/device',
          { csrf_token: csrfOf(page.body), user_code: 'BCDF-GHJK' },
          { headers: from(address) },
        ),
      )
    }
    expect(codeAnswers.map((answer) => answer.status)).toEqual([...Array(8).fill(400), 429])
    expectTooMany(codeAnswers[8]!)
    expect(codeAnswers[8]!.body).toContain('Too many codes were entered from this network.')
    // Another /64 is counted apart; an IPv4 address and its IPv4-mapped form are one client.
    const other = networkAddresses(1)[0]!
    expect((await postForm(`${server.url}/oauth/token`, { grant_type: 'x' }, from(other))).status).toBe(400)
    const v4 = nextAddress()
    const mapped = []
    for (let i = 0; i < 6; i++) {
      mapped.push(
        await postForm(
          `${server.url}/oauth/token`,
          { grant_type: 'x' },
          from(i % 2 === 0 ? v4 : `::ffff:${v4}`),
        ),
      )
    }
    expect(mapped.map((answer) => answer.status)).toEqual([400, 400, 400, 400, 400, 429])
  })

  test('the grant cap counts only grants created: invalid requests spend none of it (5)', async () => {
    // Forty invalid requests (no client, an unknown client) from twenty addresses, each within its limit.
    for (let i = 0; i < 20; i++) {
      const address = nextAddress()
      expect((await postForm(`${server.url}/oauth/device_authorization`, {}, from(address))).status).toBe(400)
      const unknown = await postForm(
        `${server.url}/oauth/device_authorization`,
        { ...DEVICE_PARAMS, client_id: 'nobody' },
        from(address),
      )
      expect(unknown.status).toBeGreaterThanOrEqual(400)
      expect(unknown.status).not.toBe(429)
    }
    // Every grant of the cap can still be created; then everyone is refused.
    const answers = []
    for (let i = 0; i < 4 - grants + 1; i++) {
      answers.push(
        await postForm(`${server.url}/oauth/device_authorization`, DEVICE_PARAMS, from(nextAddress())),
      )
    }
    expect(answers.map((answer) => answer.status)).toEqual([...Array(4 - grants).fill(200), 429])
    grants = 4
    expectTooMany(answers.at(-1)!)
    expect(answers.at(-1)!.body.error_description).toBe(
      'too many device authorizations are pending on this server; try again later',
    )
  })

  test('the per-browser user-code lock answers 429 with Retry-After (12)', async () => {
    const browser = new WebClient(server.port)
    const address = nextAddress()
    const statuses = []
    let last: WebResponse | undefined
    for (let i = 0; i < 5; i++) {
      const page = await browser.get('/device', { headers: from(address) })
      last = await browser.post(
        '/device',
        { csrf_token: csrfOf(page.body), user_code: 'BCDF-GHJK' },
        { headers: from(address) },
      )
      statuses.push(last.status)
    }
    expect(statuses).toEqual([400, 400, 400, 400, 429])
    expectTooMany(last!)
    expect(last!.body).toContain('Too many wrong codes.')
  })

  describe('consent pages', () => {
    async function consentForm(agent: PageAgent, handle: string, password: string): Promise<PageForm> {
      const first = await agent.get(authorizeUrl(agent.origin, AUTHORIZE))
      const page = first.body.includes('name="password"')
        ? await signInThrough(agent, first, handle, password)
        : first
      expect(page.status).toBe(200)
      return formWith(page.body, 'decision')
    }

    test('bounded per user: one account flushes only its own, never another user’s (8)', async () => {
      const bob = new PageAgent(server.url)
      const bobs = await consentForm(bob, 'bob', BOB_PASSWORD)
      const alice = new PageAgent(server.url)
      const alices = [await consentForm(alice, 'alice', ALICE_PASSWORD)]
      for (let i = 0; i < MAX_PENDING_CONSENTS_PER_OWNER; i++) {
        alices.push(await consentForm(alice, 'alice', ALICE_PASSWORD))
      }
      // Alice's oldest made room for her newest; bob's is untouched.
      const oldest = await alice.submit(alices[0]!, {}, { button: 'approve' })
      expect(oldest.status).toBe(400)
      expect(oldest.body).toContain('This consent page has expired or was already answered.')
      expect((await alice.submit(alices[1]!, {}, { button: 'approve' })).status).toBe(303)
      expect((await alice.submit(alices.at(-1)!, {}, { button: 'approve' })).status).toBe(303)
      expect((await bob.submit(bobs, {}, { button: 'approve' })).status).toBe(303)
    })
  })

  // Last: it locks bob's account for strangers' browsers for the rest of the window.
  test('one account from many networks: locked for strangers, not for its device cookie (4, 12)', async () => {
    // Bob signs in once from his own browser: it now holds a device cookie.
    const own = new WebClient(server.port)
    expect((await signInFrom(server.port, nextAddress(), 'bob', BOB_PASSWORD, own)).status).toBe(303)
    expect(own.jar.has(DEVICE_COOKIE)).toBe(true)
    // Four guesses from four networks lock the account for every browser without the cookie.
    for (let i = 0; i < 4; i++)
      expect((await signInFrom(server.port, nextAddress(), 'bob', 'guess')).status).toBe(401)
    const locked = await signInFrom(server.port, nextAddress(), 'bob', 'guess')
    expectTooMany(locked)
    expect(locked.body).toContain('Too many sign-in attempts for this account.')
    // Even the right password, from a stranger's browser.
    expectTooMany(await signInFrom(server.port, nextAddress(), 'bob', BOB_PASSWORD))
    // Bob's own browser still signs in, from anywhere.
    expect((await signInFrom(server.port, nextAddress(), 'bob', BOB_PASSWORD, own)).status).toBe(303)
    // A device cookie is no free pass: its own count stops guesses made with it, from any network.
    for (let i = 0; i < 3; i++) {
      expect((await signInFrom(server.port, nextAddress(), 'bob', 'guess', own)).status).toBe(401)
    }
    const spent = await signInFrom(server.port, nextAddress(), 'bob', BOB_PASSWORD, own)
    expectTooMany(spent)
    expect(spent.body).toContain('Too many sign-in attempts from this browser.')
    // A cookie issued for another handle, or tampered with, spares nothing.
    const forged = new WebClient(server.port)
    forged.jar.set(DEVICE_COOKIE, `${own.jar.get(DEVICE_COOKIE)!.slice(0, -2)}xx`)
    expectTooMany(await signInFrom(server.port, nextAddress(), 'bob', BOB_PASSWORD, forged))
  })
})

/** A new signed-out browser enters `userCode` at `base`: the sign-in page of its waiting consent. */
async function enterSignedOut(
  base: string,
  userCode: string,
): Promise<{ browser: PageAgent; page: PageResponse }> {
  const browser = new PageAgent(base)
  const entry = await browser.get('/device')
  const page = await browser.submit(formWith(entry.body, 'user_code'), { user_code: userCode })
  return { browser, page }
}

/**
 * One device code entered signed out in one browser more than the grant's bound: the grant keeps
 * the pages opened first, so browsers, which cost nothing, can neither fill the store nor push out
 * the page its owner opened; the last browser is told, with a 429, that the code is in use.
 */
async function browsersPastTheGrantBound(base: string, other = base): Promise<void> {
  const started = await postForm(`${base}/oauth/device_authorization`, DEVICE_PARAMS)
  expect(started.status).toBe(200)
  const userCode = started.body.user_code as string
  const opened: { browser: PageAgent; page: PageResponse }[] = []
  for (let i = 0; i < MAX_PENDING_CONSENTS_PER_GRANT; i++) {
    opened.push(await enterSignedOut(i % 2 === 0 ? base : other, userCode))
  }
  for (const { page } of opened) expect(page.body).toContain('name="password"')
  const refused = await enterSignedOut(other, userCode)
  expect(refused.page.status).toBe(429)
  expect(refused.page.body).toContain('This code was already entered in')
  for (const { browser, page } of opened) {
    const consent = await signInThrough(browser, page, 'alice', ALICE_PASSWORD)
    expect(consent.body).toContain(`<code>${userCode}</code>`)
  }
}

describe('consent pages on any instance of a shared store (8)', () => {
  let cluster: RedisClusterServers

  beforeAll(async () => {
    cluster = await startRedisCluster()
  }, 60_000)

  afterAll(async () => {
    await cluster?.stop()
  })

  const SHARED = [
    ['redis', () => redis.url],
    ['redis-cluster', () => cluster.url],
  ] as const

  describe.each(
    SHARED.flatMap(([store, url]) => FRAMEWORKS.map((framework) => [store, framework, url] as const)),
  )('%s, %s', (store, framework, url) => {
    let one: StartedServer
    let other: StartedServer

    beforeAll(async () => {
      const option: StoreOption =
        store === 'redis' ? { kind: 'redis', url: url() } : { kind: 'redis-cluster', url: url() }
      const start = async () => startServer({ seed: await oauthSeed(), framework, port: 0, store: option })
      ;[one, other] = [await start(), await start()]
    }, 30_000)

    afterAll(async () => {
      await Promise.all([one?.close(), other?.close()])
    })

    test('a code-flow consent shown by one instance is answered on the other, once', async () => {
      const alice = new PageAgent(one.url)
      const first = await alice.get(authorizeUrl(one.url, AUTHORIZE))
      const page = await signInThrough(alice, first, 'alice', ALICE_PASSWORD)
      const form = formWith(page.body, 'decision')
      const answer = await alice.submit(form, {}, { button: 'approve', base: other.url })
      expect(answer.status).toBe(303)
      expect(new URL(answer.location!).searchParams.has('code')).toBe(true)
      // Taken once, whichever instance is asked again.
      expect((await alice.submit(form, {}, { button: 'approve' })).status).toBe(400)
    })

    test('a device code entered signed out on one instance is claimed after sign-in on the other', async () => {
      const started = await postForm(`${one.url}/oauth/device_authorization`, DEVICE_PARAMS)
      expect(started.status).toBe(200)
      const agent = new PageAgent(one.url)
      const entry = await agent.get('/device')
      const signIn = await agent.submit(formWith(entry.body, 'user_code'), {
        user_code: started.body.user_code as string,
      })
      expect(signIn.body).toContain('name="password"')
      const signedIn = await agent.submit(
        formWith(signIn.body, 'password'),
        { handle: 'alice', password: ALICE_PASSWORD },
        { base: other.url, follow: false },
      )
      expect(signedIn.status).toBe(303)
      // Back to the device page on the other instance, which claims the consent for the session.
      const consent = await agent.get(new URL(signedIn.location!, other.url).href)
      expect(consent.status).toBe(200)
      expect(consent.body).toContain(`<code>${started.body.user_code as string}</code>`)
      const done = await agent.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
      expect(done.status).toBe(200)
      expect(done.body).toContain('Device connected')
    })

    test('one device code entered signed out in more browsers than its bound keeps the first pages, refuses the rest', async () => {
      await browsersPastTheGrantBound(one.url, other.url)
    })

    test('one account pushes out only its own oldest consent, wherever it lies', async () => {
      const alice = new PageAgent(one.url)
      const forms: PageForm[] = []
      for (let i = 0; i <= MAX_PENDING_CONSENTS_PER_OWNER; i++) {
        const first = await alice.get(authorizeUrl(one.url, AUTHORIZE))
        const page = first.body.includes('name="password"')
          ? await signInThrough(alice, first, 'alice', ALICE_PASSWORD)
          : first
        forms.push(formWith(page.body, 'decision'))
      }
      expect((await alice.submit(forms[0]!, {}, { button: 'approve', base: other.url })).status).toBe(400)
      expect((await alice.submit(forms[1]!, {}, { button: 'approve', base: other.url })).status).toBe(303)
    })
  })
})

describe.each(FRAMEWORKS)('memory store, %s: the per-account limit backs off (4)', (framework) => {
  test('each lock within a day doubles the next window', async () => {
    const clock = testClock()
    const server = await startServer({
      seed: await oauthSeed(),
      framework,
      port: 0,
      trustProxy: ['loopback'],
      now: clock.read,
      limits: { signInAccount: { max: 2, windowMs: 60_000 } },
    })
    try {
      const attempt = async () => {
        const client = new WebClient(server.port)
        const address = nextAddress()
        const form = await client.get('/signin', { headers: from(address) })
        return client.post(
          '/signin',
          { handle: 'alice', password: 'guess', csrf_token: csrfOf(form.body) },
          { headers: from(address) },
        )
      }
      for (const window of [60, 120, 240]) {
        expect([(await attempt()).status, (await attempt()).status]).toEqual([401, 401])
        const locked = await attempt()
        expectTooMany(locked)
        expect(locked.headers['retry-after']).toBe(String(window))
        clock.advance(window * 1000)
      }
    } finally {
      await server.close()
    }
  })
})

describe('Redis rate-limit counts', () => {
  test('a hit is given back to its own window only; peeking creates nothing; keys expire with their window', async () => {
    const limits = new RedisRateLimitStore(redis.url, 'dap:test-limit:')
    const keys = new Redis(redis.url)
    try {
      await limits.ready()
      const first = await limits.hit('k', 4000, 0)
      expect(first).toMatchObject({ count: 1 })
      expect(await keys.pttl('dap:test-limit:k')).toBeGreaterThan(3000)
      await limits.hit('k', 4000, 0)
      await limits.giveBack('k', 'another window')
      expect(await limits.peek('k', 0)).toBe(2)
      await limits.giveBack('k', first.window!)
      expect(await limits.peek('k', 0)).toBe(1)
      expect(await limits.peek('missing', 0)).toBe(0)
      expect(await keys.exists('dap:test-limit:missing')).toBe(0)
      // A new window has a new id: the old window's hit is not taken from it.
      await limits.reset('k')
      await limits.hit('k', 4000, 0)
      await limits.giveBack('k', first.window!)
      expect(await limits.peek('k', 0)).toBe(1)
    } finally {
      keys.disconnect()
      await limits.close()
    }
  })
})

describe.each(FRAMEWORKS)('memory store, %s: a full consent store (8)', (framework) => {
  test('refuses a signed-out browser’s consent with 503 and Retry-After, forgetting nobody’s; users go on', async () => {
    const server = await startServer({
      seed: await oauthSeed(),
      framework,
      port: 0,
      consents: new MemoryPendingConsents(Date.now, MAX_PENDING_CONSENTS_PER_OWNER, 2),
    })
    try {
      const grant = async () => {
        const started = await postForm(`${server.url}/oauth/device_authorization`, DEVICE_PARAMS)
        expect(started.status).toBe(200)
        return started.body.user_code as string
      }
      // Signed-out browsers enter two codes: each gets a consent waiting for its sign-in.
      const waiting = [
        await enterSignedOut(server.url, await grant()),
        await enterSignedOut(server.url, await grant()),
      ]
      for (const { page } of waiting) expect(page.body).toContain('name="password"')
      const refused = (await enterSignedOut(server.url, await grant())).page
      expect(refused.status).toBe(503)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(refused.body).toContain('Too many consent requests are open on this server.')
      // A signed-in user's consent page is still shown, and the waiting browsers' are still there.
      const alice = new PageAgent(server.url)
      const first = await alice.get(authorizeUrl(server.url, AUTHORIZE))
      expect((await signInThrough(alice, first, 'alice', ALICE_PASSWORD)).status).toBe(200)
      const { browser, page } = waiting[0]!
      const consent = await signInThrough(browser, page, 'bob', BOB_PASSWORD)
      expect(consent.status).toBe(200)
      expect(consent.body).toContain('name="decision"')
    } finally {
      await server.close()
    }
  })
})

describe.each(STORES)('%s store: requests with a wrong client secret (5)', (store, option) => {
  test('hold none of the device-grant cap while their secrets wait in the hash queue', async () => {
    if (store === 'redis') {
      // The cap is one count on Redis, shared with the servers of the tests above: start from none.
      const client = new Redis(redis.url)
      await client.flushall()
      client.disconnect()
    }
    const server = await startServer({
      seed: await oauthSeed(),
      framework: 'fastify',
      port: 0,
      trustProxy: ['loopback'],
      store: option(),
      limits: {
        ...LIMITS,
        deviceAuthorization: { max: 3, windowMs: 60_000 },
        deviceGrants: { max: 10, windowMs: 60_000 },
      },
    })
    try {
      // Thirty wrong secrets for the confidential client, from thirty addresses (each within its
      // limit): scrypt checks them two at a time, so they wait far longer than a valid request.
      const wrong = { ...DEVICE_PARAMS, client_id: 'cli', client_secret: 'not-the-secret' }
      const flood = Array.from({ length: 30 }, () =>
        postForm(`${server.url}/oauth/device_authorization`, wrong, from(nextAddress())),
      )
      // Counted before their check, they would fill the cap of 10 and refuse this one.
      const valid = await postForm(
        `${server.url}/oauth/device_authorization`,
        DEVICE_PARAMS,
        from(nextAddress()),
      )
      expect(valid.status).toBe(200)
      expect((await Promise.all(flood)).map((answer) => answer.status)).toEqual(Array(30).fill(401))
    } finally {
      await server.close()
    }
  })
})

describe.each(FRAMEWORKS)('memory store, %s: signed-out consents per device grant (8)', (framework) => {
  test('one device code entered signed out in more browsers than its bound keeps the first pages, refuses the rest', async () => {
    const server = await startServer({ seed: await oauthSeed(), framework, port: 0 })
    try {
      await browsersPastTheGrantBound(server.url)
    } finally {
      await server.close()
    }
  })
})
