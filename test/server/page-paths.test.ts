/**
 * The pages behind a path prefix: the one helper that makes page addresses from `--public-url`'s
 * path (web/page-paths.ts), `next` kept a same-site path under the prefix, the cookies' `Path`, the
 * front door that routes `/PREFIX/…` without the prefix, a prefix that a route begins with refused,
 * and what a prefixed server's pages hand to a browser over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createApp, refuseAmbiguousPrefix } from '../../examples/server/app.js'
import { type Console, run } from '../../examples/server/cli.js'
import { routeTarget } from '../../examples/server/http/front-door.js'
import { PublicOrigin } from '../../examples/server/public-origin.js'
import type { ApiRequest } from '../../examples/server/routes/route-set.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { SignInCsrfTokens } from '../../examples/server/web/csrf.js'
import { DeviceCookies } from '../../examples/server/web/device-cookies.js'
import { safeNext } from '../../examples/server/web/next-path.js'
import { PagePaths } from '../../examples/server/web/page-paths.js'
import { clearedSessionCookie, sessionCookie } from '../../examples/server/web/sessions.js'
import { signInLocation } from '../../examples/server/web/web-context.js'
import { ALICE_PASSWORD, oauthSeed } from './oauth-fixtures.js'
import { cookieAttributes, csrfOf, WebClient } from './web-client.js'

const dap = new PagePaths('/dap')
const root = new PagePaths()

const loopback = { protocol: 'http', clientAddress: '127.0.0.1', cookies: {} } as unknown as ApiRequest

describe('PagePaths', () => {
  test.each([
    [root, '/signin', undefined, '/signin'],
    [dap, '/signin', undefined, '/dap/signin'],
    [dap, '/', undefined, '/dap/'],
    [
      dap,
      '/signin',
      { next: '/dap/oauth/authorize?a=1&b=2' },
      '/dap/signin?next=/dap/oauth/authorize%3Fa%3D1%26b%3D2',
    ],
    [dap, '/device?consent=x', { more: 'a b' }, '/dap/device?consent=x&more=a%20b'],
    [new PagePaths('/a/b'), '/settings/tokens', undefined, '/a/b/settings/tokens'],
  ])('%o.to(%s, %o) is %s', (paths, route, query, expected) => {
    expect(paths.to(route, query)).toBe(expected)
  })

  test.each([
    [dap, '/dap/signin', '/signin'],
    [dap, '/dap/oauth/authorize?a=1', '/oauth/authorize?a=1'],
    [dap, '/dap', '/'],
    [dap, '/dap?x=1', '/?x=1'],
    [dap, '/dapper/signin', undefined],
    [dap, '/signin', undefined],
    [dap, '/.well-known/oauth-authorization-server/dap', undefined],
    [root, '/signin', '/signin'],
  ])('%o.route(%s) is %s', (paths, target, expected) => {
    expect(paths.route(target)).toBe(expected)
  })

  test('the cookie path is the prefix, or / without one', () => {
    expect(dap.cookiePath).toBe('/dap')
    expect(root.cookiePath).toBe('/')
  })

  test.each(['dap', '/dap/', '/', '/a//b', '/a?b'])('refuses the prefix %j', (prefix) => {
    expect(() => new PagePaths(prefix)).toThrow(TypeError)
  })

  test('refuses a route path that is not path-absolute', () => {
    expect(() => dap.to('signin')).toThrow(/starts with '\/'/)
  })

  test("PublicOrigin's pages are those of the public URL's path", () => {
    expect(new PublicOrigin('https://data.example.org/dap').pages.prefix).toBe('/dap')
    expect(new PublicOrigin('https://data.example.org').pages.prefix).toBe('')
    expect(new PublicOrigin(undefined).pages.prefix).toBe('')
  })
})

describe('next under a prefix', () => {
  test.each([
    '/dap/settings/tokens',
    '/dap/oauth/authorize?client_id=cli&scope=data.data%20wokflow.read&state=x',
    '/dap/device?consent=abc',
  ])('keeps %s', (next) => expect(safeNext(next, dap)).toBe(next))

  test.each([
    // Outside the prefix: another application on the same host.
    '/settings/tokens',
    '/oauth/authorize?client_id=cli',
    '/dapper/settings/tokens',
    '/other/dap/settings/tokens',
    // Out of the prefix by dot segments, escapes or slashes.
    '/dap/../admin',
    '/dap/./settings',
    '/dap/%2e%2e/admin',
    '/dap/%2F%2Fevil.example',
    '/dap//evil.example',
    '/dap/\\evil.example',
    '/dap\\..\\admin',
    // Off-site.
    'https://evil.example/dap/settings/tokens',
    '//evil.example/dap/settings/tokens',
    '/\\evil.example/dap',
    'http:/dap/settings/tokens',
    '/dap/settings#x',
    '/dap/a b',
    'dap/settings/tokens',
  ])('drops %j', (next) => expect(safeNext(next, dap)).toBeUndefined())

  test('the sign-in address is under the prefix and carries next as it is', () => {
    expect(signInLocation(dap, '/dap/settings/tokens')).toBe('/dap/signin?next=/dap/settings/tokens')
    expect(signInLocation(dap, undefined)).toBe('/dap/signin')
    const location = signInLocation(dap, '/dap/oauth/authorize?a=1&b=2')
    expect(new URLSearchParams(location.split('?')[1]).get('next')).toBe('/dap/oauth/authorize?a=1&b=2')
  })
})

describe("the pages' cookies under a prefix", () => {
  test.each([
    ['the session', () => sessionCookie({ id: 'x' } as never, loopback, dap.cookiePath)],
    ['the cleared session', () => clearedSessionCookie(loopback, dap.cookiePath)],
    [
      'the sign-in CSRF cookie',
      () => new SignInCsrfTokens(Date.now, undefined, dap.cookiePath).issue(loopback).setCookie!,
    ],
    [
      'the cleared sign-in CSRF cookie',
      () => new SignInCsrfTokens(Date.now, undefined, dap.cookiePath).clearedCookie(loopback),
    ],
    [
      'the device cookie',
      () => new DeviceCookies(Date.now, undefined, dap.cookiePath).issue(loopback, 'alice'),
    ],
  ])('%s has Path=/dap', (_name, line) => {
    expect(cookieAttributes(line()).path).toBe('/dap')
  })
})

describe('the front door and the prefix', () => {
  const app = { origin: new PublicOrigin('https://data.example.org/dap') }

  test.each([
    ['/dap/signin', '/signin'],
    ['/dap/api/v1/datasets/acme/claims', '/api/v1/datasets/acme/claims'],
    ['/dap', '/'],
    // A proxy that strips the prefix, and the well-known locations at the host's root.
    ['/signin', '/signin'],
    ['/.well-known/oauth-authorization-server/dap', '/.well-known/oauth-authorization-server/dap'],
    ['/dapper', '/dapper'],
    [undefined, undefined],
  ])('routes %s as %s', (target, expected) => {
    expect(routeTarget(app, target)).toBe(expected)
  })

  test('a prefix that a route begins with is refused, naming --public-url', async () => {
    const server = await createApp(await oauthSeed(), { publicUrl: 'https://data.example.org/gw' })
    expect(() => refuseAmbiguousPrefix(new PublicOrigin('https://h/api'), server.routeSets)).toThrow(
      /^--public-url: path "\/api" is also where the server's route GET \/api\/v1\/.* begins: choose another path$/,
    )
    expect(() => refuseAmbiguousPrefix(new PublicOrigin('https://h/gw'), server.routeSets)).not.toThrow()
  })

  test('…and is exit code 2 with one line from the command line', async () => {
    const out: string[] = []
    const err: string[] = []
    const io: Console = { out: (line) => out.push(line), err: (line) => err.push(line) }
    expect(await run(['--public-url', 'https://h/settings', '--port', '0'], io)).toEqual({ exitCode: 2 })
    expect(err).toEqual([expect.stringMatching(/^--public-url: path "\/settings" is also where/)])
    expect(out).toEqual([])
  })
})

describe('a server with --public-url http://127.0.0.1:PORT/dap, over HTTP', () => {
  let server: StartedServer
  let client: WebClient

  beforeAll(async () => {
    server = await startServer({
      seed: await oauthSeed(),
      framework: 'express',
      host: '127.0.0.1',
      port: 0,
      publicUrl: 'http://127.0.0.1:9/dap',
    })
    client = new WebClient(server.port)
  })

  afterAll(async () => {
    await server?.close()
  })

  // Every address a page hands out: links, form actions, redirects.
  const addresses = (body: string) => [...body.matchAll(/(?:href|action)="([^"]*)"/g)].map((m) => m[1]!)

  test('a signed-out page sends the browser to sign in under the prefix, next included', async () => {
    const answer = await client.get('/dap/settings/tokens')
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe('/dap/signin?next=/dap/settings/tokens')
  })

  test('the sign-in page posts under the prefix and sets its cookie on the prefix', async () => {
    const page = await client.get('/dap/signin?next=/dap/settings/tokens')
    expect(page.status).toBe(200)
    expect(addresses(page.body)).toEqual(['/dap/settings/tokens', '/dap/signin', '/dap/signin'])
    expect(page.body).toContain('name="next" value="/dap/settings/tokens"')
    expect(page.setCookies.map((line) => cookieAttributes(line).path)).toEqual(['/dap'])
  })

  test('a next outside the prefix is dropped: sign-in leads to the token list under the prefix', async () => {
    const form = await client.get('/dap/signin')
    const answer = await client.post('/dap/signin', {
      handle: 'alice',
      password: ALICE_PASSWORD,
      csrf_token: csrfOf(form.body),
      next: '/settings/tokens',
    })
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe('/dap/settings/tokens')
    expect(answer.setCookies.map((line) => cookieAttributes(line).path)).toEqual(['/dap', '/dap', '/dap'])
    const list = await client.get('/dap/settings/tokens')
    expect(list.status).toBe(200)
    const outside = addresses(list.body).filter((address) => !address.startsWith('/dap/'))
    expect(outside).toEqual([])
  })

  test('the device page posts under the prefix', async () => {
    const page = await client.get('/dap/device')
    expect(page.status).toBe(200)
    expect(addresses(page.body)).toContain('/dap/device')
    expect(addresses(page.body).filter((address) => !address.startsWith('/dap/'))).toEqual([])
  })
})
