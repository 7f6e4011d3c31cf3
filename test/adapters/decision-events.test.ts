import { get, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { accessControl as expressAccess } from '../../adapters/express/index.js'
import { accessControl as fastifyAccess } from '../../adapters/fastify/index.js'
import { type AccessEnv, accessControl as honoAccess } from '../../adapters/hono/index.js'
import type { AccessPolicyOptions, DecisionEvent, ErrorContext } from '../../src/index.js'
import { createFixture, type Fixture } from './fixture.js'
import { type RawRequest, sendRaw } from './http-client.js'
import { listening } from './listen.js'
import { FRAMEWORKS, type Framework, type RunningApp } from './running-app.js'

const express = createRequire(import.meta.url)('express') as typeof import('express')

// Issue 27, findings 6 and 7: `onDecision` hears exactly one event per request a policy's adapter
// handled, once the response is done, with the status actually sent; a hook whose promise rejects
// never crashes the host and never changes an answer.

// Requests that reached the handler of /listing/hang, which never answers.
let entered = 0

const OPEN = { kind: 'dataset', publicLevel: 'data' } as const
const open = () => OPEN

// Guards that reached the resolver of /stalled, which answers "no such dataset" (404) only once the
// client has gone: the guard is still deciding when the response closes.
let deciding = 0
const untilGone =
  <R>(socketOf: (request: R) => import('node:net').Socket) =>
  (request: R): Promise<undefined> => {
    deciding++
    const socket = socketOf(request)
    return new Promise((resolve) => {
      if (socket.destroyed) resolve(undefined)
      else socket.once('close', () => resolve(undefined))
    })
  }

// Routes every framework serves the same way:
// - /listing/{ok,missing,broken}: authenticate only; the handler answers 200, 404, or throws (500);
// - /guarded/{ok,broken}: require; the handler answers 200, or throws (500);
// - /shared: `authenticate` of one adapter instance, then `require` of another of the same policy
//   (Express and Hono; Fastify has one plugin instance per scope).
async function startExpress(fixture: Fixture): Promise<RunningApp> {
  const access = expressAccess({ policy: fixture.policy })
  const twin = expressAccess({ policy: fixture.policy })
  const app = express()
  app.get('/listing/ok', access.authenticate, (_req, res) => {
    res.send('ok')
  })
  app.get('/listing/missing', access.authenticate, (_req, res) => {
    res.status(404).send('no such user')
  })
  app.get('/listing/broken', access.authenticate, () => {
    throw new Error('the handler failed')
  })
  app.get('/listing/hang', access.authenticate, () => {
    entered++
  })
  app.get('/guarded/ok', access.require('dataset.overview', open), (_req, res) => {
    res.send('ok')
  })
  app.get('/guarded/broken', access.require('dataset.overview', open), () => {
    throw new Error('the handler failed')
  })
  app.get('/shared', access.authenticate, twin.require('dataset.overview', open), (_req, res) => {
    res.send('ok')
  })
  const gone = untilGone((req: import('express').Request) => req.socket)
  app.get('/stalled', access.authenticate, access.require('dataset.overview', gone), (_req, res) => {
    res.send('not reached')
  })
  app.get('/stalled-guard', access.require('dataset.overview', gone), (_req, res) => {
    res.send('not reached')
  })
  // Express's default error handler logs the stack; the status is all these tests look at.
  app.use((_error: unknown, _req: unknown, res: import('express').Response, _next: unknown) => {
    res.status(500).send('handler error')
  })
  return listening(app.listen(0, '127.0.0.1'))
}

async function startHono(fixture: Fixture): Promise<RunningApp> {
  const access = honoAccess({ policy: fixture.policy, getConnInfo })
  const twin = honoAccess({ policy: fixture.policy, getConnInfo })
  const app = new Hono<AccessEnv>()
  const broken = (): Response => {
    throw new Error('the handler failed')
  }
  app.get('/listing/ok', access.authenticate, (c) => c.text('ok'))
  app.get('/listing/missing', access.authenticate, (c) => c.text('no such user', 404))
  app.get('/listing/broken', access.authenticate, broken)
  app.get('/listing/hang', access.authenticate, () => {
    entered++
    return new Promise<Response>(() => {})
  })
  app.get('/guarded/ok', access.require('dataset.overview', open), (c) => c.text('ok'))
  app.get('/guarded/broken', access.require('dataset.overview', open), broken)
  app.get('/shared', access.authenticate, twin.require('dataset.overview', open), (c) => c.text('ok'))
  const gone = untilGone(
    (c: import('hono').Context) =>
      (c.env as { incoming: { socket: import('node:net').Socket } }).incoming.socket,
  )
  app.get('/stalled', access.authenticate, access.require('dataset.overview', gone), (c) =>
    c.text('not reached'),
  )
  app.get('/stalled-guard', access.require('dataset.overview', gone), (c) => c.text('not reached'))
  app.onError((_error, c) => c.text('handler error', 500))
  return listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
}

async function startFastify(fixture: Fixture): Promise<RunningApp> {
  const app = Fastify()
  await app.register(fastifyAccess, { policy: fixture.policy })
  const listing = { config: { access: {} } }
  const guarded = { config: { access: { operation: 'dataset.overview' as const, resource: open } } }
  const broken = async () => {
    throw new Error('the handler failed')
  }
  app.get('/listing/ok', listing, async () => 'ok')
  app.get('/listing/missing', listing, async (_request, reply) => reply.code(404).send('no such user'))
  app.get('/listing/broken', listing, broken)
  app.get('/listing/hang', listing, () => {
    entered++
    return new Promise<never>(() => {})
  })
  app.get('/guarded/ok', guarded, async () => 'ok')
  app.get('/guarded/broken', guarded, broken)
  // onRequest authenticates, then preHandler's guard waits for the client to go.
  const gone = untilGone((request: import('fastify').FastifyRequest) => request.raw.socket)
  app.get(
    '/stalled',
    { config: { access: { operation: 'dataset.overview', resource: gone } } },
    async () => 'not reached',
  )
  // Requests that end after `onRequest` authenticated them and before `preHandler` runs.
  app.post(
    '/body',
    {
      ...guarded,
      bodyLimit: 64,
      schema: { body: { type: 'object', required: ['table'], properties: { table: { type: 'string' } } } },
    },
    async () => 'ok',
  )
  app.get(
    '/early',
    {
      ...guarded,
      preValidation: async (_request, reply) => reply.code(409).send('answered by a route hook'),
    },
    async () => 'not reached',
  )
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    reply.code(error.statusCode ?? 500).send('error')
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() }
}

