import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import Fastify, { type FastifyInstance } from 'fastify'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { accessControl as expressAccess } from '../../adapters/express/index.js'
import { accessControl as fastifyAccess } from '../../adapters/fastify/index.js'
import { type AccessEnv, accessControl as honoAccess } from '../../adapters/hono/index.js'
import {
  type AccessPolicy,
  createAccessPolicy,
  type DecisionEvent,
  type Principal,
  parseScopes,
  type Resource,
} from '../../src/index.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createApiToken } from '../../src/tokens/token-record.js'
import { sendRaw } from './http-client.js'
import { listening } from './listen.js'
import type { RunningApp } from './running-app.js'

const express = createRequire(import.meta.url)('express') as typeof import('express')

// Issue 27, finding 1: a principal is bound to the policy that authenticated it. One app, two
// policies: a user policy that lets anonymous callers in over plain HTTP, in front of everything,
// and an admin policy on its own store guarding /admin. Before the fix, the admin routes took the
// user policy's principal (a user's token, or no token at all) and a principal the host set.

interface Policies {
  readonly user: AccessPolicy
  readonly admin: AccessPolicy
  readonly userToken: string
  readonly adminToken: string
  /** A second admin-store token, of a user who is not root. */
  readonly opsToken: string
  readonly adminEvents: DecisionEvent[]
}

async function policies(): Promise<Policies> {
  const userStore = new MemoryTokenStore()
  const adminStore = new MemoryTokenStore()
  const now = Date.now() - 1000
  const user = createApiToken({ userId: 'alice', name: 'user', scopes: 'data.edit', now })
  const admin = createApiToken({ userId: 'root', name: 'admin', scopes: 'data.edit', now })
  const ops = createApiToken({ userId: 'ops', name: 'ops', scopes: 'data.edit', now })
  await userStore.save(user.record)
  await adminStore.save(admin.record)
  await adminStore.save(ops.record)
  const adminEvents: DecisionEvent[] = []
  return {
    user: createAccessPolicy({ tokens: userStore, allowAnonymous: true, requireHttps: false }),
    admin: createAccessPolicy({ tokens: adminStore, onDecision: (event) => adminEvents.push(event) }),
    userToken: user.value,
    adminToken: admin.value,
    opsToken: ops.value,
    adminEvents,
  }
}

// Public data: any principal the admin policy accepted would read it, so only authentication
// stands between a caller and the page.
const ADMIN_PAGE: Resource = { kind: 'dataset', publicLevel: 'data' }

// A public table: the user policy lets an anonymous caller read its rows.
const OPEN_TABLE: Resource = { kind: 'dataset', publicLevel: 'data' }
const ROWS = { body: '{"rows":[[1]]}', records: 1 } as const

// What a host's session code might put on a request (or an attacker hope it would).
const FORGED: Principal = Object.freeze({
  kind: 'token',
  userId: 'root',
  scopes: parseScopes('data.edit'),
  tokenId: 'forged',
  tokenKind: 'api',
})

// The user policy's `authenticate` runs in front of /api, /admin and /host; the admin policy alone
// guards /root. A host middleware sets a principal on /host and /forged.
async function startExpress(p: Policies): Promise<RunningApp> {
  const users = expressAccess({ policy: p.user })
  const admins = expressAccess({ policy: p.admin })
  const app = express()
  app.use(['/host', '/forged'], (req, _res, next) => {
    req.principal = FORGED
    next()
  })
  app.use(['/api', '/admin', '/host'], users.authenticate)
  app.get('/api/me', (req, res) => {
    res.json({ caller: req.principal?.userId ?? null })
  })
  const page = admins.require('dataset.metadata', () => ADMIN_PAGE)
  const seen = (req: import('express').Request, res: import('express').Response) => {
    res.json({ caller: req.principal?.userId ?? null, operation: req.accessDecision?.operation ?? null })
  }
  for (const path of ['/admin/page', '/host/admin/page', '/root/page', '/forged/root/page']) {
    app.get(path, page, seen)
  }
  // The admin policy's authenticate then require: the second trusts the first (same policy).
  app.get('/root/both', admins.authenticate, page, seen)
  // Rows allowed by the user policy, sent through each policy's sendData.
  const rows = users.require('table.read', () => OPEN_TABLE)
  app.get('/rows/own', rows, (req, res) => users.sendData(req, res, ROWS))
  app.get('/rows/other', rows, (req, res) => admins.sendData(req, res, ROWS))
  return listening(app.listen(0, '127.0.0.1'))
}

