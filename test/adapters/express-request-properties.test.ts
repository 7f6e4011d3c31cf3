import { IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import { Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { accessControl } from '../../adapters/express/index.js'
import { prepareRequest, readPrincipal, storeAccess } from '../../adapters/express/request-properties.js'
import { type Allow, createAccessPolicy, type Principal, parseScopes } from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createApiToken } from '../../src/tokens/token-record.js'
import { listening } from './listen.js'

const express = createRequire(import.meta.url)('express') as typeof import('express')

// `req.principal` and `req.accessDecision` live in accessors on Express's shared request prototype
// (a speed-up): what a host reads must be what it would read from plain properties.

let port: number
let close: () => Promise<void>
const tokens: Record<string, string> = {}

beforeAll(async () => {
  const store = new MemoryTokenStore()
  for (const userId of ['alice', 'bob']) {
    const { record, value } = createApiToken({
      userId,
      name: 't',
      scopes: 'data.metadata',
      now: Date.now() - 1000,
    })
    await store.save(record)
    tokens[userId] = value
  }
  const access = accessControl({ policy: createAccessPolicy({ tokens: store }) })
  const own = (req: { params: { owner?: string | string[] }; principal: Principal }) =>
    req.params.owner === req.principal.userId
      ? ({ kind: 'dataset', publicLevel: 'none', userLevel: 'metadata' } as const)
      : undefined
  const seen = (req: import('express').Request) => ({
    principal: req.principal?.userId ?? null,
    decision: req.accessDecision?.operation ?? null,
  })

  // A mounted app's requests take its own prototype on the way in and the parent's on the way out.
  const sub = express()
  sub.get('/:owner/metadata', access.require('dataset.metadata', own), (req, res, next) => {
    res.setHeader('x-in-sub', JSON.stringify(seen(req)))
    next()
  })
  const app = express()
  app.use('/api', access.authenticate)
  app.use('/api/datasets', sub)
  app.use('/api/datasets', (req, res) => res.json(seen(req)))
  // A host's own session middleware that sets the principal before any guard runs.
  app.use('/session', (req, _res, next) => {
    req.principal = { kind: 'token', userId: 'carol', scopes: parseScopes('data.metadata') }
    next()
  })
  app.get('/session/:owner/metadata', access.require('dataset.metadata', own), (req, res) =>
    res.json(seen(req)),
  )
  // A request that no guard touched.
  app.get('/plain', (req, res) => res.json({ ...seen(req), keys: Object.keys(req).includes('principal') }))
  ;({ port, close } = await listening(app.listen(0, '127.0.0.1')))
})

afterAll(() => close())

const get = (path: string, token?: string) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  })

describe('Express request properties', () => {
  test('are seen inside a mounted app and after it, in the parent', async () => {
    const response = await get('/api/datasets/alice/metadata', tokens.alice)
    expect(response.status).toBe(200)
    expect(JSON.parse(response.headers.get('x-in-sub')!)).toEqual({
      principal: 'alice',
      decision: 'dataset.metadata',
    })
    expect(await response.json()).toEqual({ principal: 'alice', decision: 'dataset.metadata' })
  })

  test('belong to their own request when requests interleave', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'alice' : 'bob')).map(async (user) => {
        const response = await get(`/api/datasets/${user}/metadata`, tokens[user])
        return [user, (await response.json()) as { principal: string }] as const
      }),
    )
    for (const [user, body] of answers) expect(body.principal).toBe(user)
  })

  // Issue 27: a principal the host set is not the policy's: the guard authenticates the request
  // itself, and its own principal replaces the host's.
  test('a principal the host set before the guard is not trusted, and is replaced', async () => {
    expect((await get('/session/carol/metadata')).status).toBe(401)
    const response = await get('/session/alice/metadata', tokens.alice)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ principal: 'alice', decision: 'dataset.metadata' })
  })

  test('are unset on a request no guard touched', async () => {
    const response = await get('/plain', tokens.alice)
    expect(await response.json()).toEqual({ principal: null, decision: null, keys: false })
  })
})

