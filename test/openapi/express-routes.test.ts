import express, { type RequestHandler } from 'express'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { accessControl, type SkippedRoute } from '../../adapters/express/index.js'
import {
  createAccessPolicy,
  createApiToken,
  type DatasetResource,
  InvalidArgumentError,
  MemoryTokenStore,
} from '../../src/index.js'
import { describeRoutes, type RouteDescription, securitySchemes } from '../../src/openapi/index.js'
import { listening } from '../adapters/listen.js'
import { expectValidDocument } from './validate.js'

// `access.routes(app)` over a real Express 5 app: the routes a host guards with `require` and
// `authenticate`, wherever it registers them, found by walking the app's router.

const tokens = new MemoryTokenStore()
const policy = createAccessPolicy({ tokens, realm: 'data-api' })
const dataset = (): DatasetResource => ({ kind: 'dataset', publicLevel: 'none', userLevel: 'metadata' })
const ok: RequestHandler = (_req, res) => {
  res.json({ ok: true })
}

function hostApp() {
  const access = accessControl({ policy })
  const app = express()
  // The common form: the guard among the route's handlers.
  app.get('/api/v1/datasets/:owner/:name/metadata', access.require('dataset.metadata', dataset), ok)
  app.get('/api/v1/organizations/:org/datasets', access.authenticate, ok)
  // Unguarded: not a route of the policy's.
  app.get('/health', ok)
  // A router mounted under a prefix, with a route of `access.route` on it (listed once, prefixed).
  const api = express.Router()
  api.post('/datasets/:owner/:name/tables/:table/rows', access.require('dataset.update', dataset), ok)
  access.route(
    api,
    { method: 'GET', path: '/datasets/:owner/:name', operation: 'dataset.overview', resource: dataset },
    ok,
  )
  app.use('/api/v2', api)
  // A guard mounted with `use` covers the routes under its path registered after it.
  app.use('/admin', access.authenticate)
  app.get('/admin/users', ok)
  app.delete('/admin/datasets/:owner/:name', access.require('dataset.delete', dataset), ok)
  // One path, a guard per method: authenticate for all, an operation for POST.
  app
    .route('/workflows/:owner/:name')
    .all(access.authenticate)
    .get(ok)
    .post(access.require('workflow.run', dataset), ok)
  // What no OpenAPI path says: skipped, and told.
  app.get(/^\/legacy\/(\d+)$/, access.require('dataset.metadata', dataset), ok)
  app.get('/files/*path', access.require('dataset.metadata', dataset), ok)
  app.all('/anything', access.require('dataset.metadata', dataset), ok)
  // A second route on a method and path already guarded: Express never reaches it.
  app.get('/api/v1/organizations/:org/datasets', access.authenticate, ok)
  // A route of `access.route` on a router the app never mounts: listed as registered.
  access.route(express.Router(), { method: 'GET', path: '/detached' }, ok)
  return { access, app }
}

