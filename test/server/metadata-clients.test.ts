/**
 * The metadata-document clients' bounds, on documents served on loopback: a fetch is admitted by
 * the caller's count first (a cached answer costs nothing); one host that never answers holds at
 * most its share of the fetches, and other hosts are still fetched; refusals are kept apart from
 * good documents, so a flood of made-up URLs pushes out no valid client.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  MAX_FETCHES_PER_HOST,
  type MetadataClient,
  MetadataDocumentClients,
  MetadataLookupRefused,
} from '../../examples/server/oauth/metadata-clients.js'

const REDIRECT = 'http://127.0.0.1:9911/cb'

// One document server on 127.0.0.1 and one on [::1]: two hosts. Paths under /tarpit/ never answer.
const servers: Server[] = []
const seen: string[] = []
let v4 = ''
let v6 = ''

function answer(origin: () => string) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? ''
    seen.push(`${origin()}${path}`)
    if (path.startsWith('/tarpit/')) return
    if (!path.startsWith('/good/')) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' })
    response.end(
      JSON.stringify({
        client_id: `${origin()}${path}`,
        client_name: 'Good Agent',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    )
  }
}

async function listen(host: string, origin: () => string): Promise<number> {
  const server = createServer(answer(origin))
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, host, done))
  return (server.address() as AddressInfo).port
}

beforeAll(async () => {
  const port4 = await listen('127.0.0.1', () => v4)
  v4 = `http://127.0.0.1:${port4}`
  const port6 = await listen('::1', () => v6)
  v6 = `http://[::1]:${port6}`
})

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

// Counts admissions; refuses once `max` were given.
function admission(max = Number.POSITIVE_INFINITY) {
  const counter = { asked: 0 }
  const admit = async () => {
    counter.asked++
    return counter.asked <= max ? { ok: true as const } : { ok: false as const, retryAfter: 42 }
  }
  return { counter, admit }
}

function documents(options: ConstructorParameters<typeof MetadataDocumentClients>[0] = {}) {
  return new MetadataDocumentClients({ allowHttpLoopback: true, warn: () => {}, ...options })
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!condition() && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10))
  expect(condition()).toBe(true)
}

describe('MetadataDocumentClients: the count of fetches', () => {
  test('a fetch is admitted first; a refused one throws rate-limited and connects nowhere', async () => {
    const clients = documents()
    const { counter, admit } = admission(1)
    const url = `${v4}/good/admitted.json`
    expect((await clients.lookup(url, admit))?.client.name).toBe('Good Agent')
    expect(counter.asked).toBe(1)
    const before = seen.length
    const refused = await clients.lookup(`${v4}/good/other.json`, admit).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(MetadataLookupRefused)
    expect(refused).toMatchObject({ reason: 'rate-limited', retryAfter: 42 })
    expect(seen.length).toBe(before)
  })

  test('cached documents and refusals cost nothing; a URL that may name no document neither', async () => {
    const clients = documents()
    const { counter, admit } = admission()
    await clients.lookup(`${v4}/good/cached.json`, admit)
    await clients.lookup(`${v4}/missing.json`, admit)
    expect(counter.asked).toBe(2)
    for (let i = 0; i < 5; i++) {
      expect(await clients.lookup(`${v4}/good/cached.json`, admit)).toBeDefined()
      expect(await clients.lookup(`${v4}/missing.json`, admit)).toBeUndefined()
      expect(await clients.lookup('https://10.0.0.1/c.json', admit)).toBeUndefined()
    }
    expect(counter.asked).toBe(2)
  })
})

describe('MetadataDocumentClients: fetches in flight', () => {
  test(`one host holds at most ${MAX_FETCHES_PER_HOST}; another host is still fetched`, async () => {
    const clients = documents()
    const { admit } = admission()
    const held = [1, 2].map((i) => clients.lookup(`${v4}/tarpit/c.json?n=${i}`, admit))
    await until(() => seen.filter((url) => url.includes('/tarpit/c.json?n=')).length === 2)
    expect(clients.fetchesTo('127.0.0.1')).toBe(MAX_FETCHES_PER_HOST)
    const busy = await clients.lookup(`${v4}/tarpit/c.json?n=3`, admit).catch((error: unknown) => error)
    expect(busy).toMatchObject({ reason: 'busy' })
    expect((busy as MetadataLookupRefused).retryAfter).toBeGreaterThan(0)
    // The host that answers is not held up by the one that does not.
    expect((await clients.lookup(`${v6}/good/elsewhere.json`, admit))?.host).toBe(new URL(v6).host)
    // A busy answer is not remembered: once the fetches end, the URL is fetched.
    for (const server of servers) server.closeAllConnections()
    await Promise.all(held)
    expect(clients.fetchesTo('127.0.0.1')).toBe(0)
    const before = seen.length
    const again = clients.lookup(`${v4}/tarpit/c.json?n=3`, admit)
    await until(() => seen.length > before)
    for (const server of servers) server.closeAllConnections()
    expect(await again).toBeUndefined()
  })

  test('the cap over all hosts holds too, and a busy server spends nobody’s allowance', async () => {
    const clients = documents({ maxFetches: 2, maxFetchesPerHost: 5 })
    const { counter, admit } = admission()
    const held = [
      clients.lookup(`${v4}/tarpit/all.json?n=1`, admit),
      clients.lookup(`${v6}/tarpit/all.json?n=2`, admit),
    ]
    await until(() => seen.filter((url) => url.includes('/tarpit/all.json')).length === 2)
    expect([clients.fetchesTo('127.0.0.1'), clients.fetchesTo('[::1]')]).toEqual([1, 1])
    const asked = counter.asked
    await expect(clients.lookup(`${v4}/good/all.json`, admit)).rejects.toMatchObject({ reason: 'busy' })
    expect(counter.asked).toBe(asked)
    // A lookup of a URL in flight joins it: no second fetch, no count.
    const joined = clients.lookup(`${v4}/tarpit/all.json?n=1`, admit)
    expect(counter.asked).toBe(asked)
    for (const server of servers) server.closeAllConnections()
    expect(await Promise.all([...held, joined])).toEqual([undefined, undefined, undefined])
  })
})

describe('MetadataDocumentClients: the caches', () => {
  test('a flood of refused URLs pushes out no valid document', async () => {
    const clients = documents({ maxEntries: 2, maxRefusals: 3 })
    const { admit } = admission()
    const good = `${v4}/good/kept.json`
    const first: MetadataClient | undefined = await clients.lookup(good, admit)
    expect(first).toBeDefined()
    for (let i = 0; i < 10; i++) {
      expect(await clients.lookup(`${v4}/flood.json?n=${i}`, admit)).toBeUndefined()
    }
    const before = seen.length
    expect(await clients.lookup(good, admit)).toBe(first)
    expect(seen.length).toBe(before)
  })

  test('refusals are bounded: the oldest is fetched again once pushed out', async () => {
    const clients = documents({ maxRefusals: 2 })
    const { counter, admit } = admission()
    for (const n of [1, 2, 3]) await clients.lookup(`${v4}/bounded.json?n=${n}`, admit)
    await clients.lookup(`${v4}/bounded.json?n=3`, admit)
    expect(counter.asked).toBe(3)
    await clients.lookup(`${v4}/bounded.json?n=1`, admit)
    expect(counter.asked).toBe(4)
  })
})
