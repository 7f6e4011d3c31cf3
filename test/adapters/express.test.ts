import { createRequire } from 'node:module'
import type { Request } from 'express'
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from 'vitest'
import { accessControl } from '../../adapters/express/index.js'
import { type Allow, createAccessPolicy, type Principal } from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { endlessChunks, hangUpAfterFirstBytes, listening, storeWithToken } from './listen.js'

const express = createRequire(import.meta.url)('express') as typeof import('express')

let port: number
let close: () => Promise<void>
let token: string
let lookups: () => number
const stream = endlessChunks()

beforeAll(async () => {
  const tokens = await storeWithToken()
  token = tokens.token
  lookups = tokens.lookups
  const access = accessControl({ policy: createAccessPolicy({ tokens: tokens.store }) })
  const app = express()
  const open = () => ({ kind: 'dataset', publicLevel: 'data' }) as const
  // Authentication before the body parser, as a host may order it: `require` still sees the body.
  app.use('/api', access.authenticate)
  app.use(express.json())
  app.post('/api/exports', access.require('export.create', open), (req, res) => {
    res.json({ principal: req.principal?.userId, decision: req.accessDecision })
  })
  app.get(
    '/api/sync-throw',
    access.require('dataset.overview', () => {
      throw new Error('boom')
    }),
    (_req, res) => res.send('unreachable'),
  )
  app.get('/api/unguarded-data', (req, res) => access.sendData(req, res, { body: 'secret rows', records: 1 }))
  app.get('/api/endless', access.require('table.read', open), (req, res) =>
    access.streamData(req, res, stream.chunks),
  )
  ;({ port, close } = await listening(app.listen(0, '127.0.0.1')))
})

afterAll(() => close())

const url = (path: string) => `http://127.0.0.1:${port}${path}`
const auth = () => ({ authorization: `Bearer ${token}` })

describe('Express adapter', () => {
  test('authenticates once, and require refuses an access_token in a body parsed after authentication', async () => {
    const before = lookups()
    const response = await fetch(url('/api/exports'), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: token }),
    })
    expect(response.status).toBe(400)
    expect(await response.text()).not.toContain(token)
    expect(lookups() - before).toBe(1)
  })

  test('hands the principal and the allow decision to the handler', async () => {
    const response = await fetch(url('/api/exports'), { method: 'POST', headers: auth() })
    expect(await response.json()).toEqual({
      principal: 'alice',
      decision: { allowed: true, operation: 'export.create', dataContent: true },
    })
  })

  test('a resolver that throws synchronously is 503', async () => {
    const response = await fetch(url('/api/sync-throw'), { headers: auth() })
    expect(response.status).toBe(503)
  })

  test('sendData on a route no guard allowed is a host error, never data', async () => {
    const response = await fetch(url('/api/unguarded-data'), { headers: auth() })
    expect(response.status).toBe(500)
    expect(await response.text()).not.toContain('secret rows')
  })

  test('a client that hangs up stops the host iterator', async () => {
    expect(await hangUpAfterFirstBytes(port, '/api/endless', auth())).toBe(200)
    await stream.closed
  })

  test('rejects an unknown operation when the route is declared', () => {
    const access = accessControl({ policy: createAccessPolicy({ tokens: new MemoryTokenStore() }) })
    // @ts-expect-error: not an operation
    expect(() => access.require('table.write', () => undefined)).toThrow(/unknown operation "table\.write"/)
  })

  test('middleware carry names and Request is augmented', () => {
    const access = accessControl({ policy: createAccessPolicy({ tokens: new MemoryTokenStore() }) })
    expect(access.authenticate.name).toBe('authenticate')
    expect(access.require('dataset.overview', () => undefined).name).toBe('requireAccess')
    expectTypeOf<Request['principal']>().toEqualTypeOf<Principal | undefined>()
    expectTypeOf<Request['accessDecision']>().toEqualTypeOf<Allow | undefined>()
  })
})
