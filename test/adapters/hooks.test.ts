import { createRequire } from 'node:module'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { accessControl as expressAccess } from '../../adapters/express/index.js'
import { accessControl as honoAccess } from '../../adapters/hono/index.js'
import type { DecisionEvent, ErrorContext } from '../../src/index.js'
import { startApp } from './apps.js'
import { createFixture, type Fixture, RESOLVER_FAILURE, STORE_FAILURE } from './fixture.js'
import { sendRaw } from './http-client.js'
import { listening } from './listen.js'
import { FRAMEWORKS, type RunningApp } from './running-app.js'

const express = createRequire(import.meta.url)('express') as typeof import('express')

// `onDecision` is told of every request an adapter authenticates or guards, once its response is
// done; `onError` of every failure behind a 503, with the very value thrown.
interface Heard {
  readonly events: DecisionEvent[]
  readonly errors: [unknown, ErrorContext][]
}

async function recording(): Promise<{ fixture: Fixture; heard: Heard }> {
  const heard: Heard = { events: [], errors: [] }
  const fixture = await createFixture({
    onDecision: (event) => heard.events.push(event),
    onError: (error, context) => heard.errors.push([error, context]),
  })
  return { fixture, heard }
}

const METADATA = '/api/v1/datasets/acme/members/metadata'
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe.each(FRAMEWORKS)('%s tells the policy hooks', (framework) => {
  let app: RunningApp
  let fixture: Fixture
  let heard: Heard

  beforeAll(async () => {
    ;({ fixture, heard } = await recording())
    app = await startApp(framework, fixture, false)
  })
  afterAll(() => app.close())

  async function hear(path: string, token?: string, method = 'GET') {
    heard.events.length = 0
    heard.errors.length = 0
    const answer = await sendRaw(app.port, {
      method,
      path,
      headers: token === undefined ? {} : bearer(token),
    })
    await vi.waitFor(() => expect(heard.events.length).toBeGreaterThan(0), { timeout: 5000 })
    return answer
  }

  test('an allow: one event with the operation, the user, the token id and the address', async () => {
    const answer = await hear(METADATA, fixture.tokens.alice)
    expect(answer.status).toBe(200)
    expect(heard.events).toEqual([
      {
        allowed: true,
        status: 200,
        operation: 'dataset.metadata',
        userId: 'alice',
        tokenId: expect.any(String),
        clientAddress: '127.0.0.1',
      },
    ])
    expect(heard.errors).toEqual([])
  })

  test('a failed authentication: one event with its code, no operation', async () => {
    await hear(METADATA)
    expect(heard.events).toEqual([
      { allowed: false, status: 401, code: 'missing_token', clientAddress: '127.0.0.1' },
    ])
    await hear(METADATA, fixture.tokens.revoked)
    expect(heard.events).toEqual([
      { allowed: false, status: 401, code: 'invalid_token', clientAddress: '127.0.0.1' },
    ])
  })

  test('a denial after authentication: the code, the operation and who was refused', async () => {
    const answer = await hear(METADATA, fixture.tokens.carol)
    expect(answer.status).toBe(404)
    expect(heard.events).toEqual([
      {
        allowed: false,
        status: 404,
        code: 'not_found',
        operation: 'dataset.metadata',
        userId: 'carol',
        tokenId: expect.any(String),
        clientAddress: '127.0.0.1',
      },
    ])
  })

  test('a resolver that throws: 503, and onError hears the very error at stage resolver', async () => {
    const answer = await hear('/api/v1/datasets/acme/broken', fixture.tokens.alice)
    expect(answer.status).toBe(503)
    expect(heard.errors).toHaveLength(1)
    expect(heard.errors[0]![0]).toBe(RESOLVER_FAILURE)
    expect(heard.errors[0]![1]).toEqual({ stage: 'resolver' })
    expect(heard.events).toMatchObject([{ allowed: false, status: 503, code: 'service_unavailable' }])
  })

  test('a token store that throws: 503, and onError hears the very error at stage store', async () => {
    const answer = await hear(METADATA, fixture.tokens.failing)
    expect(answer.status).toBe(503)
    expect(heard.errors).toHaveLength(1)
    expect(heard.errors[0]![0]).toBe(STORE_FAILURE)
    expect(heard.errors[0]![1]).toEqual({ stage: 'store' })
    expect(heard.events).toEqual([
      { allowed: false, status: 503, code: 'service_unavailable', clientAddress: '127.0.0.1' },
    ])
  })

  test('a token store that hangs: 503 after the timeout, told as a store failure', async () => {
    const answer = await hear(METADATA, fixture.tokens.hanging)
    expect(answer.status).toBe(503)
    expect(heard.errors.map(([, context]) => context)).toEqual([{ stage: 'store' }])
  })

  test('an authenticate-only route: one allow event without an operation', async () => {
    const answer = await hear('/api/v1/users/bob/datasets', fixture.tokens.bob)
    expect(answer.status).toBe(200)
    expect(heard.events).toEqual([
      { allowed: true, status: 200, userId: 'bob', tokenId: expect.any(String), clientAddress: '127.0.0.1' },
    ])
  })

  test('no event and no error ever carries a token value', async () => {
    const all: unknown[] = []
    for (const token of Object.values(fixture.tokens)) {
      for (const path of [METADATA, '/api/v1/datasets/acme/broken', '/api/v1/users/bob/datasets']) {
        await hear(path, token)
        all.push(...heard.events, ...heard.errors.map(([error, context]) => [String(error), context]))
      }
    }
    const text = JSON.stringify(all)
    for (const token of Object.values(fixture.tokens)) expect(text).not.toContain(token)
  })
})