describe('access.routes(app) walks the Express router', () => {
  const { access, app } = hostApp()
  const skipped: SkippedRoute[] = []
  const routes = access.routes(app, { onSkip: (route) => skipped.push(route) })

  test('lists every guarded route with its requirement, mount prefixes included, in order', () => {
    expect(routes).toEqual<RouteDescription[]>([
      { method: 'GET', path: '/api/v1/datasets/:owner/:name/metadata', operation: 'dataset.metadata' },
      { method: 'GET', path: '/api/v1/organizations/:org/datasets', operation: 'authenticated' },
      {
        method: 'POST',
        path: '/api/v2/datasets/:owner/:name/tables/:table/rows',
        operation: 'dataset.update',
      },
      { method: 'GET', path: '/api/v2/datasets/:owner/:name', operation: 'dataset.overview' },
      { method: 'GET', path: '/admin/users', operation: 'authenticated' },
      { method: 'DELETE', path: '/admin/datasets/:owner/:name', operation: 'dataset.delete' },
      { method: 'GET', path: '/workflows/:owner/:name', operation: 'authenticated' },
      { method: 'POST', path: '/workflows/:owner/:name', operation: 'workflow.run' },
      { method: 'GET', path: '/detached', operation: 'authenticated' },
    ])
  })

  test('tells of each guarded route it cannot describe, with the reason', () => {
    expect(skipped).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/^\\/legacy\\/(\\d+)$/',
        requirement: 'dataset.metadata',
      }),
      expect.objectContaining({ method: 'GET', path: '/files/*path', requirement: 'dataset.metadata' }),
      expect.objectContaining({ path: '/anything', requirement: 'dataset.metadata' }),
    ])
    expect(skipped.map((route) => route.reason)).toEqual([
      expect.stringContaining('not a plain path'),
      expect.stringContaining('not a plain path'),
      expect.stringContaining('all methods'),
    ])
  })

  test('describeRoutes makes a valid document of them', async () => {
    const paths = describeRoutes(routes)
    expect(paths['/api/v2/datasets/{owner}/{name}/tables/{table}/rows']?.post?.security).toEqual([
      { bearer: ['data.edit'] },
    ])
    await expectValidDocument({
      openapi: '3.1.0',
      info: { title: 'Data API', version: '1.0.0' },
      components: { securitySchemes: securitySchemes() },
      paths,
    })
  })

  test('nested routers add their mount paths; a mount path no OpenAPI path says is told, not walked into', () => {
    const app = express()
    const outer = express.Router()
    const inner = express.Router()
    inner.get('/tables/:table', access.require('table.read', dataset), ok)
    outer.use('/datasets/:owner/:name/', inner)
    app.use('/api', outer)
    const versioned = express.Router()
    versioned.get('/status', access.authenticate, ok)
    app.use(/^\/v\d+/, versioned)
    const told: SkippedRoute[] = []
    expect(access.routes(app, { onSkip: (route) => told.push(route) })).toEqual([
      { method: 'GET', path: '/api/datasets/:owner/:name/tables/:table', operation: 'table.read' },
      { method: 'GET', path: '/datasets/:owner/:name', operation: 'dataset.overview' },
      { method: 'GET', path: '/detached', operation: 'authenticated' },
    ])
    expect(told).toEqual([
      {
        method: 'GET',
        path: '/status',
        requirement: 'authenticated',
        reason: 'mount path /^\\/v\\d+/ is not a plain path (a RegExp, a wildcard or an optional part)',
      },
    ])
  })

  test('without an app, only the routes of access.route, as registered', () => {
    expect(access.routes()).toEqual([
      { method: 'GET', path: '/datasets/:owner/:name', operation: 'dataset.overview' },
      { method: 'GET', path: '/detached', operation: 'authenticated' },
    ])
  })

  test('a Router is walked like an app', () => {
    const router = express.Router()
    router.get('/x/:owner/:name', access.require('dataset.metadata', dataset), ok)
    expect(access.routes(router)).toEqual([
      { method: 'GET', path: '/x/:owner/:name', operation: 'dataset.metadata' },
      { method: 'GET', path: '/datasets/:owner/:name', operation: 'dataset.overview' },
      { method: 'GET', path: '/detached', operation: 'authenticated' },
    ])
  })

  test("two policies in one app: each lists its own routes (every instance of it), never the other's", () => {
    const admin = createAccessPolicy({ tokens: new MemoryTokenStore(), realm: 'admin' })
    const users = accessControl({ policy })
    const twin = accessControl({ policy })
    const admins = accessControl({ policy: admin })
    const app = express()
    app.get('/u/:owner/:name', users.require('dataset.metadata', dataset), ok)
    app.get('/t/:owner/:name', twin.require('dataset.overview', dataset), ok)
    app.get('/a/:owner/:name', admins.require('dataset.delete', dataset), ok)
    app.use('/admin', admins.authenticate)
    app.get('/admin/users', ok)
    expect(users.routes(app)).toEqual([
      { method: 'GET', path: '/u/:owner/:name', operation: 'dataset.metadata' },
      { method: 'GET', path: '/t/:owner/:name', operation: 'dataset.overview' },
    ])
    expect(admins.routes(app)).toEqual([
      { method: 'GET', path: '/a/:owner/:name', operation: 'dataset.delete' },
      { method: 'GET', path: '/admin/users', operation: 'authenticated' },
    ])
  })

  test.each([
    ['nothing', null],
    ['a plain object', {}],
    ['a function without a router', () => {}],
  ])('%s is not an app: a typed error', (_name, value) => {
    expect(() => access.routes(value as never)).toThrow(InvalidArgumentError)
    expect(() => access.routes(value as never)).toThrow(/expected an Express 5 app or a Router/)
  })
})

describe('the walked routes still guard', () => {
  let close: () => Promise<void>
  let base: string
  let token: string

  beforeAll(async () => {
    const created = createApiToken({
      userId: 'alice',
      name: 'walk',
      scopes: 'data.metadata',
      now: Date.now() - 1000,
    })
    await tokens.save(created.record)
    token = created.value
    const server = await listening(hostApp().app.listen(0, '127.0.0.1'))
    close = server.close
    base = `http://127.0.0.1:${server.port}`
  })

  afterAll(() => close())

  test.each([
    ['GET', '/api/v1/datasets/acme/census/metadata', false, 401],
    ['GET', '/api/v1/datasets/acme/census/metadata', true, 200],
    ['GET', '/admin/users', false, 401],
    ['GET', '/admin/users', true, 200],
    ['POST', '/workflows/acme/census', true, 403],
    ['GET', '/health', false, 200],
  ])('%s %s (token: %s) answers %i', async (method, path, withToken, status) => {
    const headers: Record<string, string> = withToken ? { authorization: `Bearer ${token}` } : {}
    expect((await fetch(`${base}${path}`, { method, headers })).status).toBe(status)
  })
})
