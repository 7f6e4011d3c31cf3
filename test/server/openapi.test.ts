import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../../examples/server/app.js'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { MAX_LEAK_REPORT_BYTES, MAX_REPORTED } from '../../examples/server/leaks/leak-reports.js'
import { parseSecretScanningKeys } from '../../examples/server/leaks/secret-scanning-keys.js'
import { API_ROUTE_DOCS } from '../../examples/server/openapi/route-docs.js'
import { LARGE_BODY_DEADLINE_MS, LARGE_BODY_PACE } from '../../examples/server/request/body.js'
import { MAX_BODY_BYTES, type Route } from '../../examples/server/routes/route-set.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { expectValidDocument, minimalScopesFromTables, schemaErrors } from '../openapi/validate.js'

// /openapi.json and /docs on every framework: the document validates, describes every API and
// OAuth route the server mounts, and each API route declares the scope that the decision tables
// say is minimal for the operation its guard checks.

type Response = {
  description: string
  headers?: Record<string, { required?: boolean }>
  content?: Record<string, { schema: Parameters<typeof schemaErrors>[1] }>
}
type Operation = {
  summary: string
  security: Record<string, string[]>[]
  parameters?: { name: string; in: string }[]
  requestBody?: { required: boolean }
  responses: Record<string, Response>
  'x-data-access': { operation?: string; requirement: string; scope?: string }
}
type Document = {
  servers: { url: string }[]
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> }
  paths: Record<string, Record<string, Operation>>
}

const servers = {} as Record<Framework, StartedServer>
const documents = {} as Record<Framework, Document>
const tables = minimalScopesFromTables()

beforeAll(async () => {
  const seed = await loadSeed(DEMO_SEED)
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      servers[framework] = await startServer({ seed, framework, port: 0 })
      const response = await fetch(`${servers[framework].url}/openapi.json`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      documents[framework] = (await response.json()) as Document
    }),
  )
})

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()))
})

function routesOf(app: App, set: string): readonly Route[] {
  return app.routeSets.find((each) => each.name === set)!.routes
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]\w*)/g, '{$1}')

describe.each(FRAMEWORKS)('on %s', (framework) => {
  test('/openapi.json is a valid OpenAPI 3.1 document for this server', async () => {
    const document = documents[framework]
    await expectValidDocument(document)
    expect(document.servers).toEqual([{ url: servers[framework].url }])
  })

  test('every API route is in it, declaring the minimal scope the decision tables give its operation', () => {
    const document = documents[framework]
    const routes = routesOf(servers[framework].app, 'api')
    expect(routes.length).toBeGreaterThan(10)
    for (const route of routes) {
      const described = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()]
      const name = `${route.method} ${route.path}`
      expect(described, name).toBeDefined()
      const operation = route.access?.operation
      const scope = operation === undefined ? 'public' : tables.get(operation)
      expect(scope, name).toBeDefined()
      expect(described!.security, name).toEqual([{ bearer: [scope] }, { oauth2: [scope] }])
      expect(described!['x-data-access'], name).toMatchObject({
        requirement: operation ?? 'authenticated',
        scope,
      })
      expect(described!['x-data-access'].operation, name).toBe(operation)
      expect(Object.keys(described!.responses), name).toEqual(expect.arrayContaining(['401', '403', '503']))
    }
  })

  test('every OAuth route is in it, with a summary of its own; the JSON endpoints name client authentication', () => {
    const document = documents[framework]
    const CLIENT = { clientSecretBasic: [] }
    const routes = routesOf(servers[framework].app, 'oauth')
    for (const route of routes) {
      const name = `${route.method} ${route.path}`
      const described = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()]
      expect(described, name).toBeDefined()
      expect(described!.summary, name).not.toMatch(/^(OAuth page|Public: no token needed)$/)
      const security =
        route.path === '/oauth/introspect'
          ? [CLIENT]
          : ['/oauth/token', '/oauth/revoke', '/oauth/device_authorization'].includes(route.path)
            ? [CLIENT, {}]
            : []
      expect(described!.security, name).toEqual(security)
    }
    const summaries = routes.map(
      (route) => document.paths[openApiPath(route.path)]![route.method.toLowerCase()]!.summary,
    )
    expect(new Set(summaries).size, 'one summary per kind of route').toBeGreaterThanOrEqual(10)
    expect(document.components.securitySchemes.clientSecretBasic).toMatchObject({
      type: 'http',
      scheme: 'basic',
    })
  })

  test('every API route says its success, and those that read input their parameters or body', () => {
    const document = documents[framework]
    for (const route of routesOf(servers[framework].app, 'api')) {
      const name = `${route.method} ${route.path}`
      const doc = API_ROUTE_DOCS[name]
      expect(doc, name).toBeDefined()
      const described = document.paths[openApiPath(route.path)]![route.method.toLowerCase()]!
      const success = Object.keys(described.responses).filter((status) => status.startsWith('2'))
      expect(success, name).toEqual(Object.keys(doc!.responses))
      expect(described.responses[success[0]!]!.description, name).not.toBe('Success.')
      const inputs = (described.parameters ?? []).filter((each) => each.in !== 'path').length
      expect(inputs > 0 || described.requestBody !== undefined, name).toBe(doc!.readsInput === true)
    }
    const listing = document.paths['/api/v1/organizations/{org}/datasets']!.get!
    expect(listing.parameters!.map((each) => each.name)).toEqual(['org', 'maxResults', 'pageToken'])
  })

  test('/docs is the reference page, its files served from here', async () => {
    const base = servers[framework].url
    const page = await fetch(`${base}/docs`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    const html = await page.text()
    expect(html).toContain('<script src="docs/swagger-ui-bundle.js"></script>')
    expect(html).not.toMatch(/https?:\/\//)
    for (const [file, type] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['reference.js', 'text/javascript; charset=utf-8'],
    ]) {
      const response = await fetch(`${base}/docs/${file}`)
      expect(response.status, file).toBe(200)
      expect(response.headers.get('content-type'), file).toBe(type)
      expect(response.headers.get('x-content-type-options'), file).toBe('nosniff')
      expect((await response.text()).length, file).toBeGreaterThan(100)
    }
  })
})

