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
import { expectOldestUnusedGoesFirst } from './registration-store-bound.js'

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
      limits: { registration: { max: 3, windowMs: 60 * 60_000 } },
    })
    withoutFlag[framework] = await startServer({ ...common, clientMetadata: { resolve } })
  }
}, 60_000)

afterAll(async () => {
  await Promise.all(
    [...Object.values(withFlag), ...Object.values(withoutFlag)].map((server) => server.close()),
  )
  await new Promise((done) => documents?.close(done))
})

// The authorization request's answer before sign-in: a 400 page for an unknown client.
async function authorizeStatus(origin: string, clientId: string): Promise<number> {
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
    { redirect: 'manual' },
  )
  await response.arrayBuffer()
  return response.status
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
    expect(consent).toContain('Application: <strong>Loop Agent</strong>')
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
      const port = new URL(docOrigin).port
      const before = connections
      expect(
        await authorizeStatus(withFlag[framework].url, `https://${name}:${port}/${framework}/c.json`),
      ).toBe(400)
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
})

describe('MemoryRegistrationStore', () => {
  const registration = { redirectUris: [REDIRECT], name: undefined, scope: undefined }

  test('holds its bound: the oldest unused goes first, then the oldest used', async () => {
    await expectOldestUnusedGoesFirst(
      new MemoryRegistrationStore({ maxClients: 3, now: clock.read }),
      registration,
    )
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
