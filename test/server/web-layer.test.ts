/**
 * The pieces of the pages' web layer on their own: cookies, form bodies, result headers, the
 * `next` guard, the attempt limiter, sessions, CSRF tokens, HTML escaping and expiry parsing.
 */

import { describe, expect, test } from 'vitest'
import { headersOf } from '../../examples/server/http/result-headers.js'
import { MemoryRateLimitStore } from '../../examples/server/limits/rate-limits.js'
import { parseCookies, serializeCookie } from '../../examples/server/request/cookies.js'
import { parseFormBody } from '../../examples/server/request/form.js'
import type { ApiRequest } from '../../examples/server/routes/route-set.js'
import {
  checkSessionCsrf,
  SIGNIN_CSRF_COOKIE,
  SIGNIN_CSRF_TTL_MS,
  SignInCsrfTokens,
  safeEqual,
} from '../../examples/server/web/csrf.js'
import { escapeHtml, renderPage } from '../../examples/server/web/html.js'
import { safeNext } from '../../examples/server/web/next-path.js'
import { PagePaths } from '../../examples/server/web/page-paths.js'
import {
  MemorySessionStore,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  sessionKey,
} from '../../examples/server/web/sessions.js'
import { parseExpiry } from '../../examples/server/web/token-form.js'
import { signInLocation } from '../../examples/server/web/web-context.js'

function requestWith(
  cookies: Record<string, string>,
  protocol = 'http',
  clientAddress = '127.0.0.1',
): ApiRequest {
  return {
    params: {},
    query: new URLSearchParams(),
    contentType: undefined,
    principal: undefined,
    body: async () => Buffer.alloc(0),
    method: 'GET',
    target: '/signin',
    headers: {},
    authorization: [],
    dpop: [],
    cookies,
    clientAddress,
    protocol,
  }
}

describe('cookies', () => {
  test('parses pairs across headers; the first of a name wins; malformed pairs are skipped', () => {
    expect(parseCookies(['a=1; b="2"; junk; c=x y', 'a=3; d=4'])).toEqual({ a: '1', b: '2', d: '4' })
  })

  test('serializes the attributes in a fixed order and refuses bad names or values', () => {
    expect(
      serializeCookie('s', 'v', { maxAge: 0, path: '/', httpOnly: true, sameSite: 'Lax', secure: true }),
    ).toBe('s=v; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure')
    expect(() => serializeCookie('a b', 'v')).toThrow(TypeError)
    expect(() => serializeCookie('a', 'v;x')).toThrow(TypeError)
  })
})

describe('form bodies', () => {
  const form = 'application/x-www-form-urlencoded'

  test('repeated fields are kept; plus and escapes decode', () => {
    const parsed = parseFormBody(
      Buffer.from('scopes=data.data&scopes=wokflow.read&name=a+b%21'),
      `${form}; charset=utf-8`,
    )
    expect(parsed.getAll('scopes')).toEqual(['data.data', 'wokflow.read'])
    expect(parsed.get('name')).toBe('a b!')
  })

  test('another content type or bytes that are not UTF-8 give an empty form', () => {
    expect([...parseFormBody(Buffer.from('a=1'), 'application/json')]).toEqual([])
    expect([...parseFormBody(Buffer.from('a=1'), undefined)]).toEqual([])
    expect([...parseFormBody(Buffer.from([0x61, 0x3d, 0xff]), form)]).toEqual([])
  })
})

