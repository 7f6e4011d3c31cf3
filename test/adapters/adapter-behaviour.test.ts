/**
 * Runs the adapters' behaviour table (adapter-cases.ts) over real HTTP against in-process apps on
 * Express, Fastify and Hono, one trusting 127.0.0.1 as a proxy and one trusting none: every row
 * must give the expected answer on each framework, and the three answers must be identical. The
 * protocol rules themselves are the reference server's conformance table (test/conformance/).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ADAPTER_CASES, type AdapterCase } from './adapter-cases.js'
import { startApp } from './apps.js'
import { createFixture, type Fixture } from './fixture.js'
import { sendRaw } from './http-client.js'
import { FRAMEWORKS, type Framework, type RunningApp } from './running-app.js'

type Servers = Record<Framework, { trusted: RunningApp; untrusted: RunningApp }>

let fixture: Fixture
let servers: Servers

beforeAll(async () => {
  fixture = await createFixture()
  const started = await Promise.all(
    FRAMEWORKS.map(async (framework) => {
      const [trusted, untrusted] = await Promise.all([
        startApp(framework, fixture, '127.0.0.1'),
        startApp(framework, fixture, false),
      ])
      return [framework, { trusted, untrusted }] as const
    }),
  )
  servers = Object.fromEntries(started) as Servers
})

afterAll(async () => {
  await Promise.all(
    Object.values(servers ?? {}).flatMap(({ trusted, untrusted }) => [trusted.close(), untrusted.close()]),
  )
})

// The comparable part of an answer: status, body and challenge, or for a stream that must break
// off, whether it did (how many bytes got through depends on timing).
async function answer(framework: Framework, row: AdapterCase): Promise<Record<string, unknown>> {
  const { tokens } = fixture
  const response = await sendRaw(servers[framework][row.server ?? 'trusted'].port, {
    method: row.method ?? 'GET',
    path: typeof row.path === 'function' ? row.path(tokens) : row.path,
    headers: row.headers?.(tokens) ?? {},
    ...(row.body === undefined ? {} : { body: typeof row.body === 'function' ? row.body(tokens) : row.body }),
  })
  if ('brokenAfterAtMost' in row.expect) {
    expect(response.body.length, 'bytes that got through').toBeLessThanOrEqual(row.expect.brokenAfterAtMost)
    expect(response.body).toMatch(/^x*$/)
    return { complete: response.complete }
  }
  return {
    status: response.status,
    body: response.body,
    wwwAuthenticate: response.headers['www-authenticate'] ?? null,
    complete: response.complete,
  }
}

function expected(row: AdapterCase): Record<string, unknown> {
  return 'brokenAfterAtMost' in row.expect ? { complete: false } : { ...row.expect, complete: true }
}

test('the table is large enough and its names are unique', () => {
  expect(ADAPTER_CASES.length).toBeGreaterThanOrEqual(30)
  expect(new Set(ADAPTER_CASES.map((row) => row.name)).size).toBe(ADAPTER_CASES.length)
})

describe.each(FRAMEWORKS)("%s answers the adapters' behaviour table", (framework) => {
  test.each(ADAPTER_CASES)('$name', async (row) => {
    expect(await answer(framework, row)).toEqual(expected(row))
  })
})

describe('the three frameworks answer alike (design §10, invariant 7)', () => {
  test.each(ADAPTER_CASES)('$name', async (row) => {
    const [express, fastify, hono] = await Promise.all(FRAMEWORKS.map((framework) => answer(framework, row)))
    expect({ fastify, hono }).toEqual({ fastify: express, hono: express })
  })
})
