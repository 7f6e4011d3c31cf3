import type { Server } from 'node:http'
import swagger from '@fastify/swagger'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import express from 'express'
import { type FastifyInstance, fastify } from 'fastify'
import { Hono } from 'hono'
import { describeRoute, generateSpecs } from 'hono-openapi'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { accessControl as expressAccess } from '../../adapters/express/index.js'
import {
  type FastifyResourceResolver,
  accessControl as fastifyAccess,
  openApiTransform,
} from '../../adapters/fastify/index.js'
import { type AccessEnv, accessControl as honoAccess } from '../../adapters/hono/index.js'
import {
  createAccessPolicy,
  createApiToken,
  type DatasetResource,
  MemoryTokenStore,
  type Operation,
  type Principal,
} from '../../src/index.js'
import { describeRoutes, securitySchemes, withOperationSecurity } from '../../src/openapi/index.js'
import { listening } from '../adapters/listen.js'
import { expectValidDocument, minimalScopesFromTables } from './validate.js'

// The host apps of docs/openapi.md, each with the real generator, and each still guarding: the
// description changes nothing of what the route does.

const openapi = { issuer: 'https://auth.example.org' } as const
const INFO = { title: 'Data API', version: '1.0.0' }
const METADATA = '/api/v1/datasets/{owner}/{name}/metadata'
const LISTING = '/api/v1/organizations/{org}/datasets'
const tables = minimalScopesFromTables()

type DatasetParams = { owner: string; name: string }
type Document = { paths: Record<string, Record<string, Record<string, unknown>>> }

// The host's resolver: alice may read the metadata of every dataset but `missing`, which does not exist.
async function describeDataset(
  params: DatasetParams,
  _principal: Principal,
): Promise<DatasetResource | undefined> {
  return params.name === 'missing'
    ? undefined
    : { kind: 'dataset', publicLevel: 'none', userLevel: 'metadata' }
}
const metadataOf = (params: DatasetParams) => ({ title: `${params.owner}/${params.name}` })

let token: string
const tokens = new MemoryTokenStore()
const policy = createAccessPolicy({ tokens, realm: 'data-api' })

beforeAll(async () => {
  const created = createApiToken({
    userId: 'alice',
    name: 'docs',
    scopes: 'data.metadata',
    now: Date.now() - 1000,
  })
  await tokens.save(created.record)
  token = created.value
})

function expectSecurity(document: Document, path: string, operation: Operation | 'authenticated') {
  const scope = operation === 'authenticated' ? 'public' : tables.get(operation)
  const described = document.paths[path]!.get!
  expect(described.security).toEqual([{ bearer: [scope] }, { oauth2: [scope] }])
  expect(Object.keys(described.responses as object)).toEqual(
    expect.arrayContaining(['200', '400', '401', '403', '503']),
  )
  const access = described['x-data-access'] as { operation?: string; requirement: string }
  expect(access.requirement).toBe(operation)
  expect(access.operation).toBe(operation === 'authenticated' ? undefined : operation)
}