describe('result headers', () => {
  test('pages: HTML, no-store and the page headers win over the result’s own', () => {
    const headers = headersOf({
      kind: 'html',
      status: 200,
      body: '',
      headers: { 'Cache-Control': 'public, max-age=60', 'Set-Cookie': ['a=1', 'b=2'] },
    })
    expect(headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'set-cookie': ['a=1', 'b=2'],
    })
  })

  test('redirects: location and no-store; JSON keeps its extra headers', () => {
    expect(headersOf({ kind: 'redirect', status: 303, location: '/x' })).toMatchObject({
      location: '/x',
      'cache-control': 'no-store',
    })
    expect(headersOf({ kind: 'json', status: 200, body: {}, headers: { pragma: 'no-cache' } })).toEqual({
      pragma: 'no-cache',
      'content-type': 'application/json; charset=utf-8',
    })
  })

  test('renderPage admits exactly its own scripts in the CSP', () => {
    const page = renderPage({ paths: new PagePaths(), title: 'T', body: '', scripts: ['console.log(1)'] })
    const csp = page.kind === 'html' ? String(page.headers?.['content-security-policy']) : ''
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/)
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('form-action')
  })
})

describe('next', () => {
  test.each([
    '/settings/tokens',
    '/',
    '/oauth/authorize?client_id=cli&scope=data.data%20wokflow.read&state=x',
  ])('keeps %s', (next) => expect(safeNext(next, new PagePaths())).toBe(next))

  test.each([
    'https://evil.example',
    '//evil.example',
    '/\\evil.example',
    '/%2e%2e/x',
    '/a/../b',
    '/a#b',
    '/a b',
    '/é',
    'relative',
    '',
    null,
    undefined,
    `/${'a'.repeat(4096)}`,
    '/a?"<x>',
  ])('drops %j', (next) => expect(safeNext(next, new PagePaths())).toBeUndefined())

  test('the sign-in address keeps slashes readable and escapes the rest', () => {
    const root = new PagePaths()
    expect(signInLocation(root, '/settings/tokens')).toBe('/signin?next=/settings/tokens')
    expect(signInLocation(root, '/oauth/authorize?a=1&b=2')).toBe(
      '/signin?next=/oauth/authorize%3Fa%3D1%26b%3D2',
    )
    expect(
      new URLSearchParams(signInLocation(root, '/oauth/authorize?a=1&b=2').split('?')[1]).get('next'),
    ).toBe('/oauth/authorize?a=1&b=2')
    expect(signInLocation(root, undefined)).toBe('/signin')
  })
})

describe('memory rate-limit store', () => {
  test('counts hits per key in fixed windows, with the time left; keys are independent; reset clears', async () => {
    const store = new MemoryRateLimitStore()
    expect(await store.hit('a', 60_000, 0)).toMatchObject({ count: 1, resetInMs: 60_000 })
    expect(await store.hit('a', 60_000, 10_000)).toMatchObject({ count: 2, resetInMs: 50_000 })
    expect(await store.hit('b', 60_000, 10_000)).toMatchObject({ count: 1, resetInMs: 60_000 })
    expect(await store.hit('a', 60_000, 60_000)).toMatchObject({ count: 1, resetInMs: 60_000 })
    await store.reset('a')
    expect(await store.hit('a', 60_000, 60_001)).toMatchObject({ count: 1, resetInMs: 60_000 })
    // A clock that is not a number fails closed: over any limit.
    expect((await store.hit('c', 60_000, Number.NaN)).count).toBe(Number.MAX_SAFE_INTEGER)
  })

  test('gives a hit back only to the window it was counted in', async () => {
    const store = new MemoryRateLimitStore()
    const first = await store.hit('a', 60_000, 0)
    await store.hit('a', 60_000, 1)
    await store.giveBack('a', first.window!)
    expect((await store.hit('a', 60_000, 2)).count).toBe(2)
    // In the next window the first window's hit is not taken back.
    const next = await store.hit('a', 60_000, 60_000)
    await store.giveBack('a', first.window!)
    expect((await store.hit('a', 60_000, 60_001)).count).toBe(2)
    expect(next.window).not.toBe(first.window)
  })

  test('a full limit refuses new keys until a window ends, and never forgets a running count', async () => {
    const store = new MemoryRateLimitStore(2)
    await store.hit('n\na', 60_000, 0)
    await store.hit('n\nb', 30_000, 1)
    const refused = await store.hit('n\nc', 60_000, 2)
    expect(refused).toEqual({ count: Number.MAX_SAFE_INTEGER, resetInMs: 29_999 })
    expect(store.size).toBe(2)
    // The running keys keep counting.
    expect((await store.hit('n\na', 60_000, 3)).count).toBe(2)
    expect((await store.hit('n\nb', 30_000, 4)).count).toBe(2)
    // Once b's window has ended, c takes its place; a's count is untouched.
    expect((await store.hit('n\nc', 60_000, 30_001)).count).toBe(1)
    expect((await store.hit('n\na', 60_000, 30_002)).count).toBe(3)
  })

  test("each limit has its own share: a full one refuses none of another limit's new keys", async () => {
    const store = new MemoryRateLimitStore(2)
    await store.hit('signInHandle\n192.0.2.1\nx', 60_000, 0)
    await store.hit('signInHandle\n192.0.2.1\ny', 60_000, 0)
    expect((await store.hit('signInHandle\n192.0.2.2\nz', 60_000, 1)).count).toBe(Number.MAX_SAFE_INTEGER)
    expect((await store.hit('token\n192.0.2.2', 60_000, 1)).count).toBe(1)
    expect((await store.hit('token', 60_000, 1)).count).toBe(1)
    // A key forgotten (reset) gives its limit's room back, and only its own.
    await store.reset('signInHandle\n192.0.2.1\nx')
    await store.reset('signInHandle\n192.0.2.1\nx')
    expect((await store.hit('signInHandle\n192.0.2.2\nz', 60_000, 2)).count).toBe(1)
    expect((await store.hit('signInHandle\n192.0.2.3\nw', 60_000, 2)).count).toBe(Number.MAX_SAFE_INTEGER)
    expect(store.size).toBe(4)
  })
})