describe.each(FRAMEWORKS)('%s: a hook that throws changes no answer', (framework) => {
  let app: RunningApp
  let fixture: Fixture

  beforeAll(async () => {
    fixture = await createFixture({
      onDecision: () => {
        throw new Error('the log shipper is down')
      },
      onError: () => {
        throw new Error('so is the error tracker')
      },
    })
    app = await startApp(framework, fixture, false)
  })
  afterAll(() => app.close())

  test.each([
    ['an allow', METADATA, 'alice', 200],
    ['a denial', METADATA, 'carol', 404],
    ['a resolver failure', '/api/v1/datasets/acme/broken', 'alice', 503],
    ['a store failure', METADATA, 'failing', 503],
  ] as const)('%s', async (_name, path, token, status) => {
    const answer = await sendRaw(app.port, { path, headers: bearer(fixture.tokens[token]) })
    expect(answer.status).toBe(status)
  })
})

// With `authenticate` in front of `require`, the request still gets one event: the final one.
describe('authenticate in front of require tells one event per request', () => {
  test.each(['express', 'hono'] as const)('%s', async (framework) => {
    const { fixture, heard } = await recording()
    const resolve = (principal: { userId?: string } | undefined) =>
      fixture.describe('acme', 'members', principal as never)
    let server: { port: number; close: () => Promise<void> }
    if (framework === 'express') {
      const access = expressAccess({ policy: fixture.policy })
      const web = express()
      web.use('/api', access.authenticate)
      web.get(
        '/api/guarded',
        access.require('dataset.metadata', (req) => resolve(req.principal)),
        (_req, res) => {
          res.send('ok')
        },
      )
      web.get('/api/open', (_req, res) => {
        res.send('ok')
      })
      server = await listening(web.listen(0, '127.0.0.1'))
    } else {
      const access = honoAccess({ policy: fixture.policy, getConnInfo })
      const web = new Hono()
      web.use('/api/*', access.authenticate)
      web.get(
        '/api/guarded',
        access.require('dataset.metadata', (c) => resolve(c.get('principal'))),
        (c) => c.text('ok'),
      )
      web.get('/api/open', (c) => c.text('ok'))
      server = await listening(serve({ fetch: web.fetch, port: 0, hostname: '127.0.0.1' }) as never)
    }
    try {
      const guarded = await sendRaw(server.port, {
        path: '/api/guarded',
        headers: bearer(fixture.tokens.bob),
      })
      expect(guarded.status).toBe(200)
      await vi.waitFor(() => expect(heard.events.length).toBeGreaterThan(0))
      expect(heard.events).toMatchObject([{ allowed: true, operation: 'dataset.metadata', userId: 'bob' }])

      heard.events.length = 0
      const open = await sendRaw(server.port, { path: '/api/open', headers: bearer(fixture.tokens.bob) })
      expect(open.status).toBe(200)
      await vi.waitFor(() => expect(heard.events.length).toBeGreaterThan(0))
      expect(heard.events).toEqual([
        {
          allowed: true,
          status: 200,
          userId: 'bob',
          tokenId: expect.any(String),
          clientAddress: '127.0.0.1',
        },
      ])

      heard.events.length = 0
      const refused = await sendRaw(server.port, {
        path: '/api/guarded',
        headers: bearer(fixture.tokens.carol),
      })
      expect(refused.status).toBe(404)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(heard.events).toMatchObject([{ allowed: false, status: 404, operation: 'dataset.metadata' }])
    } finally {
      await server.close()
    }
  })
})
