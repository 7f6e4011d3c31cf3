import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../../examples/server/app.js'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import type { Route } from '../../examples/server/routes/route-set.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { expectValidDocument, minimalScopesFromTables } from '../openapi/validate.js'

// /openapi.json and /docs on every framework: the document validates, describes every API and
// OAuth route the server mounts, and each API route declares the scope that the decision tables
// say is minimal for the operation its guard checks.

type Operation = {
  security: Record<string, string[]>[]
  responses: Record<string, unknown>
  'x-data-access': { operation?: string; requirement: string; scope?: string }
}
type Document = { servers: { url: string }[]; paths: Record<string, Record<string, Operation>> }

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

  test('every OAuth route is in it, as a route that takes no token', () => {
    const document = documents[framework]
    for (const route of routesOf(servers[framework].app, 'oauth')) {
      const described = document.paths[route.path]?.[route.method.toLowerCase()]
      expect(described?.security, `${route.method} ${route.path}`).toEqual([])
    }
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/oauth/token', '/oauth/authorize']))
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