const STARTERS: Record<Framework, (fixture: Fixture) => Promise<RunningApp>> = {
  express: startExpress,
  fastify: startFastify,
  hono: startHono,
}

interface Heard {
  readonly events: DecisionEvent[]
  readonly errors: [unknown, ErrorContext][]
}

async function recording(hooks: Pick<AccessPolicyOptions, 'onDecision' | 'onError'> = {}) {
  const heard: Heard = { events: [], errors: [] }
  const fixture = await createFixture({
    onDecision: (event) => heard.events.push(event),
    onError: (error, context) => heard.errors.push([error, context]),
    ...hooks,
  })
  return { fixture, heard }
}

// Long enough for a second event of the same request to show up: each is told on its response's
// `close`, which the server reaches within a turn or two of the loop after the last byte.
const settle = () => new Promise((resolve) => setTimeout(resolve, 100))

describe.each(FRAMEWORKS)('%s: one decision event per request, with the status sent', (framework) => {
  let app: RunningApp
  let fixture: Fixture
  let heard: Heard

  beforeAll(async () => {
    ;({ fixture, heard } = await recording())
    app = await STARTERS[framework](fixture)
  })
  afterAll(() => app.close())

  async function events(request: RawRequest, token?: string) {
    heard.events.length = 0
    const headers = {
      ...request.headers,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    }
    const answer = await sendRaw(app.port, { ...request, headers })
    await expect.poll(() => heard.events.length, { timeout: 5000 }).toBeGreaterThan(0)
    await settle()
    return { status: answer.status, events: heard.events.slice() }
  }

  test.each([
    ['an authenticate-only route that answers 200', '/listing/ok', 200, undefined],
    ['an authenticate-only route that answers 404', '/listing/missing', 404, undefined],
    ['an authenticate-only route whose handler throws', '/listing/broken', 500, undefined],
    ['a guarded route that answers 200', '/guarded/ok', 200, 'dataset.overview'],
    ['a guarded route whose handler throws', '/guarded/broken', 500, 'dataset.overview'],
  ] as const)('%s: allowed, with the status sent', async (_name, path, status, operation) => {
    const heardNow = await events({ path }, fixture.tokens.bob)
    expect(heardNow.status).toBe(status)
    expect(heardNow.events).toEqual([
      {
        allowed: true,
        status,
        ...(operation === undefined ? {} : { operation }),
        userId: 'bob',
        tokenId: expect.any(String),
        clientAddress: '127.0.0.1',
      },
    ])
  })

  test('a request its client abandons while the handler works: one event, when the client goes', async () => {
    heard.events.length = 0
    const before = entered
    const request = get({
      host: '127.0.0.1',
      port: app.port,
      path: '/listing/hang',
      headers: { authorization: `Bearer ${fixture.tokens.bob}` },
    })
    request.on('error', () => {})
    // Generous bounds: the conditions, not the time, are what the test waits for.
    await expect.poll(() => entered, { timeout: 30_000 }).toBeGreaterThan(before)
    expect(heard.events).toEqual([])
    request.destroy()
    await expect.poll(() => heard.events.length, { timeout: 30_000 }).toBeGreaterThan(0)
    await settle()
    expect(heard.events).toMatchObject([{ allowed: true, status: 200, userId: 'bob' }])
  })

  // A client gone while a guard decides: the request's last word is the guard's, told once with the
  // status it decided (nothing was sent), never an earlier step's allow nor a second event.
  test.each(framework === 'fastify' ? ['/stalled'] : ['/stalled', '/stalled-guard'])(
    "a request its client abandons while the guard of %s decides: one event, the guard's answer",
    async (path) => {
      heard.events.length = 0
      const before = deciding
      const request = get({
        host: '127.0.0.1',
        port: app.port,
        path,
        headers: { authorization: `Bearer ${fixture.tokens.bob}` },
      })
      request.on('error', () => {})
      await expect.poll(() => deciding, { timeout: 30_000 }).toBeGreaterThan(before)
      request.destroy()
      await expect.poll(() => heard.events.length, { timeout: 30_000 }).toBeGreaterThan(0)
      await settle()
      expect(heard.events).toEqual([
        {
          allowed: false,
          status: 404,
          code: 'not_found',
          operation: 'dataset.overview',
          userId: 'bob',
          tokenId: expect.any(String),
          clientAddress: '127.0.0.1',
        },
      ])
    },
  )

  test.each(['/listing/ok', '/guarded/ok'])('a denial on %s: one event, its status', async (path) => {
    const heardNow = await events({ path })
    expect(heardNow.status).toBe(401)
    expect(heardNow.events).toEqual([
      { allowed: false, status: 401, code: 'missing_token', clientAddress: '127.0.0.1' },
    ])
  })

  if (framework !== 'fastify') {
    test("two adapter instances of one policy on one request: one event, the last step's", async () => {
      const allowed = await events({ path: '/shared' }, fixture.tokens.bob)
      expect(allowed.events).toMatchObject([{ allowed: true, status: 200, operation: 'dataset.overview' }])
      const refused = await events({ path: '/shared' }, fixture.tokens.revoked)
      expect(refused.events).toMatchObject([{ allowed: false, status: 401, code: 'invalid_token' }])
    })
  } else {
    const json = { 'content-type': 'application/json' }
    test.each([
      ['a body that is not JSON', { body: '{"table":', headers: json }, 400],
      [
        'a body over the route limit',
        { body: JSON.stringify({ table: 'x'.repeat(100) }), headers: json },
        413,
      ],
      ['a media type without a parser', { body: 'table=x', headers: { 'content-type': 'text/csv' } }, 415],
      ['a body the schema refuses', { body: '{}', headers: json }, 400],
    ] as const)(
      'an authenticated request that ends before preHandler (%s): one event, the status sent',
      async (_name, request, status) => {
        const heardNow = await events({ method: 'POST', path: '/body', ...request }, fixture.tokens.bob)
        expect(heardNow.status).toBe(status)
        expect(heardNow.events).toEqual([
          { allowed: true, status, userId: 'bob', tokenId: expect.any(String), clientAddress: '127.0.0.1' },
        ])
      },
    )

    test('a route hook that answers before preHandler: one event, the status sent', async () => {
      const heardNow = await events({ path: '/early' }, fixture.tokens.bob)
      expect(heardNow.status).toBe(409)
      expect(heardNow.events).toMatchObject([{ allowed: true, status: 409, userId: 'bob' }])
    })
  }
})

