/**
 * A resource server on another host (issue 28): a small Hono app using the public adapter guards
 * its routes through the reference server's RFC 7662 endpoint with the library's
 * IntrospectionTokenStore — the same adapters, the same decisions, no shared token store. A token
 * revoked through `/oauth/revoke` is refused by both servers within their bounds (the issuer at
 * once, the remote one within its cache TTL); an introspection outage is a 503 there, never a 200.
 * The remote server guards its own resource (RFC 8707, the seed's reports resource): a token for the
 * API alone is refused there, and one for the reports alone by the API.
 */
import { createServer, type Server } from 'node:http'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type AccessEnv, accessControl } from '../../adapters/hono/index.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { createAccessPolicy, deny } from '../../src/index.js'
import { IntrospectionTokenStore } from '../../src/introspection/index.js'
import { listening } from '../adapters/listen.js'
import {
  basic,
  CLI_SECRET,
  callApi,
  OAUTH_SEED,
  postForm,
  REPORTS_RESOURCE,
  RS_SECRET,
  tokensThroughPages,
} from '../server/oauth-fixtures.js'

const ISSUER_PATH = '/api/v1/datasets/alice/diary'
const REMOTE_PATH = '/reports/weekly'
// Generous bounds for conditions awaited, never a timing claim.
const WAIT_MS = 15_000

type Remote = { readonly url: string; readonly errors: unknown[]; close(): Promise<void> }

/** The resource server on "another host": its own process state, its own framework (Hono). */
async function startRemote(endpoint: string, cacheTtlMs: number): Promise<Remote> {
  const errors: unknown[] = []
  const policy = createAccessPolicy({
    tokens: new IntrospectionTokenStore({
      endpoint,
      clientId: 'rs',
      clientSecret: RS_SECRET,
      cacheTtlMs,
      // A bound for a hang, not for speed: the issuer checks the resource server's secret, which a
      // busy machine may take a while to do.
      timeoutMs: 20_000,
    }),
    storeTimeoutMs: 30_000,
    // Its own resource identifier: a token the issuer gave for another resource is refused here.
    resource: REPORTS_RESOURCE,
    onError: (error) => errors.push(error),
  })
  const app = new Hono<AccessEnv>()
  const access = accessControl({ policy, getConnInfo, trustProxy: false })
  // The reports belong to whoever reads them: the token's scope is what decides.
  const report = () => ({
    kind: 'dataset' as const,
    publicLevel: 'none' as const,
    userLevel: 'edit' as const,
  })
  app.get('/reports/:name', access.require('dataset.metadata', report), (c) =>
    c.json({ report: c.req.param('name'), reader: c.get('principal').userId }),
  )
  app.notFound((c) => access.sendDenial(c, deny('not_found')))
  const { port, close } = await listening(
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server,
  )
  return { url: `http://127.0.0.1:${port}`, errors, close }
}

/** The resources a token for both servers names: the issuer's API and the remote reports. */
function both(origin: string): readonly string[] {
  return [`${origin}/api/v1`, REPORTS_RESOURCE]
}

async function status(url: string, token: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  return response.status
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within the bound')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  await Promise.all(closers.map((close) => close()))
})