async function startHono(p: Policies): Promise<RunningApp> {
  const users = honoAccess({ policy: p.user, getConnInfo })
  const admins = honoAccess({ policy: p.admin, getConnInfo })
  const app = new Hono<AccessEnv>()
  for (const path of ['/host/*', '/forged/*']) {
    app.use(path, async (c, next) => {
      c.set('principal', FORGED)
      await next()
    })
  }
  for (const path of ['/api/*', '/admin/*', '/host/*']) app.use(path, users.authenticate)
  app.get('/api/me', (c) => c.json({ caller: c.get('principal').userId ?? null }))
  const page = admins.require('dataset.metadata', () => ADMIN_PAGE)
  const seen = (c: import('hono').Context<AccessEnv>) =>
    c.json({
      caller: c.get('principal').userId ?? null,
      operation: c.get('accessDecision')?.operation ?? null,
    })
  for (const path of ['/admin/page', '/host/admin/page', '/root/page', '/forged/root/page']) {
    app.get(path, page, seen)
  }
  app.get('/root/both', admins.authenticate, page, seen)
  const rows = users.require('table.read', () => OPEN_TABLE)
  app.get('/rows/own', rows, (c) => users.sendData(c, ROWS))
  app.get('/rows/other', rows, (c) => admins.sendData(c, ROWS))
  return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
}

const STARTERS = { express: startExpress, hono: startHono } as const

describe.each(['express', 'hono'] as const)('%s: two accessControl instances, two policies', (framework) => {
  let p: Policies
  let app: RunningApp

  beforeAll(async () => {
    p = await policies()
    app = await STARTERS[framework](p)
  })
  afterAll(() => app.close())

  const get = async (path: string, token?: string) => {
    const answer = await sendRaw(app.port, {
      path,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    })
    return { status: answer.status, body: answer.status === 200 ? JSON.parse(answer.body) : answer.body }
  }

  test('the user policy admits its own token and anonymous callers', async () => {
    expect(await get('/api/me', p.userToken)).toEqual({ status: 200, body: { caller: 'alice' } })
    expect(await get('/api/me')).toEqual({ status: 200, body: { caller: null } })
  })

  test.each([
    ["the user policy's token", '/admin/page', 'user', 401],
    ['no token (the user policy made it anonymous)', '/admin/page', undefined, 401],
    ['a principal the host set, and no token', '/host/admin/page', undefined, 401],
    ["a principal the host set, and the user policy's token", '/host/admin/page', 'user', 401],
    ['a principal the host set on its own routes, and no token', '/forged/root/page', undefined, 401],
  ] as const)('the admin policy refuses %s', async (_name, path, token, status) => {
    const answer = await get(path, token === 'user' ? p.userToken : undefined)
    expect(answer.status).toBe(status)
  })

  test("the admin policy admits its own token, and the handler sees the admin policy's principal", async () => {
    for (const path of ['/root/page', '/forged/root/page', '/root/both']) {
      expect(await get(path, p.adminToken)).toEqual({
        status: 200,
        body: { caller: 'root', operation: 'dataset.metadata' },
      })
    }
  })

  test("sendData meters only against its own policy's allow, never another policy's", async () => {
    expect(await get('/rows/own')).toEqual({ status: 200, body: { rows: [[1]] } })
    // The admin policy allowed nothing on this request: its sendData refuses (a host bug, loudly).
    expect((await get('/rows/other')).status).toBe(500)
  })

  test("authenticate then require of one policy: one decision event, the last step's", async () => {
    p.adminEvents.length = 0
    expect((await get('/root/both', p.adminToken)).status).toBe(200)
    await expect.poll(() => p.adminEvents.length).toBeGreaterThan(0)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(p.adminEvents).toMatchObject([{ allowed: true, status: 200, operation: 'dataset.metadata' }])
  })
})

