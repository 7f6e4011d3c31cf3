import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { type Context, Hono } from 'hono'
import type { ConnInfo } from 'hono/conninfo'
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from 'vitest'
import { type AccessEnv, accessControl } from '../../adapters/hono/index.js'
import {
  type AccessPolicy,
  type Allow,
  ConfigError,
  compileExportRestrictions,
  createAccessPolicy,
  type Principal,
} from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import type { TokenStore } from '../../src/tokens/token-store.js'
import { sendRaw } from './http-client.js'
import { endlessChunks, hangUpAfterFirstBytes, listening, storeWithToken } from './listen.js'

let token: string
let app: Hono<AccessEnv>
const open = () => ({ kind: 'dataset', publicLevel: 'data' }) as const
const stream = endlessChunks()

// A fixed peer for requests served in-process, where no socket exists.
const loopback = (): ConnInfo => ({ remote: { address: '127.0.0.1', addressType: 'IPv4' } })

function buildApp(store: TokenStore, connInfo: (c: Context) => ConnInfo) {
  const access = accessControl({ policy: createAccessPolicy({ tokens: store }), getConnInfo: connInfo })
  const hono = new Hono<AccessEnv>()
  hono.get('/open', access.require('dataset.overview', open), (c) =>
    c.text(`hello ${c.get('principal').userId}`),
  )
  hono.post('/exports', access.require('export.create', open), async (c) => {
    const body = await c.req.json<{ table: string }>()
    return c.text(`export of ${body.table}`)
  })
  hono.get('/stream', access.require('table.read', open), (c) =>
    access.streamData(
      c,
      (async function* () {
        yield { data: 'abc', records: 1 }
        throw new Error('host iterator failed')
      })(),
    ),
  )
  hono.get('/endless', access.require('table.read', open), (c) => access.streamData(c, stream.chunks))
  // Hono's default error handler logs; these tests only look at the status.
  hono.onError((_error, c) => c.text('handler error', 500))
  return { hono, access }
}

beforeAll(async () => {
  const tokens = await storeWithToken()
  token = tokens.token
  app = buildApp(tokens.store, loopback).hono
})

const auth = () => ({ authorization: `Bearer ${token}` })

describe('Hono adapter without Node bindings (app.request)', () => {
  test('a good token', async () => {
    const response = await app.request('/open', { headers: auth() })
    expect(await response.text()).toBe('hello alice')
  })

  test('repeated Authorization headers arrive comma-joined and are refused', async () => {
    const headers = new Headers()
    headers.append('authorization', `Bearer ${token}`)
    headers.append('authorization', `Bearer ${token}`)
    const response = await app.request('/open', { headers })
    expect(response.status).toBe(400)
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="data-api", error="invalid_request"')
  })

  test('the handler can still read a JSON body the access_token check parsed', async () => {
    const response = await app.request('/exports', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"table":"visits"}',
    })
    expect(await response.text()).toBe('export of visits')
  })

  test('a malformed JSON body is left to the handler', async () => {
    const response = await app.request('/exports', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{',
    })
    expect(response.status).toBe(500)
  })

  test('a failing source errors the stream, so the transfer breaks', async () => {
    const response = await app.request('/stream', { headers: auth() })
    expect(response.status).toBe(200)
    await expect(response.text()).rejects.toThrow()
  })

  test('a getConnInfo that throws is 503, not a crash', async () => {
    const { hono } = buildApp(new MemoryTokenStore(), () => {
      throw new Error('no socket here')
    })
    expect((await hono.request('/open', { headers: auth() })).status).toBe(503)
  })
})

describe('Hono adapter on @hono/node-server', () => {
  let port: number
  let close: () => Promise<void>

  beforeAll(async () => {
    const tokens = await storeWithToken()
    token = tokens.token
    const { hono } = buildApp(tokens.store, getConnInfo)
    // Without the global Response override, @hono/node-server pre-reads streams and reports an
    // early error as the end of a complete, Content-Length-framed body: the socket must break.
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false })
    ;({ port, close } = await listening(server as Parameters<typeof listening>[0]))
    expect((server.address() as AddressInfo).port).toBe(port)
  })

  afterAll(() => close())

  test('a failing source breaks the transfer even when the server pre-reads the stream', async () => {
    const response = await sendRaw(port, { path: '/stream', headers: auth() })
    expect(response.complete).toBe(false)
    expect(response.body.length).toBeLessThanOrEqual(3)
  })

  test('a client that hangs up stops the host iterator', async () => {
    expect(await hangUpAfterFirstBytes(port, '/endless', auth())).toBe(200)
    await stream.closed
  })
})