describe.each(['fastify', 'express'] as const)(
  'an issuer on %s, a Hono resource server beside it',
  (framework) => {
    let issuer: StartedServer
    let remote: Remote

    beforeAll(async () => {
      issuer = await startServer({ seed: await loadSeed(OAUTH_SEED), framework, host: '127.0.0.1', port: 0 })
      closers.push(() => issuer.close())
      remote = await startRemote(`${issuer.url}/oauth/introspect`, 1000)
      closers.push(() => remote.close())
    })

    test('both accept an active token with the scope, and refuse one without', async () => {
      const tokens = await tokensThroughPages(issuer.url, 'data.metadata', both(issuer.url))
      expect(await callApi(issuer.url, ISSUER_PATH, tokens.access_token)).toBe(200)
      const response = await fetch(`${remote.url}${REMOTE_PATH}`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ report: 'weekly', reader: 'alice' })
      const overview = await tokensThroughPages(issuer.url, 'data.overview', both(issuer.url))
      expect(await status(`${remote.url}${REMOTE_PATH}`, overview.access_token)).toBe(403)
      // The last character changed (to another one: a value ending in x would stay the same).
      const forged = `${tokens.access_token.slice(0, -1)}${tokens.access_token.endsWith('x') ? 'y' : 'x'}`
      expect(await status(`${remote.url}${REMOTE_PATH}`, forged)).toBe(401)
    })

    test('a token for one resource is refused by the other (401 invalid_token)', async () => {
      const forApi = await tokensThroughPages(issuer.url, 'data.metadata')
      expect(await callApi(issuer.url, ISSUER_PATH, forApi.access_token)).toBe(200)
      const refused = await fetch(`${remote.url}${REMOTE_PATH}`, {
        headers: { authorization: `Bearer ${forApi.access_token}` },
      })
      await refused.arrayBuffer()
      expect(refused.status).toBe(401)
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
      const forReports = await tokensThroughPages(issuer.url, 'data.metadata', [REPORTS_RESOURCE])
      expect(await status(`${remote.url}${REMOTE_PATH}`, forReports.access_token)).toBe(200)
      expect(await callApi(issuer.url, ISSUER_PATH, forReports.access_token)).toBe(401)
    })

    test('a token revoked through /oauth/revoke is refused by both within their bounds', async () => {
      const tokens = await tokensThroughPages(issuer.url, 'data.metadata', both(issuer.url))
      expect(await status(`${remote.url}${REMOTE_PATH}`, tokens.access_token)).toBe(200)
      const revoked = await postForm(
        `${issuer.url}/oauth/revoke`,
        { token: tokens.refresh_token },
        {
          authorization: basic('cli', CLI_SECRET),
        },
      )
      expect(revoked.status).toBe(200)
      // The issuer's own API: at once (one process, one store).
      expect(await callApi(issuer.url, ISSUER_PATH, tokens.access_token)).toBe(401)
      // The remote one: once its cached answer is older than its TTL (1 s here), and from then on.
      await waitFor(async () => (await status(`${remote.url}${REMOTE_PATH}`, tokens.access_token)) === 401)
      expect(await status(`${remote.url}${REMOTE_PATH}`, tokens.access_token)).toBe(401)
      expect(remote.errors).toEqual([])
    })
  },
)

describe('an introspection outage is a 503 on the remote server, never a 200', () => {
  type Mode = 'hang' | 'garbage' | 'error' | 'html'
  let mode: Mode = 'hang'
  let endpoint: string
  let remote: Remote
  let issuer: StartedServer
  let token: string

  beforeAll(async () => {
    // A real issuer, to get a token that is valid everywhere but on the broken endpoint.
    issuer = await startServer({ seed: await loadSeed(OAUTH_SEED), host: '127.0.0.1', port: 0 })
    closers.push(() => issuer.close())
    token = (await tokensThroughPages(issuer.url, 'data.metadata', both(issuer.url))).access_token
    const broken = createServer((_request, response) => {
      if (mode === 'hang') return
      if (mode === 'error') return response.writeHead(500, { 'content-type': 'application/json' }).end('{}')
      if (mode === 'html') return response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>hi</h1>')
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"active":"yes","scope":"public"}')
    })
    const { port, close } = await listening(broken.listen(0, '127.0.0.1'))
    closers.push(close)
    endpoint = `http://127.0.0.1:${port}/oauth/introspect`
    remote = await startRemote(endpoint, 5000)
    closers.push(() => remote.close())
  })

  test.each(['hang', 'error', 'html', 'garbage'] as const)('an endpoint that answers %s', async (next) => {
    mode = next
    const before = remote.errors.length
    expect(await status(`${remote.url}${REMOTE_PATH}`, token)).toBe(503)
    // Failures are not cached: asked again, refused again, reported again.
    expect(await status(`${remote.url}${REMOTE_PATH}`, token)).toBe(503)
    expect(remote.errors.length).toBe(before + 2)
  })

  test('an issuer that is down', async () => {
    const down = await startServer({ seed: await loadSeed(OAUTH_SEED), host: '127.0.0.1', port: 0 })
    const value = (await tokensThroughPages(down.url, 'data.metadata', both(down.url))).access_token
    const remoteOfDown = await startRemote(`${down.url}/oauth/introspect`, 0)
    closers.push(() => remoteOfDown.close())
    expect(await status(`${remoteOfDown.url}${REMOTE_PATH}`, value)).toBe(200)
    await down.close()
    expect(await status(`${remoteOfDown.url}${REMOTE_PATH}`, value)).toBe(503)
  })
})
