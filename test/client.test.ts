import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { ApiError, createClient, ForbiddenError, NotFoundError, UnauthorizedError } from '../src/client.js'

const TOKEN = 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5'
const seen: IncomingMessage[] = []
let server: Server
let origin: string

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req)
    const url = new URL(req.url ?? '/', 'http://x')
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      return send(401, { error: { status: 401, message: 'Invalid credentials', code: 'invalid_token' } })
    }
    if (url.pathname === '/api/v1/organizations/acme/datasets') {
      const page = url.searchParams.get('pageToken')
      if (page === null) return send(200, { results: [{ owner: 'acme', name: 'a' }], nextPageToken: 'p2' })
      return send(200, { results: [{ owner: 'acme', name: 'b' }], nextPageToken: null })
    }
    if (url.pathname === '/api/v1/users/bob/datasets') return send(200, { results: [] })
    if (url.pathname === '/api/v1/forbidden')
      return send(403, { error: { status: 403, message: 'Not authorized', code: 'insufficient_scope' } })
    if (url.pathname === '/api/v1/broken') {
      res.writeHead(500)
      return res.end('oops')
    }
    return send(404, { error: { status: 404, message: 'Not found', code: 'not_found' } })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
afterEach(() => {
  seen.length = 0
  vi.unstubAllEnvs()
})

describe('createClient', () => {
  test('follows nextPageToken with maxResults and sends the bearer header', async () => {
    const client = createClient({ baseUrl: origin, token: TOKEN })
    const names: string[] = []
    for await (const dataset of client.listDatasets({ organization: 'acme' }, { maxResults: 1 }))
      names.push(dataset.name)
    expect(names).toEqual(['a', 'b'])
    expect(seen.map((req) => req.url)).toEqual([
      '/api/v1/organizations/acme/datasets?maxResults=1',
      '/api/v1/organizations/acme/datasets?maxResults=1&pageToken=p2',
    ])
  })

  test('reads the token from SERVICE_API_TOKEN', async () => {
    vi.stubEnv('SERVICE_API_TOKEN', TOKEN)
    const client = createClient({ baseUrl: `${origin}/api/v1` })
    const all = []
    for await (const dataset of client.listDatasets({ user: 'bob' })) all.push(dataset)
    expect(all).toEqual([])
  })

  test('a missing token is an error before any request', () => {
    vi.stubEnv('SERVICE_API_TOKEN', '')
    expect(() => createClient({ baseUrl: origin })).toThrow(/SERVICE_API_TOKEN/)
    expect(seen).toHaveLength(0)
  })

  test.each([
    ['http://data.example.org', /must use https/],
    ['ftp://127.0.0.1', /must use https/],
    ['not a url', /is not an absolute URL/],
  ])('refuses %s', (baseUrl, message) => {
    expect(() => createClient({ baseUrl, token: TOKEN })).toThrow(message)
  })

  test.each(['https://data.example.org', 'http://localhost:3000', 'http://[::1]:3000', 'http://127.0.0.2'])(
    'accepts %s',
    (baseUrl) => {
      expect(() => createClient({ baseUrl, token: TOKEN })).not.toThrow()
    },
  )

  test.each([
    ['a bad token', { token: 'dap_wrong' }, '/anything', UnauthorizedError, 401, 'invalid_token'],
    ['a forbidden path', {}, '/forbidden', ForbiddenError, 403, 'insufficient_scope'],
    ['an unknown path', {}, '/missing', NotFoundError, 404, 'not_found'],
    ['a server error', {}, '/broken', ApiError, 500, undefined],
  ])('maps %s to a typed error', async (_name, extra, path, type, status, reason) => {
    const client = createClient({ baseUrl: origin, token: TOKEN, ...extra })
    const error = await client.request(path).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(type)
    expect(error).toMatchObject({ status, reason, code: 'ERR_CLIENT' })
    expect(String((error as Error).message)).not.toContain(TOKEN)
  })

  test.each(['https://evil.example/x', 'http://127.0.0.1:1/api/v1/x', '../../etc', '../x'])(
    'never sends the token outside the service: %s',
    async (path) => {
      const client = createClient({ baseUrl: origin, token: TOKEN })
      await expect(client.request(path)).rejects.toThrow(/is not a path under \/api\/v1\//)
      expect(seen).toHaveLength(0)
    },
  )
})
