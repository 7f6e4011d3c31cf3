/**
 * Sign-in, sessions and sign-out over real HTTP on Express, Fastify and Hono (design §9,
 * web/README.md): the form and its login CSRF, wrong credentials, the per-handle limit, `next`
 * open-redirect attempts, cookie attributes, session expiry on a moved clock, sign-out — and that
 * the three frameworks send the same status and headers for the same page.
 */

import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { parseTrustProxy } from '../../examples/server/http/trust-proxy.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import {
  type MemorySessionStore,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  sessionKey,
} from '../../examples/server/web/sessions.js'
import { WRONG_CREDENTIALS } from '../../examples/server/web/signin.js'
import { cookieAttributes, csrfOf, formOf, signIn, tokenValueOf, WebClient } from './web-client.js'

const servers = {} as Record<Framework, StartedServer>
// One clock for all three servers; tests only ever move it forward.
let offset = 0
const now = () => Date.now() + offset

beforeAll(async () => {
  const seed = await loadSeed(DEMO_SEED)
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      servers[framework] = await startServer({
        seed,
        framework,
        port: 0,
        now,
        // Loopback may relay X-Forwarded-For / -Proto: lets a test play a remote or HTTPS client.
        trustProxy: parseTrustProxy('loopback'),
      })
    }),
  )
})

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()))
})

function cookieLine(lines: readonly string[], name: string): string {
  const line = lines.find((each) => each.startsWith(`${name}=`))
  if (line === undefined) throw new Error(`no ${name} cookie in ${JSON.stringify(lines)}`)
  return line
}