// Fastify refuses a second plugin instance inside the first one's scope, and its `preHandler` trusts
// only what its own `onRequest` authenticated: the same attacks fail there too.
describe('fastify: the equivalent cannot happen', () => {
  let p: Policies
  let app: FastifyInstance
  let port: number

  beforeAll(async () => {
    p = await policies()
    app = Fastify()
    // Sibling scopes, one policy each: the user policy's routes, the admin policy's routes.
    app.register(async (scope) => {
      await scope.register(fastifyAccess, { policy: p.user })
      scope.get('/api/me', { config: { access: {} } }, async (request) => ({
        caller: request.principal?.userId ?? null,
      }))
    })
    app.register(async (scope) => {
      await scope.register(fastifyAccess, { policy: p.admin })
      // A host hook before the plugin's and one between its two steps, both setting a principal.
      scope.addHook('onRequest', async (request) => {
        if (request.url.startsWith('/host')) request.principal = FORGED
      })
      scope.addHook('preValidation', async (request) => {
        if (request.url.startsWith('/host')) request.principal = FORGED
      })
      const access = { operation: 'dataset.metadata' as const, resource: () => ADMIN_PAGE }
      const seen = async (request: import('fastify').FastifyRequest) => ({
        caller: request.principal?.userId ?? null,
      })
      scope.get('/admin/page', { config: { access } }, seen)
      scope.get('/host/admin/page', { config: { access } }, seen)
      // A page for root alone: another admin-store user gets 404.
      const rootOnly = {
        operation: 'dataset.metadata' as const,
        resource: (request: import('fastify').FastifyRequest) =>
          request.principal?.userId === 'root' ? ADMIN_PAGE : undefined,
      }
      scope.get('/host/admin/root-only', { config: { access: rootOnly } }, seen)
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as AddressInfo).port
  })
  afterAll(() => app.close())

  const get = (path: string, token?: string) =>
    sendRaw(port, { path, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })

  test("a second instance inside the first one's scope is refused at startup", async () => {
    const nested = Fastify()
    nested.register(fastifyAccess, { policy: p.user })
    nested.register(async (scope) => {
      await scope.register(fastifyAccess, { policy: p.admin })
    })
    await expect(nested.ready()).rejects.toThrow()
    await nested.close()
  })

  test.each([
    ["the user policy's token", '/admin/page', 'user', 401],
    ['no token', '/admin/page', undefined, 401],
    ['a principal a host hook set, and no token', '/host/admin/page', undefined, 401],
    ["a principal a host hook set, and the user policy's token", '/host/admin/page', 'user', 401],
  ] as const)('the admin routes refuse %s', async (_name, path, token, status) => {
    expect((await get(path, token === 'user' ? p.userToken : undefined)).status).toBe(status)
  })

  test("a principal a host hook sets between the plugin's two steps is not the one decided on", async () => {
    // The host's hooks set root's principal after `onRequest` authenticated ops; `preHandler`
    // decides on (and sets back) the principal its own `onRequest` authenticated.
    expect((await get('/host/admin/root-only', p.opsToken)).status).toBe(404)
    const answer = await get('/host/admin/root-only', p.adminToken)
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ caller: 'root' })
  })

  test('each sibling instance guards its own routes with its own policy', async () => {
    expect(JSON.parse((await get('/api/me')).body)).toEqual({ caller: null })
    expect(JSON.parse((await get('/api/me', p.userToken)).body)).toEqual({ caller: 'alice' })
    expect((await get('/admin/page', p.adminToken)).status).toBe(200)
  })
})