async function expectGuarded(base: string): Promise<void> {
  const url = `${base}/api/v1/datasets/acme/census/metadata`
  expect((await fetch(url)).status).toBe(401)
  const allowed = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  expect(allowed.status).toBe(200)
  expect(await allowed.json()).toEqual({ title: 'acme/census' })
  const missing = `${base}/api/v1/datasets/acme/missing/metadata`
  expect((await fetch(missing, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404)
}

describe('Fastify with @fastify/swagger', () => {
  let app: FastifyInstance
  let document: Document
  let base: string

  beforeAll(async () => {
    app = fastify()
    await app.register(swagger, {
      openapi: { openapi: '3.1.0', info: INFO, components: { securitySchemes: securitySchemes(openapi) } },
      transform: openApiTransform(openapi),
    })
    await app.register(fastifyAccess, { policy, openapi })
    const dataset: FastifyResourceResolver<DatasetParams> = (request) =>
      describeDataset(request.params, request.principal)
    app.get<{ Params: DatasetParams }>(
      '/api/v1/datasets/:owner/:name/metadata',
      {
        schema: {
          summary: "A dataset's metadata",
          response: { 200: { type: 'object', properties: { title: { type: 'string' } } } },
        },
        config: { access: { operation: 'dataset.metadata', resource: dataset } },
      },
      async (request) => metadataOf(request.params),
    )
    app.get('/api/v1/organizations/:org/datasets', { config: { access: {} } }, async () => ({ results: [] }))
    // The host's own fields win: its security and its 404.
    app.get<{ Params: DatasetParams }>(
      '/api/v1/datasets/:owner/:name',
      {
        schema: {
          security: [{ bearer: ['data.overview'] }],
          response: { 200: { type: 'object' }, 404: { description: 'No such dataset', type: 'null' } },
        },
        config: { access: { operation: 'dataset.overview', resource: dataset } },
      },
      async (request) => metadataOf(request.params),
    )
    app.get('/health', async () => ({ ok: true }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    document = app.swagger() as unknown as Document
  })

  afterAll(() => app.close())

  test('the document validates', async () => {
    await expectValidDocument(document)
  })

  test('every route with config.access has its security, denials and x-data-access', () => {
    expectSecurity(document, METADATA, 'dataset.metadata')
    expectSecurity(document, LISTING, 'authenticated')
    expect(document.paths[METADATA]!.get!.summary).toBe("A dataset's metadata")
  })

  test("the host's own schema wins where both set a field", () => {
    const overview = document.paths['/api/v1/datasets/{owner}/{name}']!.get!
    expect(overview.security).toEqual([{ bearer: ['data.overview'] }])
    expect((overview.responses as Record<string, unknown>)['404']).toEqual({ description: 'No such dataset' })
    expect((overview.responses as Record<string, unknown>)['401']).toBeDefined()
  })

  test('a route without config.access is left as it was', () => {
    const health = document.paths['/health']!.get!
    expect(health.security).toBeUndefined()
    expect(Object.keys(health.responses as object)).toEqual(['200'])
  })

  test('the routes still guard', async () => {
    await expectGuarded(base)
  })
})

describe('Hono with @hono/zod-openapi', () => {
  let close: () => Promise<void>
  let document: Document
  let base: string

  beforeAll(async () => {
    const access = honoAccess({ policy, getConnInfo })
    const app = new OpenAPIHono<AccessEnv>()
    for (const [name, scheme] of Object.entries(securitySchemes(openapi))) {
      app.openAPIRegistry.registerComponent('securitySchemes', name, scheme)
    }
    const operation: Operation = 'dataset.metadata'
    const metadata = createRoute(
      withOperationSecurity(
        operation,
        {
          method: 'get',
          path: METADATA,
          request: { params: z.object({ owner: z.string(), name: z.string() }) },
          middleware: [
            access.require<'/api/v1/datasets/:owner/:name/metadata'>(operation, (c) =>
              describeDataset({ owner: c.req.param('owner'), name: c.req.param('name') }, c.get('principal')),
            ),
          ] as const,
          responses: {
            200: {
              description: "The dataset's metadata",
              content: { 'application/json': { schema: z.object({ title: z.string() }) } },
            },
          },
        },
        openapi,
      ),
    )
    app.openapi(metadata, (c) => c.json(metadataOf(c.req.valid('param')), 200))
    const listing = createRoute(
      withOperationSecurity(
        'authenticated',
        {
          method: 'get',
          path: LISTING,
          request: { params: z.object({ org: z.string() }) },
          middleware: [access.authenticate] as const,
          responses: { 200: { description: 'The datasets' } },
        },
        openapi,
      ),
    )
    app.openapi(listing, (c) => c.json({ results: [] }, 200))
    document = app.getOpenAPI31Document({ openapi: '3.1.0', info: INFO }) as unknown as Document
    const server = await listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server)
    close = server.close
    base = `http://127.0.0.1:${server.port}`
  })

  afterAll(() => close())

  test('the document validates', async () => {
    await expectValidDocument(document)
  })

  test('each route has its security, denials and x-data-access', () => {
    expectSecurity(document, METADATA, 'dataset.metadata')
    expectSecurity(document, LISTING, 'authenticated')
  })

  test('the routes still guard', async () => {
    await expectGuarded(base)
  })
})

describe('Hono with hono-openapi', () => {
  test('describeRoute takes the same helper; the document validates', async () => {
    const access = honoAccess({ policy, getConnInfo })
    const app = new Hono<AccessEnv>()
    const operation: Operation = 'dataset.metadata'
    app.get(
      '/api/v1/datasets/:owner/:name/metadata',
      describeRoute(
        withOperationSecurity(
          operation,
          { summary: "A dataset's metadata", responses: { 200: { description: "The dataset's metadata" } } },
          openapi,
        ),
      ),
      access.require<'/api/v1/datasets/:owner/:name/metadata'>(operation, (c) =>
        describeDataset({ owner: c.req.param('owner'), name: c.req.param('name') }, c.get('principal')),
      ),
      (c) => c.json(metadataOf({ owner: c.req.param('owner'), name: c.req.param('name') })),
    )
    const document = (await generateSpecs(app, {
      documentation: {
        openapi: '3.1.0',
        info: INFO,
        components: { securitySchemes: securitySchemes(openapi) },
      },
    })) as unknown as Document
    await expectValidDocument(document)
    expectSecurity(document, METADATA, 'dataset.metadata')
  })
})

describe('Express with access.route and describeRoutes', () => {
  let close: () => Promise<void>
  let document: Document
  let base: string

  beforeAll(async () => {
    const access = expressAccess({ policy })
    const app = express()
    access.route<DatasetParams>(
      app,
      {
        method: 'GET',
        path: '/api/v1/datasets/:owner/:name/metadata',
        operation: 'dataset.metadata',
        resource: (req) => describeDataset(req.params, req.principal),
      },
      (req, res) => {
        res.json(metadataOf(req.params))
      },
    )
    access.route(app, { method: 'GET', path: '/api/v1/organizations/:org/datasets' }, (_req, res) => {
      res.json({ results: [] })
    })
    document = {
      openapi: '3.1.0',
      info: INFO,
      components: { securitySchemes: securitySchemes(openapi) },
      paths: describeRoutes(access.routes(), openapi),
    } as unknown as Document
    const server = await listening(app.listen(0, '127.0.0.1'))
    close = server.close
    base = `http://127.0.0.1:${server.port}`
  })

  afterAll(() => close())

  test('the registry lists what was registered, in order', () => {
    expect(Object.keys(document.paths)).toEqual([METADATA, LISTING])
  })

  test('the document validates', async () => {
    await expectValidDocument(document)
  })

  test('each route has its security, denials and x-data-access', () => {
    expectSecurity(document, METADATA, 'dataset.metadata')
    expectSecurity(document, LISTING, 'authenticated')
  })

  test('the routes still guard; the listing authenticates', async () => {
    await expectGuarded(base)
    expect((await fetch(`${base}/api/v1/organizations/acme/datasets`)).status).toBe(401)
  })

  test('a bad route fails where it is declared, and is not recorded', () => {
    const access = expressAccess({ policy })
    const app = express()
    expect(() =>
      access.route(app, {
        method: 'GET',
        path: '/x',
        operation: 'table.write' as Operation,
        resource: () => undefined,
      }),
    ).toThrow(/GET \/x: unknown operation "table\.write"/)
    expect(() => access.route(app, { method: 'TRACE' as 'GET', path: '/x' })).toThrow(
      /TRACE \/x: method must be one of/,
    )
    expect(access.routes()).toEqual([])
  })
})
