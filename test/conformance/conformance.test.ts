/**
 * Runs the conformance table (cases.ts) over real HTTP against the reference server on Express,
 * Fastify and Hono, started as `--trust-proxy 127.0.0.1 --public-url https://data.example.org` (so
 * that absolute URLs, such as the 401 challenges' `resource_metadata`, are the same whatever port
 * each server listens on): every row must give the expected status,
 * body and `WWW-Authenticate` on each framework, and the three answers must be identical
 * (design §10, invariant 7).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { parseTrustProxy } from '../../examples/server/http/trust-proxy.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import type { StartedServer } from '../../examples/server/server.js'
import { isWellFormedTokenValue } from '../../src/index.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import { dpopKey } from '../dpop/proofs.js'
import { CASES, type Case } from './cases.js'
import { DPOP_CASES, DPOP_PATH, type DpopFixture } from './dpop-cases.js'
import { type RawRequest, type RawResponse, send } from './http-client.js'
import { CONFORMANCE_SEED, TOKEN_VALUES } from './seed.js'
import { closeAll, startAll } from './servers.js'

let servers: Record<Framework, StartedServer>

beforeAll(async () => {
  servers = await startAll(await loadSeed(CONFORMANCE_SEED), parseTrustProxy('127.0.0.1'))
})

afterAll(async () => {
  await closeAll(servers ?? {})
})

function rawRequestOf(row: Case): RawRequest {
  const headers: Record<string, string | readonly string[]> = { ...row.headers }
  if (row.token !== undefined) headers.authorization = `Bearer ${TOKEN_VALUES[row.token]}`
  if (row.authorization !== undefined) {
    headers.authorization = row.authorization.length === 1 ? row.authorization[0]! : row.authorization
  }
  return {
    method: row.method ?? 'GET',
    path: row.path,
    headers,
    ...(row.body === undefined ? {} : { body: row.body }),
  }
}

function parsedBody(response: RawResponse): unknown {
  return response.contentType?.startsWith('application/json') ? JSON.parse(response.body) : response.body
}

describe('conformance table', () => {
  test('covers at least 60 cases, and its fixtures are sound', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60)
    expect(new Set(CASES.map((row) => row.name)).size).toBe(CASES.length)
    expect(isWellFormedTokenValue(`dap_${'A'.repeat(38)}`)).toBe(false)
  })

  // Rows run in table order: a few change state (a member's status, version numbers), on every
  // framework alike.
  test.each(CASES.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const request = rawRequestOf(row)
    const answers = {} as Record<Framework, RawResponse>
    for (const framework of FRAMEWORKS) answers[framework] = await send(servers[framework].port, request)

    for (const framework of FRAMEWORKS) {
      const answer = answers[framework]
      expect({
        framework,
        status: answer.status,
        body: parsedBody(answer),
        wwwAuthenticate: answer.wwwAuthenticate,
      }).toEqual({
        framework,
        status: row.expect.status,
        body: row.expect.body,
        wwwAuthenticate: row.expect.wwwAuthenticate,
      })
    }
    // Byte-identical answers, content type included, not only equivalent JSON.
    expect(answers.express).toEqual(answers.fastify)
    expect(answers.hono).toEqual(answers.fastify)
  })
})

describe('conformance table: DPoP-bound tokens (RFC 9449)', () => {
  let fixture: DpopFixture

  beforeAll(async () => {
    const [key, otherKey] = [await dpopKey(), await dpopKey('EdDSA')]
    const now = Date.now()
    const bound = createOAuthToken({ userId: 'u', scopes: 'data.data', dpopJkt: key.jkt, now })
    const unbound = createOAuthToken({ userId: 'u', scopes: 'data.data', now })
    for (const framework of FRAMEWORKS) {
      await servers[framework].app.tokens.save(bound.record)
      await servers[framework].app.tokens.save(unbound.record)
    }
    fixture = { key, otherKey, bound: bound.value, unbound: unbound.value }
  })

  test.each(DPOP_CASES.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const answers = {} as Record<Framework, RawResponse>
    for (const framework of FRAMEWORKS) {
      const request = { method: 'GET', path: DPOP_PATH, headers: await row.headers(fixture) }
      answers[framework] = await send(servers[framework].port, request)
    }
    for (const framework of FRAMEWORKS) {
      const answer = answers[framework]
      expect({ framework, status: answer.status, wwwAuthenticate: answer.wwwAuthenticate }).toEqual({
        framework,
        status: row.expect.status,
        wwwAuthenticate: row.expect.wwwAuthenticate,
      })
      if (row.expect.body !== undefined) expect(parsedBody(answer)).toEqual(row.expect.body)
    }
    expect(answers.express).toEqual(answers.fastify)
    expect(answers.hono).toEqual(answers.fastify)
  })
})