describe.each(FRAMEWORKS)('%s', (framework) => {
  const client = () => new WebClient(servers[framework].port)

  test('GET /signin: an accessible form with handle, password and a CSRF token, no-store', async () => {
    const page = await client().get('/signin')
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['cache-control']).toBe('no-store')
    expect(page.body).toContain('<html lang="en">')
    expect(page.body).toContain('<main')
    const form = formOf(page.body, '/signin')
    expect(form).toContain('method="post"')
    expect(form).toMatch(/<label for="handle">/)
    expect(form).toMatch(/<input type="text" id="handle" name="handle"/)
    expect(form).toMatch(/<label for="password">/)
    expect(form).toMatch(/<input type="password" id="password" name="password"/)
    expect(csrfOf(form)).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const attributes = cookieAttributes(cookieLine(page.setCookies, 'dap_signin'))
    expect(attributes).toMatchObject({ httponly: true, samesite: 'Lax', path: '/' })
    expect(attributes.secure).toBeUndefined()
  })

  test('the right password: 303 to the token list with a session cookie (HttpOnly, Lax, no Secure on loopback http)', async () => {
    const browser = client()
    const answer = await signIn(browser, 'alice', 'alice-demo-password')
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe('/settings/tokens')
    expect(answer.headers['cache-control']).toBe('no-store')
    const line = cookieLine(answer.setCookies, 'dap_session')
    expect(line).toMatch(/^dap_session=[A-Za-z0-9_-]{43};/)
    const attributes = cookieAttributes(line)
    expect(attributes).toMatchObject({ httponly: true, samesite: 'Lax', path: '/' })
    expect(attributes.secure).toBeUndefined()
    expect(attributes['max-age']).toBeUndefined()
    // The anonymous sign-in cookie has done its job.
    expect(cookieAttributes(cookieLine(answer.setCookies, 'dap_signin'))['max-age']).toBe('0')
    const list = await browser.get('/settings/tokens')
    expect(list.status).toBe(200)
    expect(list.body).toContain('Signed in as <strong>alice</strong>')
  })

  // A remote client over plain http used to be served here (with Secure cookies it could not send
  // back): it is now refused, see the next test. Through a trusted proxy that terminated TLS, a
  // remote client is served, with Secure cookies, on sign-in and on the settings pages alike.
  test.each([
    ['over https (a trusted proxy says so)', { 'x-forwarded-proto': 'https' }],
    [
      'from a remote client over https (a trusted proxy says so)',
      { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' },
    ],
  ])('cookies are Secure %s', async (label, headers) => {
    const browser = client()
    const form = await browser.get('/signin', { headers })
    expect(form.status).toBe(200)
    expect(cookieAttributes(cookieLine(form.setCookies, 'dap_signin')).secure).toBe(true)
    const answer = await browser.post(
      '/signin',
      { handle: 'alice', password: 'alice-demo-password', csrf_token: csrfOf(form.body) },
      { headers },
    )
    expect(answer.status).toBe(303)
    expect(cookieAttributes(cookieLine(answer.setCookies, 'dap_session'))).toMatchObject({
      secure: true,
      httponly: true,
      samesite: 'Lax',
    })
    const list = await browser.get('/settings/tokens', { headers })
    expect(list.status).toBe(200)
    const created = await browser.post(
      '/settings/tokens',
      {
        name: `created ${label}`,
        scopes: ['data.overview'],
        expiresAt: '',
        csrf_token: csrfOf(list.body, '/settings/tokens'),
      },
      { headers },
    )
    expect(created.status).toBe(200)
    expect(tokenValueOf(created.body)).toMatch(/^dap_/)
  })

  test.each([
    ['no X-Forwarded-Proto', { 'x-forwarded-for': '203.0.113.9' }],
    ['X-Forwarded-Proto: http', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'http' }],
    ['an IPv6 client', { 'x-forwarded-for': '2001:db8::9', 'x-forwarded-proto': 'http' }],
  ])(
    'from a remote client over plain http (%s), every page is a 403 page and does nothing',
    async (_name, remote) => {
      const app = servers[framework].app
      const browser = client()
      // The sign-in form, fetched on loopback, then posted from afar with the right password.
      const form = await browser.get('/signin')
      const refusedSignIn = await browser.post(
        '/signin',
        { handle: 'alice', password: 'alice-demo-password', csrf_token: csrfOf(form.body) },
        { headers: remote },
      )
      // Signed in on loopback, so that the remote requests carry a live session and genuine CSRF tokens.
      expect((await signIn(browser, 'alice', 'alice-demo-password')).status).toBe(303)
      const list = await browser.get('/settings/tokens')
      expect(list.status).toBe(200)
      const csrf = csrfOf(list.body, '/settings/tokens')
      const token = (await app.tokens.listByOwner('alice')).find(
        (each) => each.kind === 'api' && each.revokedAt === undefined,
      )!
      const before = JSON.stringify(await app.tokens.listByOwner('alice'))
      const item = `/settings/tokens/${token.id}`
      const answers = [
        refusedSignIn,
        await browser.get('/signin', { headers: remote }),
        await browser.get('/settings/tokens', { headers: remote }),
        await browser.post(
          '/settings/tokens',
          { name: 'made from afar', scopes: ['data.overview'], expiresAt: '', csrf_token: csrf },
          { headers: remote },
        ),
        await browser.get(item, { headers: remote }),
        await browser.post(
          item,
          { name: 'renamed from afar', scopes: ['data.overview'], csrf_token: csrf },
          { headers: remote },
        ),
        await browser.get(`${item}/revoke`, { headers: remote }),
        await browser.post(`${item}/revoke`, { confirm: 'yes', csrf_token: csrf }, { headers: remote }),
        await browser.post('/signout', { csrf_token: csrfOf(list.body, '/signout') }, { headers: remote }),
        // The OAuth pages follow the very same rule (one helper, web/https-only.ts).
        await browser.get('/oauth/authorize?response_type=code&client_id=cli', { headers: remote }),
        await browser.post('/oauth/consent', { csrf_token: csrf, decision: 'approve' }, { headers: remote }),
        await browser.get('/device', { headers: remote }),
        await browser.post('/device', { user_code: 'BCDF-GHJK', csrf_token: csrf }, { headers: remote }),
      ]
      for (const answer of answers) {
        expect(answer.status).toBe(403)
        expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
        expect(answer.headers['cache-control']).toBe('no-store')
        expect(answer.body).toContain('HTTPS required')
        expect(answer.body).not.toContain('Signed in as')
        expect(answer.setCookies).toEqual([])
        expect(tokenValueOf(answer.body)).toBeUndefined()
        expect(answer.body).not.toMatch(/dap_[0-9A-Za-z]{38}/)
      }
      // Nothing was created, renamed or revoked, and the session was not signed out.
      expect(JSON.stringify(await app.tokens.listByOwner('alice'))).toBe(before)
      expect((await browser.get('/settings/tokens')).status).toBe(200)
    },
  )

  test('a wrong password and an unknown handle get the same 401 page', async () => {
    for (const [handle, password] of [
      ['alice', 'wrong'],
      ['nobody', 'alice-demo-password'],
    ] as const) {
      const browser = client()
      const answer = await signIn(browser, handle, password)
      expect(answer.status).toBe(401)
      expect(answer.headers['cache-control']).toBe('no-store')
      expect(answer.body).toContain(WRONG_CREDENTIALS)
      expect(answer.setCookies.some((line) => line.startsWith('dap_session='))).toBe(false)
      // The form comes back, with the handle filled in and the password not.
      expect(answer.body).toContain(`value="${handle}"`)
      expect(answer.body).not.toContain(password)
    }
  })

  test('empty fields: 400 with the form again', async () => {
    const answer = await signIn(client(), 'alice', '')
    expect(answer.status).toBe(400)
    expect(answer.body).toContain('Enter your handle and your password.')
  })

  test('5 attempts per handle in 15 minutes, then 429 with Retry-After, even with the right password', async () => {
    const browser = client()
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await signIn(browser, 'carol', `guess-${attempt}`)).status).toBe(401)
    }
    const limited = await signIn(browser, 'carol', 'carol-demo-password')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.body).toContain('Too many sign-in attempts')
    // Another handle is not affected.
    expect((await signIn(client(), 'bob', 'bob-demo-password')).status).toBe(303)
  })

  test('a successful sign-in clears its handle’s count', async () => {
    const browser = client()
    for (let attempt = 0; attempt < 4; attempt++) await signIn(browser, 'bob', 'nope')
    expect((await signIn(browser, 'bob', 'bob-demo-password')).status).toBe(303)
    for (let attempt = 0; attempt < 4; attempt++)
      expect((await signIn(client(), 'bob', 'nope')).status).toBe(401)
    expect((await signIn(client(), 'bob', 'bob-demo-password')).status).toBe(303)
  })

  test.each([
    'https://evil.example/',
    '//evil.example/',
    '/\\evil.example/',
    '\\\\evil.example',
    'javascript:alert(1)',
    '/%2F/evil.example',
    '/settings/tokens#x',
    ' /settings/tokens',
    'evil.example',
    `/${'a'.repeat(5000)}`,
  ])('next=%j is ignored: sign-in lands on the token list', async (next) => {
    const browser = client()
    const form = await browser.get(`/signin?next=${encodeURIComponent(next)}`)
    expect(form.status).toBe(200)
    expect(form.body).not.toContain('name="next"')
    const answer = await browser.post('/signin', {
      handle: 'alice',
      password: 'alice-demo-password',
      next,
      csrf_token: csrfOf(form.body),
    })
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe('/settings/tokens')
  })

  test('a same-origin next with a query is kept, through the form', async () => {
    const next = '/settings/tokens?from=test&x=%2F'
    const browser = client()
    const form = await browser.get(`/signin?next=${encodeURIComponent(next)}`)
    expect(form.body).toContain(`name="next" value="${next.replaceAll('&', '&amp;')}"`)
    const answer = await signIn(browser, 'alice', 'alice-demo-password', next)
    expect(answer.headers.location).toBe(next)
  })

  test('signed out, the token list redirects to /signin?next=/settings/tokens', async () => {
    const answer = await client().get('/settings/tokens')
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe('/signin?next=/settings/tokens')
    expect(answer.headers['cache-control']).toBe('no-store')
  })

  test.each([
    ['without a token', (_token: string) => ({})],
    [
      'with a wrong token',
      (token: string) => ({ csrf_token: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` }),
    ],
    ['with the token twice', (token: string) => ({ csrf_token: [token, token] })],
  ])('sign-in %s: 403, the password is never checked', async (_name, csrf) => {
    const browser = client()
    const form = await browser.get('/signin')
    const answer = await browser.post('/signin', {
      handle: 'alice',
      password: 'alice-demo-password',
      ...csrf(csrfOf(form.body)),
    })
    expect(answer.status).toBe(403)
    expect(answer.setCookies.some((line) => line.startsWith('dap_session='))).toBe(false)
  })

  test('login CSRF: a token without its cookie, or with another browser’s cookie, is 403', async () => {
    const attacker = client()
    const form = await attacker.get('/signin')
    const token = csrfOf(form.body)
    const fields = { handle: 'alice', password: 'alice-demo-password', csrf_token: token }
    expect((await client().post('/signin', fields)).status).toBe(403)
    const victim = client()
    await victim.get('/signin')
    expect((await victim.post('/signin', fields)).status).toBe(403)
  })

  test('a session id planted before sign-in is never promoted', async () => {
    const browser = client()
    browser.jar.set('dap_session', 'planted-by-an-attacker-0000000000000000000')
    const answer = await signIn(browser, 'alice', 'alice-demo-password')
    expect(browser.jar.get('dap_session')).not.toBe('planted-by-an-attacker-0000000000000000000')
    expect(answer.status).toBe(303)
  })

  test('sign-out needs the CSRF token, destroys the session and clears the cookie', async () => {
    const browser = client()
    await signIn(browser, 'alice', 'alice-demo-password')
    const id = browser.jar.get('dap_session')!
    const sessions = servers[framework].app.web.sessions as MemorySessionStore
    expect(sessions.snapshot().some((session) => session.key === sessionKey(id))).toBe(true)

    expect((await browser.post('/signout', {})).status).toBe(403)
    const list = await browser.get('/settings/tokens')
    expect(list.status).toBe(200)

    const answer = await browser.post('/signout', { csrf_token: csrfOf(list.body, '/signout') })
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe('/signin')
    expect(cookieAttributes(cookieLine(answer.setCookies, 'dap_session'))['max-age']).toBe('0')
    expect(sessions.snapshot().some((session) => session.key === sessionKey(id))).toBe(false)
    // The old cookie, replayed, is worth nothing.
    const replayed = await new WebClient(servers[framework].port).get('/settings/tokens', {
      headers: { cookie: `dap_session=${id}` },
    })
    expect(replayed.status).toBe(303)
  })

  test('sessions end after 30 minutes idle', async () => {
    const browser = client()
    await signIn(browser, 'alice', 'alice-demo-password')
    offset += SESSION_IDLE_MS - 60_000
    expect((await browser.get('/settings/tokens')).status).toBe(200)
    offset += SESSION_IDLE_MS - 60_000
    expect((await browser.get('/settings/tokens')).status).toBe(200)
    offset += SESSION_IDLE_MS + 1
    const expired = await browser.get('/settings/tokens')
    expect(expired.status).toBe(303)
    expect(expired.headers.location).toBe('/signin?next=/settings/tokens')
  })

  test('sessions end 8 hours after sign-in, however active', async () => {
    const browser = client()
    await signIn(browser, 'alice', 'alice-demo-password')
    const start = offset
    while (offset - start < SESSION_ABSOLUTE_MS - SESSION_IDLE_MS) {
      offset += SESSION_IDLE_MS - 60_000
      expect((await browser.get('/settings/tokens')).status).toBe(200)
    }
    offset = start + SESSION_ABSOLUTE_MS
    expect((await browser.get('/settings/tokens')).status).toBe(303)
  })

  test('the front door lets pages and their query strings through, and 404s odd targets', async () => {
    const browser = client()
    expect((await browser.get('/signin?next=%2Fsettings%2Ftokens&x=%20')).status).toBe(200)
    for (const target of ['/signin/', '/Signin', '/%73ignin', '/settings//tokens', '/settings/tokens/..']) {
      expect((await browser.get(target)).status).toBe(404)
    }
  })
})

describe('the same page on every framework', () => {
  const comparable = (headers: Readonly<Record<string, unknown>>) => {
    const { date: _date, 'set-cookie': _cookie, ...rest } = headers
    return rest
  }

  test('GET /signin, a 401 and a redirect: identical status and headers', async () => {
    const answers = await Promise.all(
      FRAMEWORKS.map(async (framework) => {
        const browser = new WebClient(servers[framework].port)
        const form = await browser.get('/signin')
        const wrong = await signIn(browser, 'alice', 'not-it')
        const redirect = await browser.get('/settings/tokens')
        return [form, wrong, redirect].map((answer) => ({
          status: answer.status,
          headers: comparable(answer.headers),
          cookies: answer.setCookies.map((line) => line.replace(/=[^;]*/, '=…')),
        }))
      }),
    )
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
  })
})