describe.each(FRAMEWORKS)('%s: hooks whose promises reject', (framework) => {
  const unhandled: unknown[] = []
  const listener = (reason: unknown) => unhandled.push(reason)
  beforeEach(() => {
    unhandled.length = 0
    process.on('unhandledRejection', listener)
  })
  afterEach(() => {
    process.off('unhandledRejection', listener)
  })

  const PATHS = [
    ['/guarded/ok', 'bob', 200],
    ['/listing/missing', 'bob', 404],
    ['/guarded/ok', 'revoked', 401],
    ['/guarded/ok', 'failing', 503],
  ] as const

  test('an async onDecision that rejects is reported to onError; answers are unchanged', async () => {
    const failure = new Error('the audit log is down')
    const { fixture, heard } = await recording({
      onDecision: async () => {
        throw failure
      },
    })
    const app = await STARTERS[framework](fixture)
    try {
      for (const [path, token, status] of PATHS) {
        heard.errors.length = 0
        const answer = await sendRaw(app.port, {
          path,
          headers: { authorization: `Bearer ${fixture.tokens[token]}` },
        })
        expect(answer.status).toBe(status)
        await expect
          .poll(() => heard.errors.some(([error]) => error === failure), { timeout: 5000 })
          .toBe(true)
        expect(heard.errors.filter(([error]) => error === failure)).toEqual([[failure, { stage: 'adapter' }]])
      }
      await settle()
      expect(unhandled).toEqual([])
    } finally {
      await app.close()
    }
  })

  test('an async onError that rejects too is dropped: the process carries on', async () => {
    let decisions = 0
    let reports = 0
    const { fixture } = await recording({
      onDecision: async () => {
        decisions++
        throw new Error('the audit log is down')
      },
      onError: async () => {
        reports++
        throw new Error('so is the error tracker')
      },
    })
    const app = await STARTERS[framework](fixture)
    try {
      for (const [path, token, status] of PATHS) {
        const answer = await sendRaw(app.port, {
          path,
          headers: { authorization: `Bearer ${fixture.tokens[token]}` },
        })
        expect(answer.status).toBe(status)
      }
      // Every request told its event, and every rejection was reported (the store failure once more).
      await expect.poll(() => [decisions, reports], { timeout: 5000 }).toEqual([4, 5])
      await settle()
      expect(unhandled).toEqual([])
    } finally {
      await app.close()
    }
  })
})