describe('sessions', () => {
  test('random 256-bit ids and CSRF tokens; idle and absolute expiry; destroy', async () => {
    let clock = 1_000_000
    const store = new MemorySessionStore(() => clock)
    const session = await store.create('alice')
    expect(session.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(session.csrfToken).not.toBe(session.id)
    expect(Object.keys(session).sort()).toEqual(['createdAt', 'csrfToken', 'handle', 'id', 'lastSeenAt'])
    // Kept under the hash of the id, never the id.
    expect(store.snapshot().map((stored) => stored.key)).toEqual([sessionKey(session.id)])
    expect(JSON.stringify(store.snapshot())).not.toContain(session.id)
    clock += SESSION_IDLE_MS - 1
    expect(await store.find(session.id)).toEqual({ ...session, lastSeenAt: clock })
    clock += SESSION_IDLE_MS
    expect(await store.find(session.id)).toBeUndefined()
    expect(store.snapshot()).toEqual([])

    const long = await store.create('bob')
    const start = clock
    while (clock + SESSION_IDLE_MS / 2 < start + SESSION_ABSOLUTE_MS) {
      clock += SESSION_IDLE_MS / 2
      expect(await store.find(long.id)).toBeDefined()
    }
    clock = start + SESSION_ABSOLUTE_MS
    expect(await store.find(long.id)).toBeUndefined()

    const gone = await store.create('carol')
    await store.destroy(gone.id)
    expect(await store.find(gone.id)).toBeUndefined()
    expect(await store.find(undefined)).toBeUndefined()
  })

  test('a notice is read once; none is left on an ended session', async () => {
    const store = new MemorySessionStore(() => 0)
    const session = await store.create('alice')
    await store.setNotice(session.id, 'Revoked “ci”.')
    expect(await store.takeNotice(session.id)).toBe('Revoked “ci”.')
    expect(await store.takeNotice(session.id)).toBeUndefined()
    await store.destroy(session.id)
    await store.setNotice(session.id, 'late')
    expect(store.snapshot()).toEqual([])
  })

  test('expired sessions are swept when another is created', async () => {
    let clock = 0
    const store = new MemorySessionStore(() => clock)
    await store.create('alice')
    clock = SESSION_IDLE_MS
    await store.create('bob')
    expect(store.snapshot().map((session) => session.handle)).toEqual(['bob'])
  })
})

describe('CSRF tokens', () => {
  test('constant-time equality, different lengths included', () => {
    expect(safeEqual('abc', 'abc')).toBe(true)
    expect(safeEqual('abc', 'abd')).toBe(false)
    expect(safeEqual('abc', 'abcd')).toBe(false)
  })

  test('a session form needs exactly its own token', () => {
    const session = { csrfToken: 'token' }
    expect(checkSessionCsrf(session, new URLSearchParams('csrf_token=token'))).toBe(true)
    expect(checkSessionCsrf(session, new URLSearchParams('csrf_token=token&csrf_token=token'))).toBe(false)
    expect(checkSessionCsrf(session, new URLSearchParams(''))).toBe(false)
  })

  test('sign-in tokens: bound to the cookie, reused while fresh, expired after an hour', () => {
    let clock = 1_700_000_000_000
    const tokens = new SignInCsrfTokens(() => clock)
    const first = tokens.issue(requestWith({}))
    expect(first.setCookie).toMatch(
      new RegExp(
        `^${SIGNIN_CSRF_COOKIE}=[0-9a-z]+\\.[A-Za-z0-9_-]{43}; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax$`,
      ),
    )
    const cookie = first.setCookie!.split(';')[0]!.split('=')[1]!
    const browser = requestWith({ [SIGNIN_CSRF_COOKIE]: cookie })
    const form = new URLSearchParams({ csrf_token: first.token })
    expect(tokens.check(browser, form)).toBe(true)
    expect(tokens.issue(browser)).toEqual({ token: first.token, setCookie: undefined })
    expect(tokens.check(requestWith({ [SIGNIN_CSRF_COOKIE]: `${cookie}x` }), form)).toBe(false)
    expect(tokens.check(requestWith({}), form)).toBe(false)
    // Another process (another key) never accepts it.
    expect(new SignInCsrfTokens(() => clock).check(browser, form)).toBe(false)
    clock += SIGNIN_CSRF_TTL_MS / 2
    expect(tokens.issue(browser).setCookie).toBeDefined()
    clock += SIGNIN_CSRF_TTL_MS / 2
    expect(tokens.check(browser, form)).toBe(false)
  })

  test('the sign-in cookie is Secure except for loopback over http', () => {
    const tokens = new SignInCsrfTokens(Date.now)
    expect(tokens.issue(requestWith({}, 'https')).setCookie).toMatch(/; Secure$/)
    expect(tokens.issue(requestWith({}, 'http', '203.0.113.9')).setCookie).toMatch(/; Secure$/)
    expect(tokens.issue(requestWith({}, 'http', '::1')).setCookie).not.toMatch(/Secure/)
  })
})

test('escapeHtml escapes the five characters', () => {
  expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
  )
})

describe('expiry', () => {
  test.each([
    ['2030-01-31', Date.UTC(2030, 0, 31)],
    ['2030-01-31T08:30', Date.UTC(2030, 0, 31, 8, 30)],
    ['2030-01-31T08:30:15Z', Date.UTC(2030, 0, 31, 8, 30, 15)],
    ['2030-01-31T08:30+01:00', Date.UTC(2030, 0, 31, 7, 30)],
    ['2028-02-29', Date.UTC(2028, 1, 29)],
  ])('%s', (text, expected) => expect(parseExpiry(text)).toBe(expected))

  test.each([
    '2030-02-30',
    '2029-02-29',
    '2030-13-01',
    '2030-1-1',
    '2030-01-31T24:00',
    '31/01/2030',
    'soon',
    '1e12',
  ])('%s is no date', (text) => expect(parseExpiry(text)).toBeUndefined())
})
