/**
 * The API reference in a real browser (issue 31): headless Chromium opens `/docs` on Express,
 * Fastify and Hono, Swagger UI loads the server's own `/openapi.json` (every script from the
 * server, under its CSP), and the dataset routes are rendered with the scope each one needs. A
 * screenshot goes to `test-output/`. Chromium missing is a failure, never a skip.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { type LaunchedChromium, launchChromium, OUTPUT, requireChromium } from './chromium.js'

let browser: LaunchedChromium
const servers = {} as Record<Framework, StartedServer>

beforeAll(async () => {
  requireChromium()
  browser = await launchChromium({ width: 1200, height: 1000 })
  const seed = await loadSeed(DEMO_SEED)
  await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      servers[framework] = await startServer({ seed, framework, port: 0 })
    }),
  )
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all(Object.values(servers).map((server) => server.close()))
})

// The dataset routes of the API and the scope the reference must show for each.
const DATASET_ROUTES = [
  ['get', '/api/v1/datasets/{owner}/{name}', 'dataset.overview', 'data.overview'],
  ['patch', '/api/v1/datasets/{owner}/{name}', 'dataset.update', 'data.edit'],
  ['get', '/api/v1/datasets/{owner}/{name}/metadata', 'dataset.metadata', 'data.metadata'],
  ['get', '/api/v1/datasets/{owner}/{name}/tables/{table}/rows', 'table.read', 'data.data'],
  ['post', '/api/v1/datasets/{owner}/{name}/exports', 'export.create', 'data.data'],
  ['post', '/api/v1/datasets/{owner}/{name}/versions', 'version.release', 'data.edit'],
] as const

// Generous: Swagger UI's bundle is large and the machine may be busy; this bounds a hang only.
const RENDERED = 60_000
// Swagger UI renders asynchronously: each check is a condition polled up to that bound.
const RENDERING = { timeout: RENDERED, interval: 100 }

describe.each(FRAMEWORKS)('%s', (framework) => {
  test('/docs renders the dataset routes with their scopes, from files of the server only', async () => {
    const page = await browser.context.newPage()
    const origin = servers[framework].url
    const foreign: string[] = []
    const violations: string[] = []
    page.on('request', (request) => {
      if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) foreign.push(request.url())
    })
    page.on('response', (response) => {
      if (response.status() >= 400) violations.push(`${response.status()} ${response.url()}`)
    })
    page.on('console', (message) => {
      if (message.type() === 'error') violations.push(message.text())
    })
    try {
      await page.goto(`${origin}/docs`)
      await page.locator('.opblock').first().waitFor({ timeout: RENDERED })
      for (const [method, path, operation, scope] of DATASET_ROUTES) {
        const block = page.locator(`.opblock-${method}`, {
          has: page.locator(`.opblock-summary-path[data-path="${path}"]`),
        })
        await expect.poll(() => block.count(), { message: `${method} ${path}`, ...RENDERING }).toBe(1)
        await expect
          .poll(() => block.locator('.opblock-summary-description').textContent(), RENDERING)
          .toBe(`${operation} (scope ${scope})`)
      }
      // Opened, an operation shows its requirement: the scope under the x-data-access extension,
      // and the lock that leads to the schemes.
      const metadata = page.locator('.opblock-get', {
        has: page.locator('.opblock-summary-path[data-path="/api/v1/datasets/{owner}/{name}/metadata"]'),
      })
      await metadata.locator('.opblock-summary-control').click()
      const body = metadata.locator('.opblock-body')
      await body.waitFor({ timeout: RENDERED })
      // Swagger UI fills the opened block in more than one render: wait for the text, not the box.
      await expect.poll(() => body.textContent(), RENDERING).toContain('"scope":"data.metadata"')
      await expect.poll(() => metadata.locator('.authorization__btn').count(), RENDERING).toBeGreaterThan(0)
      await page.screenshot({ path: join(OUTPUT, `docs-${framework}.png`), fullPage: false })
      expect(foreign).toEqual([])
      expect(violations).toEqual([])
    } finally {
      await page.close()
    }
  }, 120_000)
})