describe('prepareRequest', () => {
  const message = () => new IncomingMessage(new Socket())

  test('leaves a prototype chain that already defines the properties as it is', () => {
    const shared = Object.create(IncomingMessage.prototype, { principal: { value: 'host', writable: true } })
    const req = message()
    Object.setPrototypeOf(req, Object.create(shared))
    prepareRequest(req)
    expect(Object.getOwnPropertyDescriptor(shared, 'accessDecision')).toBeUndefined()
    ;(req as unknown as { principal: string }).principal = 'set'
    expect(Object.hasOwn(req, 'principal')).toBe(true)
  })

  test('adds nothing to a request outside an Express app, nor to Node itself', () => {
    const req = message()
    prepareRequest(req)
    prepareRequest(Object.create(null) as object)
    expect(Object.getOwnPropertyDescriptor(IncomingMessage.prototype, 'principal')).toBeUndefined()
    expect('principal' in req).toBe(false)
  })

  test('adds accessors once to the prototype Express apps share', () => {
    const shared = Object.create(IncomingMessage.prototype) as object
    const app = Object.create(shared) as object
    const first = message()
    const second = message()
    Object.setPrototypeOf(first, app)
    Object.setPrototypeOf(second, Object.create(app))
    prepareRequest(first)
    prepareRequest(second)
    const descriptor = Object.getOwnPropertyDescriptor(shared, 'principal')!
    expect(typeof descriptor.get).toBe('function')
    expect(Object.getOwnPropertyDescriptor(app, 'principal')).toBeUndefined()
    const holder = first as unknown as { principal?: string; accessDecision?: string }
    holder.principal = 'alice'
    holder.accessDecision = 'allow'
    expect([holder.principal, holder.accessDecision]).toEqual(['alice', 'allow'])
    expect((second as unknown as { principal?: string }).principal).toBeUndefined()
    expect(Object.keys(first)).not.toContain('principal')
  })

  test('answers whether the adapter may go to the values directly', () => {
    const ours = message()
    Object.setPrototypeOf(ours, Object.create(Object.create(IncomingMessage.prototype)))
    expect(prepareRequest(ours)).toBe(true)
    const hosts = message()
    Object.setPrototypeOf(
      hosts,
      Object.create(
        Object.create(IncomingMessage.prototype, { principal: { value: 'host', writable: true } }),
      ),
    )
    expect(prepareRequest(hosts)).toBe(false)
    expect(prepareRequest(message())).toBe(false)
    expect(prepareRequest(Object.create(null) as object)).toBe(false)
  })

  test('a value the host stored on the request itself is read as the host reads it', () => {
    const app = Object.create(Object.create(IncomingMessage.prototype)) as object
    const req = message()
    Object.setPrototypeOf(req, app)
    const host = { kind: 'token', userId: 'carol' } as unknown as Principal
    // Stored before the adapter ever ran: an own property, which hides any accessor added later.
    ;(req as unknown as { principal: Principal }).principal = host
    const direct = prepareRequest(req)
    expect(direct).toBe(false)
    expect(readPrincipal(req as { principal?: Principal }, direct)).toBe(host)
    const later = message()
    Object.setPrototypeOf(later, app)
    Object.defineProperty(later, 'accessDecision', { value: undefined, writable: true })
    expect(prepareRequest(later)).toBe(false)
  })

  test('a prototype seen again gives the same answer', () => {
    const app = Object.create(Object.create(IncomingMessage.prototype)) as object
    const first = message()
    const second = message()
    Object.setPrototypeOf(first, app)
    Object.setPrototypeOf(second, app)
    expect([prepareRequest(first), prepareRequest(second)]).toEqual([true, true])
  })
})

describe('readPrincipal and storeAccess', () => {
  const message = () => new IncomingMessage(new Socket())
  const principal = { kind: 'token', userId: 'alice' } as unknown as Principal
  const allow = { allowed: true, operation: 'dataset.metadata' } as unknown as Allow
  type Holder = { principal?: Principal; accessDecision?: Allow }

  test('directly: what they store, the properties read, and the other way round', () => {
    const req = message() as unknown as Holder
    Object.setPrototypeOf(req, Object.create(Object.create(IncomingMessage.prototype)))
    const direct = prepareRequest(req)
    expect(direct).toBe(true)
    expect(readPrincipal(req, direct)).toBeUndefined()
    storeAccess(req, direct, principal)
    expect([req.principal, req.accessDecision]).toEqual([principal, undefined])
    storeAccess(req, direct, principal, allow)
    expect([req.principal, req.accessDecision]).toEqual([principal, allow])
    const other = { kind: 'token', userId: 'bob' } as unknown as Principal
    req.principal = other
    expect(readPrincipal(req, direct)).toBe(other)
    const fresh = message() as unknown as Holder
    Object.setPrototypeOf(fresh, Object.getPrototypeOf(req))
    storeAccess(fresh, prepareRequest(fresh), principal, allow)
    expect([fresh.principal, fresh.accessDecision]).toEqual([principal, allow])
  })

  test('through the properties where a host defined them', () => {
    const req = message() as unknown as Holder
    Object.setPrototypeOf(
      req,
      Object.create(
        Object.create(IncomingMessage.prototype, {
          principal: { value: undefined, writable: true },
          accessDecision: { value: undefined, writable: true },
        }),
      ),
    )
    const direct = prepareRequest(req)
    expect(direct).toBe(false)
    storeAccess(req, direct, principal)
    expect([Object.hasOwn(req, 'principal'), Object.hasOwn(req, 'accessDecision')]).toEqual([true, false])
    storeAccess(req, direct, principal, allow)
    expect([req.principal, req.accessDecision]).toEqual([principal, allow])
    expect(readPrincipal(req, direct)).toBe(principal)
  })
})
