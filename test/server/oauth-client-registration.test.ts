/**
 * Clients that identify themselves, over HTTP on Express, Fastify and Hono: a client ID metadata
 * document served on loopback (with the dev flag) completes the code flow with PKCE and gets no
 * refresh token; without the flag, or when a name resolves to a non-public address, no connection
 * reaches the document server; redirects, oversized, non-JSON and mismatched documents are refused;
 * RFC 7591 registration, its errors, its per-network limit, and the registration store's bounds.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import type { ResolveAll } from '../../examples/server/oauth/client-metadata-fetch.js'
import { MemoryRegistrationStore } from '../../examples/server/oauth/registrations.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { PageAgent } from './oauth-agent.js'
import {
  ALICE_PASSWORD,
  authorizeThroughPages,
  authorizeUrl,
  callApi,
  oauthSeed,
  pkcePair,
  postForm,
  postJson,
  testClock,
} from './oauth-fixtures.js'

const REDIRECT = 'http://127.0.0.1:9911/cb'

// The document server: what each path answers, and every connection it saw.
let documents: Server
let docOrigin = ''
let connections = 0
const answers = new Map<string, (response: import('node:http').ServerResponse) => void>()

function serveJson(path: string, body: unknown, headers: Record<string, string> = {}): string {
  const url = `${docOrigin}${path}`
  answers.set(path, (response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers })
    response.end(typeof body === 'string' ? body : JSON.stringify(body))
  })
  return url
}

function documentFor(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: url,
    client_name: 'Loop Agent',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    ...extra,
  }
}

// Names the injected resolver knows: each resolves to addresses no fetch may reach.
const NAMES: Record<string, readonly string[]> = {
  'ten.test': ['10.0.0.1'],
  'loop.test': ['127.0.0.1'],
  'loop6.test': ['::1'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:10.0.0.1'],
  'mixed.test': ['93.184.215.14', '127.0.0.1'],
}
const resolve: ResolveAll = (hostname, callback) => {
  const addresses = NAMES[hostname]
  if (addresses === undefined)
    return callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), [])
  callback(
    null,
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  )
}

// Document fetches one network may cause within the window on the servers with the flag.
const DOCUMENT_FETCHES = 30

const clock = testClock()
const withFlag = {} as Record<Framework, StartedServer>
const withoutFlag = {} as Record<Framework, StartedServer>

beforeAll(async () => {
  documents = createServer((request, response) => {
    const answer = answers.get(request.url ?? '')
    if (answer === undefined) {
      response.writeHead(404).end()
      return
    }
    answer(response)
  })
  documents.on('connection', () => connections++)
  await new Promise<void>((done) => documents.listen(0, '127.0.0.1', done))
  docOrigin = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`
  const seed = await oauthSeed()
  for (const framework of FRAMEWORKS) {
    const common = {
      seed,
      framework,
      host: '127.0.0.1',
      port: 0,
      now: clock.read,
      trustProxy: ['127.0.0.1'],
    }
    withFlag[framework] = await startServer({
      ...common,
      clientMetadata: { allowHttpLoopback: true, resolve, deadlineMs: 1000 },
      limits: {
        registration: { max: 3, windowMs: 60 * 60_000 },
        registrationSite: { max: 5, windowMs: 60 * 60_000 },
        clientMetadata: { max: DOCUMENT_FETCHES, windowMs: 60 * 60_000 },
      },
    })
    withoutFlag[framework] = await startServer({
      ...common,
      clientMetadata: { resolve },
      // One registration at most: the next one finds the store full.
      registrations: new MemoryRegistrationStore({ maxClients: 1, now: clock.read }),
    })
  }
}, 60_000)

afterAll(async () => {
  await Promise.all(
    [...Object.values(withFlag), ...Object.values(withoutFlag)].map((server) => server.close()),
  )
  await new Promise((done) => documents?.close(done))
})

// The authorization request's answer before sign-in: a 400 page for an unknown client.
async function authorizeStatus(
  origin: string,
  clientId: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return (await authorizeAnswer(origin, clientId, headers)).status
}

async function authorizeAnswer(origin: string, clientId: string, headers: Record<string, string> = {}) {
  const { challenge } = pkcePair()
  const response = await fetch(
    authorizeUrl(origin, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'public',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
    { redirect: 'manual', headers },
  )
  return { status: response.status, headers: response.headers, text: await response.text() }
}

async function codeFlow(origin: string, clientId: string, redirectUri = REDIRECT) {
  const { verifier, challenge } = pkcePair()
  const agent = new PageAgent(origin)
  const { callback, consent } = await authorizeThroughPages(
    agent,
    authorizeUrl(origin, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'public data.overview',
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
    { handle: 'alice', password: ALICE_PASSWORD },
  )
  const code = callback.searchParams.get('code') ?? ''
  const token = await postForm(`${origin}/oauth/token`, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    client_id: clientId,
  })
  return { consent, token }
}

describe.each(FRAMEWORKS)('client ID metadata documents on %s', (framework) => {
  test('the metadata announces documents and registration', async () => {
    const origin = withFlag[framework].url
    const metadata = (await (
      await fetch(`${origin}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>
    expect(metadata.client_id_metadata_document_supported).toBe(true)
    expect(metadata.registration_endpoint).toBe(`${origin}/oauth/register`)
  })

  test('a document on loopback, with the flag: code + PKCE, an access token, no refresh token; the page says so', async () => {
    const origin = withFlag[framework].url
    const url = serveJson(`/${framework}/client.json`, {}, { 'cache-control': 'max-age=600' })
    serveJson(`/${framework}/client.json`, documentFor(url), { 'cache-control': 'max-age=600' })
    const { consent, token } = await codeFlow(origin, url)
    expect(consent).toContain('Application: <strong><bdi>Loop Agent</bdi></strong>')
    expect(consent).toContain(`described by a document on ${new URL(url).host}; not verified by this server`)
    expect(consent).toContain('Unverified application.')
    expect(consent).toContain('It will not get offline access')
    expect(token.status).toBe(200)
    expect(token.body.access_token).toEqual(expect.any(String))
    expect(token.body).not.toHaveProperty('refresh_token')
    expect(await callApi(origin, '/api/v1/user', token.body.access_token as string)).not.toBe(401)
  })

  test('a redirect URI the document does not list is refused', async () => {
    const url = serveJson(`/${framework}/other.json`, {})
    serveJson(`/${framework}/other.json`, documentFor(url))
    const { challenge } = pkcePair()
    const response = await fetch(
      authorizeUrl(withFlag[framework].url, {
        response_type: 'code',
        client_id: url,
        redirect_uri: 'http://127.0.0.1:9911/elsewhere',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual' },
    )
    await response.arrayBuffer()
    expect(response.status).toBe(400)
  })

  test('without the flag, a loopback document URL is refused and the document server sees no connection', async () => {
    const url = serveJson(`/${framework}/noflag.json`, {})
    serveJson(`/${framework}/noflag.json`, documentFor(url))
    const before = connections
    expect(await authorizeStatus(withoutFlag[framework].url, url)).toBe(400)
    expect(connections).toBe(before)
  })

  test.each(Object.keys(NAMES))(
    'a name resolving to a non-public address (%s) is refused before connecting',
    async (name) => {
      const before = connections
      expect(await authorizeStatus(withFlag[framework].url, `https://${name}/${framework}/c.json`)).toBe(400)
      expect(connections).toBe(before)
    },
  )

  test.each<[string, (response: import('node:http').ServerResponse, url: string) => void]>([
    ['a redirect', (response) => response.writeHead(302, { location: '/elsewhere.json' }).end()],
    [
      'an oversized document',
      (response, url) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify(documentFor(url, { client_uri: `https://a.example/${'x'.repeat(6000)}` })),
        )
      },
    ],
    [
      'a non-JSON document',
      (response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>'),
    ],
    ['invalid JSON', (response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{')],
    [
      'another client_id',
      (response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify(documentFor('https://evil.example/c.json')))
      },
    ],
    [
      'a slow document',
      (response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.write('{')
        setTimeout(() => response.end('}'), 3000).unref()
      },
    ],
  ])('%s is refused', async (what, answer) => {
    const path = `/${framework}/${what.replaceAll(' ', '-')}.json`
    const url = `${docOrigin}${path}`
    answers.set(path, (response) => answer(response, url))
    expect(await authorizeStatus(withFlag[framework].url, url)).toBe(400)
  })

  test('document fetches are counted per network: over the limit, 429 with Retry-After, and no fetch', async () => {
    const origin = withFlag[framework].url
    const flooder = FORWARDED(`203.0.113.${FRAMEWORKS.indexOf(framework) + 70}`)
    const url = (n: number) => `${docOrigin}/${framework}/flood.json?n=${n}`
    for (let n = 0; n < DOCUMENT_FETCHES; n++)
      expect(await authorizeStatus(origin, url(n), flooder)).toBe(400)
    const before = connections
    const limited = await authorizeAnswer(origin, url(DOCUMENT_FETCHES), flooder)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.text).toContain('Try again')
    // The token endpoint answers the same in JSON (RFC 6749 §5.2), not invalid_client.
    const token = await postForm(
      `${origin}/oauth/token`,
      {
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: REDIRECT,
        code_verifier: 'v'.repeat(43),
        client_id: url(DOCUMENT_FETCHES + 1),
      },
      flooder,
    )
    expect(token.status).toBe(429)
    expect(token.body.error).toBe('temporarily_unavailable')
    expect(Number(token.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(connections).toBe(before)
    // A cached answer costs no fetch: still answered; another network still fetches.
    expect(await authorizeStatus(origin, url(0), flooder)).toBe(400)
    expect(await authorizeStatus(origin, url(DOCUMENT_FETCHES), FORWARDED('198.51.100.80'))).toBe(400)
    expect(connections).toBe(before + 1)
  })

  test('a document client may not start the device flow', async () => {
    const url = serveJson(`/${framework}/device.json`, {})
    serveJson(`/${framework}/device.json`, documentFor(url))
    const answer = await postForm(`${withFlag[framework].url}/oauth/device_authorization`, { client_id: url })
    expect(answer.status).toBe(401)
    expect(answer.body.error).toBe('invalid_client')
  })
})

const FORWARDED = (address: string) => ({ 'x-forwarded-for': address, 'x-forwarded-proto': 'https' })

describe.each(FRAMEWORKS)('RFC 7591 registration on %s', (framework) => {
  test('a public client registers, completes the code flow, and gets no refresh token', async () => {
    const origin = withFlag[framework].url
    const registered = await postJson(`${origin}/oauth/register`, {
      redirect_uris: [REDIRECT],
      client_name: 'Self CLI',
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      scope: 'public',
    })
    expect(registered.status).toBe(201)
    expect(registered.headers.get('cache-control')).toBe('no-store')
    expect(registered.body).toMatchObject({
      client_id: expect.stringMatching(/^dyn_[0-9A-Za-z]{32}$/),
      client_id_issued_at: Math.floor(clock.now / 1000),
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'none',
      client_name: 'Self CLI',
    })
    expect(registered.body).not.toHaveProperty('client_secret')
    const { consent, token } = await codeFlow(origin, registered.body.client_id as string)
    expect(consent).toContain('registered itself; not verified by this server')
    expect(consent).toContain('It will not get offline access')
    expect(token.status).toBe(200)
    expect(token.body).not.toHaveProperty('refresh_token')
  })

  test.each<[string, unknown, string]>([
    ['no redirect_uris', {}, 'invalid_redirect_uri'],
    ['localhost', { redirect_uris: ['http://localhost:1/cb'] }, 'invalid_redirect_uri'],
    ['plain http', { redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
    ['a fragment', { redirect_uris: ['https://app.example/cb#f'] }, 'invalid_redirect_uri'],
    ['a custom scheme', { redirect_uris: ['app://cb'] }, 'invalid_redirect_uri'],
    [
      'a secret method',
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
    ],
    [
      'client_credentials',
      { redirect_uris: [REDIRECT], grant_types: ['client_credentials'] },
      'invalid_client_metadata',
    ],
    ['token response', { redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
    ['an unknown scope', { redirect_uris: [REDIRECT], scope: 'admin' }, 'invalid_client_metadata'],
    ['a long name', { redirect_uris: [REDIRECT], client_name: 'n'.repeat(101) }, 'invalid_client_metadata'],
    [
      'a name with a right-to-left override',
      { redirect_uris: [REDIRECT], client_name: 'Evil\u202eelgoog' },
      'invalid_client_metadata',
    ],
    ['not JSON', '{', 'invalid_client_metadata'],
  ])('%s: 400 %s', async (_, body, error) => {
    const answer = await postJson(`${withoutFlag[framework].url}/oauth/register`, body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toBe(error)
  })

  test('a flood from one network gets 429 with Retry-After; another network still registers', async () => {
    const url = `${withFlag[framework].url}/oauth/register`
    const body = { redirect_uris: [REDIRECT] }
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await postJson(url, body, FORWARDED('203.0.113.50'))).status)
    expect(statuses).toEqual([201, 201, 201, 429, 429])
    const limited = await postJson(url, body, FORWARDED('203.0.113.50'))
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await postJson(url, body, FORWARDED('198.51.100.60'))).status).toBe(201)
  })

  test.each([
    ['an IPv4 /24', '192.0.2.10', '192.0.2.11', '192.0.3.10'],
    ['an IPv6 /48', '2001:db8:5:1::1', '2001:db8:5:2::1', '2001:db8:6::1'],
  ])('one site (%s) shares a count besides each network’s', async (_, first, neighbour, elsewhere) => {
    const url = `${withFlag[framework].url}/oauth/register`
    const body = { redirect_uris: [REDIRECT] }
    const statuses = async (address: string, times: number) => {
      const answers: number[] = []
      for (let i = 0; i < times; i++) answers.push((await postJson(url, body, FORWARDED(address))).status)
      return answers
    }
    expect(await statuses(first, 3)).toEqual([201, 201, 201])
    // The neighbour's own network is fresh, but the site allows 5 in all.
    expect(await statuses(neighbour, 3)).toEqual([201, 201, 429])
    const limited = await postJson(url, body, FORWARDED(neighbour))
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await statuses(elsewhere, 1)).toEqual([201])
  })

  test('a full store of registrations in use or just made refuses a new one: 429 with Retry-After', async () => {
    const url = `${withoutFlag[framework].url}/oauth/register`
    const body = { redirect_uris: [REDIRECT], client_name: 'First' }
    const first = await postJson(url, body)
    expect(first.status).toBe(201)
    const refused = await postJson(url, { redirect_uris: [REDIRECT] })
    expect(refused.status).toBe(429)
    expect(refused.body.error).toBe('temporarily_unavailable')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // The first registration is still there: its sign-in reaches the sign-in page, not a 400.
    expect(await authorizeStatus(withoutFlag[framework].url, first.body.client_id as string)).toBe(200)
  })
})

describe('MemoryRegistrationStore', () => {
  const registration = { redirectUris: [REDIRECT], name: undefined, scope: undefined }

  test('holds its bound: only an unused one past its grace goes; never a used one; else a refusal', async () => {
    const store = new MemoryRegistrationStore({ maxClients: 3, now: clock.read, graceMs: 1000 })
    for (const id of ['a', 'b', 'c']) expect(await store.add(id, registration)).toEqual({ added: true })
    await store.markUsed('a')
    // b and c were registered just now: a user may be signing in with either.
    expect(await store.add('d', registration)).toEqual({ added: false, retryAfterMs: 1000 })
    clock.advance(400)
    expect(await store.add('d', registration)).toEqual({ added: false, retryAfterMs: 600 })
    clock.advance(600)
    expect(await store.add('d', registration)).toEqual({ added: true })
    expect(await store.size()).toBe(3)
    expect(await store.get('b')).toBeUndefined()
    expect(await store.get('a')).toEqual(registration)
    await store.markUsed('c')
    await store.markUsed('d')
    clock.advance(5000)
    // Every registration is in use: none is pushed out, however old.
    expect(await store.add('e', registration)).toEqual({ added: false, retryAfterMs: 1000 })
    for (const id of ['a', 'c', 'd']) expect(await store.get(id)).toEqual(registration)
    expect(await store.get('e')).toBeUndefined()
    expect(await store.size()).toBe(3)
    await store.markUsed('gone')
  })

  test('an unused registration expires; a used one lives on', async () => {
    const store = new MemoryRegistrationStore({ now: clock.read, unusedTtlMs: 1000, usedTtlMs: 10_000 })
    await store.add('unused', registration)
    await store.add('used', registration)
    await store.markUsed('used')
    clock.advance(1000)
    expect(await store.get('unused')).toBeUndefined()
    expect(await store.get('used')).toEqual(registration)
    clock.advance(9000)
    expect(await store.get('used')).toBeUndefined()
  })

  test('a full store sweeps expired entries before pushing out live ones', async () => {
    const store = new MemoryRegistrationStore({ maxClients: 2, now: clock.read, unusedTtlMs: 1000 })
    await store.add('old', registration)
    clock.advance(1000)
    await store.add('new', registration)
    await store.add('newer', registration)
    expect(await store.get('new')).toEqual(registration)
  })
})
