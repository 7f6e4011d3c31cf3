import swagger from '@fastify/swagger'
import { type FastifyInstance, fastify } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import {
  accessControl,
  type FastifyAccessControlOptions,
  type OpenApiTransform,
  openApiTransform,
} from '../../adapters/fastify/index.js'
import {
  createAccessPolicy,
  createApiToken,
  type DatasetResource,
  InvalidArgumentError,
  MemoryTokenStore,
} from '../../src/index.js'
import { operationSecurity, securitySchemes } from '../../src/openapi/index.js'
import { expectValidDocument } from './validate.js'

// With @fastify/swagger registered, a route with `config.access` is documented with its security
// and x-data-access by the plugin alone; `openApiTransform()` adds the denial responses. Nothing
// of it changes what a route answers.

const ISSUER = { issuer: 'https://auth.example.org' } as const
const METADATA = '/api/v1/datasets/{owner}/{name}/metadata'
const tokens = new MemoryTokenStore()
const policy = createAccessPolicy({ tokens, realm: 'data-api' })
const dataset = (): DatasetResource => ({ kind: 'dataset', publicLevel: 'none', userLevel: 'metadata' })

type Operation = Record<string, unknown> & { responses: Record<string, unknown> }
type Document = { paths: Record<string, Record<string, Operation>> }

interface Setup {
  /** @fastify/swagger's global transform. */
  readonly transform?: OpenApiTransform
  /** The plugin's `openapi` option. */
  readonly openapi?: FastifyAccessControlOptions['openapi']
}

let app: FastifyInstance | undefined
afterEach(() => app?.close())

// A host app: one route with a response schema of its own, one without, one that sets its own
// security, a listing route and an unguarded one.
async function host(setup: Setup): Promise<{ app: FastifyInstance; document: Document }> {
  app = fastify()
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Data API', version: '1' },
      components: { securitySchemes: securitySchemes(ISSUER) },
    },
    ...(setup.transform === undefined ? {} : { transform: setup.transform }),
  })
  await app.register(accessControl, {
    policy,
    ...(setup.openapi === undefined ? {} : { openapi: setup.openapi }),
  })
  app.get(
    '/api/v1/datasets/:owner/:name/metadata',
    {
      schema: {
        summary: 'Metadata',
        response: { 200: { type: 'object', properties: { title: { type: 'string' } } } },
      },
      config: { access: { operation: 'dataset.metadata', resource: dataset } },
    },
    async () => ({ title: 'census', internal: 'stripped by the host’s own response schema' }),
  )
  app.get(
    '/api/v1/datasets/:owner/:name',
    { config: { access: { operation: 'dataset.overview', resource: dataset } } },
    async () => ({ title: 'census', extra: 'kept: the host wrote no response schema' }),
  )
  app.get(
    '/api/v1/datasets/:owner/:name/tables',
    {
      schema: { security: [{ bearer: ['data.edit'] }] },
      config: { access: { operation: 'dataset.metadata', resource: dataset } },
    },
    async () => ({ results: [] }),
  )
  app.get('/api/v1/organizations/:org/datasets', { config: { access: {} } }, async () => ({ results: [] }))
  app.get('/health', async () => ({ ok: true }))
  await app.ready()
  const document = app.swagger() as unknown as Document
  await expectValidDocument(document)
  return { app, document }
}

const get = (document: Document, path: string) => document.paths[path]!.get!