describe('Hono adapter options and types', () => {
  test('an invalid trustProxy fails at construction', () => {
    const build = () =>
      accessControl({
        policy: createAccessPolicy({ tokens: new MemoryTokenStore() }),
        getConnInfo: loopback,
        trustProxy: 'loopback, 10.0.0.0/40',
      })
    expect(build).toThrow(ConfigError)
    expect(build).toThrow(/^trustProxy: "10\.0\.0\.0\/40"/)
  })

  test('middleware carry names; variables are typed', () => {
    const access = accessControl({
      policy: createAccessPolicy({ tokens: new MemoryTokenStore() }),
      getConnInfo: loopback,
    })
    expect(access.authenticate.name).toBe('authenticate')
    expect(access.require('dataset.overview', open).name).toBe('requireAccess')
    expectTypeOf<AccessEnv['Variables']['principal']>().toEqualTypeOf<Principal>()
    expectTypeOf<AccessEnv['Variables']['accessDecision']>().toEqualTypeOf<Allow>()
  })
})

describe('Hono adapter: the protocol is the connection’s, not the request target’s', () => {
  test('an absolute-form https:// target over plain HTTP is still plain HTTP', async () => {
    const tokens = await storeWithToken()
    const access = accessControl({
      policy: createAccessPolicy({ tokens: tokens.store }),
      getConnInfo,
      trustProxy: '127.0.0.1',
    })
    const hono = new Hono<AccessEnv>()
    hono.get('/open', access.require('dataset.overview', open), (c) => c.text('served'))
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' })
    await listening(server as unknown as import('node:http').Server)
    const port = ((server as unknown as import('node:http').Server).address() as AddressInfo).port
    try {
      // A remote client behind the trusted proxy, which forwards no X-Forwarded-Proto.
      const headers = { authorization: `Bearer ${tokens.token}`, 'x-forwarded-for': '203.0.113.9' }
      const absolute = await sendRaw(port, { path: `https://127.0.0.1:${port}/open`, headers })
      const origin = await sendRaw(port, { path: '/open', headers })
      expect(origin.status).toBe(403)
      expect(absolute.status).toBe(403)
      expect(JSON.parse(absolute.body)).toEqual({
        error: { status: 403, message: 'Not authorized', code: 'https_required' },
      })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

// Issue 27, finding 11: a getConnInfo that gives no address (a runtime without one) leaves the peer
// unknown, and an unknown peer vouches for nothing even under `trustProxy: true`: its forwarding
// headers neither choose the client address nor make plain HTTP https.
describe('Hono adapter: a peer without an address', () => {
  // A host's own policy object that fills in the address of its internal network when the facts
  // name none: a client without an address must reach it as "no address", not as an unknown one.
  test("a host's own policy sees facts that name no address, and its default applies", async () => {
    const tokens = await storeWithToken()
    const built = createAccessPolicy({ tokens: tokens.store })
    const policy: AccessPolicy = {
      ...built,
      guard: (principal, operation, resolve, facts) =>
        built.guard(principal, operation, resolve, { clientAddress: '10.1.2.3', ...facts }),
    }
    const access = accessControl({ policy, getConnInfo: () => ({ remote: {} }) })
    const restricted = compileExportRestrictions({ allowedIps: ['10.0.0.0/8'] })
    const hono = new Hono<AccessEnv>()
    const publicExport = () =>
      ({ kind: 'dataset', publicLevel: 'data', exportRestrictions: restricted }) as const
    hono.get('/rows', access.require('table.read', publicExport), (c) => c.text('rows'))
    const answer = await hono.request('https://api.example/rows', {
      headers: { authorization: `Bearer ${tokens.token}` },
    })
    expect([answer.status, await answer.text()]).toEqual([200, 'rows'])
  })

  test('its X-Forwarded-For and X-Forwarded-Proto count for nothing, even trusting every peer', async () => {
    const tokens = await storeWithToken()
    const access = accessControl({
      policy: createAccessPolicy({ tokens: tokens.store }),
      getConnInfo: () => ({ remote: {} }),
      trustProxy: true,
    })
    const hono = new Hono<AccessEnv>()
    hono.get('/open', access.require('dataset.overview', open), (c) => c.text('served'))
    hono.get('/origin', (c) => c.json(access.requestOrigin(c)))
    const { port, close } = await listening(
      serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }) as import('node:http').Server,
    )
    try {
      const headers = { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' }
      const origin = await sendRaw(port, { path: '/origin', headers })
      expect(JSON.parse(origin.body)).toEqual({ protocol: 'http' })
      const answer = await sendRaw(port, {
        path: '/open',
        headers: { ...headers, authorization: `Bearer ${tokens.token}` },
      })
      // Plain HTTP from a client that is not known to be loopback.
      expect(answer.status).toBe(403)
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'https_required' } })
    } finally {
      await close()
    }
  })
})