test('the three frameworks serve the same description, but for their origin', () => {
  const [first, ...others] = FRAMEWORKS.map((framework) =>
    JSON.stringify(documents[framework]).replaceAll(servers[framework].url, 'ORIGIN'),
  )
  for (const other of others) expect(other).toBe(first)
})

// Real answers against the document: each answer's status is documented for its route, its body
// matches the documented schema, and a header the document says is always sent is there.
const ADMIN = DEMO_SEED.tokens[0].value
const LISTING = '/api/v1/organizations/acme/datasets'
const CLAIMS = '/api/v1/datasets/acme/claims'
const ANSWERS: readonly [
  string,
  string,
  string,
  string,
  Record<string, string>,
  string | undefined,
  number,
][] = [
  [
    'a listing',
    'GET',
    LISTING,
    '/api/v1/organizations/{org}/datasets',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    200,
  ],
  [
    'a bad maxResults',
    'GET',
    `${LISTING}?maxResults=0`,
    '/api/v1/organizations/{org}/datasets',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    400,
  ],
  [
    'a bad pageToken',
    'GET',
    `${LISTING}?pageToken=garbage`,
    '/api/v1/organizations/{org}/datasets',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    400,
  ],
  [
    'a malformed Authorization header',
    'GET',
    LISTING,
    '/api/v1/organizations/{org}/datasets',
    { authorization: 'Bearer a b' },
    undefined,
    400,
  ],
  [
    'an unknown owner',
    'GET',
    '/api/v1/organizations/nobody/datasets',
    '/api/v1/organizations/{org}/datasets',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    404,
  ],
  ['no token', 'GET', `${CLAIMS}/metadata`, '/api/v1/datasets/{owner}/{name}/metadata', {}, undefined, 401],
  [
    'metadata',
    'GET',
    `${CLAIMS}/metadata`,
    '/api/v1/datasets/{owner}/{name}/metadata',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    200,
  ],
  [
    'rows',
    'GET',
    `${CLAIMS}/tables/visits/rows?maxResults=2`,
    '/api/v1/datasets/{owner}/{name}/tables/{table}/rows',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    200,
  ],
  [
    'rows, a bad maxResults',
    'GET',
    `${CLAIMS}/tables/visits/rows?maxResults=abc`,
    '/api/v1/datasets/{owner}/{name}/tables/{table}/rows',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    400,
  ],
  [
    'an update, a bad body',
    'PATCH',
    CLAIMS,
    '/api/v1/datasets/{owner}/{name}',
    { authorization: `Bearer ${ADMIN}` },
    '{"title":1}',
    400,
  ],
  [
    'a body past the cap',
    'PATCH',
    CLAIMS,
    '/api/v1/datasets/{owner}/{name}',
    { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    JSON.stringify({ description: 'x'.repeat(MAX_BODY_BYTES) }),
    413,
  ],
  [
    'a release',
    'POST',
    `${CLAIMS}/versions`,
    '/api/v1/datasets/{owner}/{name}/versions',
    { authorization: `Bearer ${ADMIN}` },
    undefined,
    201,
  ],
  [
    'an overview, a scope too narrow',
    'GET',
    '/api/v1/organizations/acme',
    '/api/v1/organizations/{org}',
    { authorization: `Bearer ${DEMO_SEED.tokens[1].value}` },
    undefined,
    403,
  ],
]

describe.each(FRAMEWORKS)('on %s, what the routes answer is what the document says', (framework) => {
  test.each(ANSWERS)('%s: %s %s', async (_name, method, target, path, headers, body, status) => {
    const response = await fetch(`${servers[framework].url}${target}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    })
    expect(response.status).toBe(status)
    const documented = documents[framework].paths[path]![method.toLowerCase()]!.responses[String(status)]
    expect(documented, `${status} is documented`).toBeDefined()
    for (const [header, spec] of Object.entries(documented!.headers ?? {})) {
      if (spec.required) expect(response.headers.get(header), header).not.toBeNull()
    }
    if (response.headers.get('www-authenticate') !== null)
      expect(documented!.headers).toHaveProperty('WWW-Authenticate')
    const schema = documented!.content?.['application/json']?.schema
    expect(schema, 'a JSON body is documented').toBeDefined()
    expect(schemaErrors(await response.json(), schema!)).toEqual([])
  })
})

describe('with --secret-scanning-keys, the leak report endpoint is described', () => {
  let server: StartedServer
  let document: Document

  beforeAll(async () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    })
    const keys = parseSecretScanningKeys(
      JSON.stringify({ public_keys: [{ key_identifier: 'k1', key }] }),
      'keys.json',
    )
    server = await startServer({
      seed: await loadSeed(DEMO_SEED),
      framework: 'express',
      port: 0,
      secretScanningKeys: keys,
    })
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document
  })

  afterAll(() => server.close())

  test('the document validates and has the route, which takes no bearer token', async () => {
    await expectValidDocument(document)
    const report = document.paths['/secret-scanning/report']?.post
    expect(report?.security).toEqual([])
    expect(Object.keys(report!.responses)).toEqual(['200', '400', '401', '408', '409', '411', '413', '503'])
  })

  test("the limits documented are the route's own", () => {
    const report = document.paths['/secret-scanning/report']!.post!
    // The route's cap, not the API's 64 KiB.
    expect(report.responses['413']!.description).toContain(`${MAX_LEAK_REPORT_BYTES} bytes`)
    expect(report.responses['413']!.description).not.toContain(`${MAX_BODY_BYTES} bytes`)
    const body = report.requestBody as unknown as {
      content: Record<string, { schema: { maxItems?: number } }>
    }
    expect(body.content['application/json']!.schema.maxItems).toBe(MAX_REPORTED)
    // Busy body readers answer with Retry-After; a stalled large body with 408.
    expect(Object.keys(report.responses['503']!.headers ?? {})).toEqual(['Retry-After'])
    expect(report.responses['408']!.description).toContain(`${LARGE_BODY_DEADLINE_MS / 1000} seconds`)
    expect(report.responses['408']!.description).toContain(`${LARGE_BODY_PACE.bytesPerSecond / 1024} KiB/s`)
  })

  test('an unsigned report is the documented 401', async () => {
    const response = await fetch(`${server.url}/secret-scanning/report`, { method: 'POST', body: '[]' })
    expect(response.status).toBe(401)
    const schema =
      document.paths['/secret-scanning/report']!.post!.responses['401']!.content!['application/json']!.schema
    expect(schemaErrors(await response.json(), schema)).toEqual([])
  })

  test('without the flag it is not', () => {
    expect(documents.express.paths['/secret-scanning/report']).toBeUndefined()
  })
})