describe('without a transform, the plugin documents security and x-data-access itself', () => {
  test('each route with config.access has both; its responses are what the host wrote', async () => {
    const { document } = await host({})
    const metadata = get(document, METADATA)
    expect(metadata.security).toEqual([{ bearer: ['data.metadata'] }])
    expect(metadata['x-data-access']).toEqual(operationSecurity('dataset.metadata')['x-data-access'])
    expect(metadata.summary).toBe('Metadata')
    expect(Object.keys(metadata.responses)).toEqual(['200'])
    expect(get(document, '/api/v1/organizations/{org}/datasets').security).toEqual([{ bearer: ['public'] }])
  })

  test("the host's own security wins", async () => {
    const { document } = await host({})
    expect(get(document, '/api/v1/datasets/{owner}/{name}/tables').security).toEqual([
      { bearer: ['data.edit'] },
    ])
  })

  test('a route without config.access is left as it was', async () => {
    const { document } = await host({})
    expect(get(document, '/health').security).toBeUndefined()
    expect(get(document, '/health')['x-data-access']).toBeUndefined()
  })

  test("the plugin's openapi option is the document's: with an issuer, OAuth too", async () => {
    const { document } = await host({ openapi: ISSUER })
    expect(get(document, METADATA).security).toEqual([
      { bearer: ['data.metadata'] },
      { oauth2: ['data.metadata'] },
    ])
  })

  test('openapi: false leaves route schemas alone', async () => {
    const { document } = await host({ openapi: false })
    expect(get(document, METADATA).security).toBeUndefined()
    expect(get(document, METADATA)['x-data-access']).toBeUndefined()
  })

  test('a bad openapi option fails at registration', async () => {
    app = fastify()
    await expect(app.register(accessControl, { policy, openapi: { issuer: 'nope' } })).rejects.toThrow(
      InvalidArgumentError,
    )
  })
})

describe('openApiTransform adds the denials, and replaces what the plugin wrote with its own options', () => {
  test('the same document whether the plugin documented the routes or not', async () => {
    const automatic = (await host({ transform: openApiTransform(ISSUER) })).document
    await app!.close()
    const manual = (await host({ transform: openApiTransform(ISSUER), openapi: false })).document
    expect(automatic).toEqual(manual)
    const metadata = get(automatic, METADATA)
    expect(metadata.security).toEqual([{ bearer: ['data.metadata'] }, { oauth2: ['data.metadata'] }])
    expect(Object.keys(metadata.responses)).toEqual(['200', '400', '401', '403', '404', '503'])
    expect(get(automatic, '/api/v1/datasets/{owner}/{name}/tables').security).toEqual([
      { bearer: ['data.edit'] },
    ])
  })

  test("a host's global transform (one that copies the schema deeply, as a type provider's may) still runs", async () => {
    // In the manner of fastify-type-provider-zod's jsonSchemaTransform: a new schema, a new URL.
    const copying: OpenApiTransform = ({ schema, url }) => ({
      schema: { ...structuredClone(schema ?? {}), tags: ['data'] },
      url,
    })
    const alone = (await host({ transform: copying })).document
    expect(get(alone, METADATA).tags).toEqual(['data'])
    expect(get(alone, METADATA).security).toEqual([{ bearer: ['data.metadata'] }])
    await app!.close()
    const both = (await host({ transform: openApiTransform({ ...ISSUER, transform: copying }) })).document
    expect(get(both, METADATA).tags).toEqual(['data'])
    expect(get(both, METADATA).security).toEqual([
      { bearer: ['data.metadata'] },
      { oauth2: ['data.metadata'] },
    ])
    expect(Object.keys(get(both, METADATA).responses)).toContain('401')
  })
})

describe('what a route answers does not change', () => {
  test.each([{}, { transform: openApiTransform(ISSUER) }] satisfies Setup[])(
    'bodies are serialized as the host wrote them; denials keep their whole body (%o)',
    async (setup) => {
      const { app } = await host(setup)
      await app.listen({ port: 0, host: '127.0.0.1' })
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
      const created = createApiToken({
        userId: 'alice',
        name: 'swagger',
        scopes: 'data.metadata',
        now: Date.now() - 1000,
      })
      await tokens.save(created.record)
      const headers = { authorization: `Bearer ${created.value}` }
      const overview = await fetch(`${base}/api/v1/datasets/acme/census`, { headers })
      expect(await overview.json()).toEqual({
        title: 'census',
        extra: 'kept: the host wrote no response schema',
      })
      const metadata = await fetch(`${base}/api/v1/datasets/acme/census/metadata`, { headers })
      expect(await metadata.json()).toEqual({ title: 'census' })
      const denied = await fetch(`${base}/api/v1/datasets/acme/census/metadata`)
      expect(denied.status).toBe(401)
      expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer realm="data-api"/)
      expect(await denied.json()).toEqual({
        error: { status: 401, message: expect.any(String), code: 'missing_token' },
      })
    },
  )
})
