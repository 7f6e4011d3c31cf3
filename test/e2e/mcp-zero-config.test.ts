/**
 * Zero configuration: the MCP SDK's own client, given nothing but the `/mcp` URL, connects to the
 * reference server on Express, Fastify and Hono with no client the operator registered. Discovery
 * (401 → RFC 9728 → RFC 8414) finds the authorization server; the SDK then names itself by its
 * client ID metadata document (served over HTTPS on loopback with the committed test certificate,
 * which the server's document fetcher is told to trust, and the loopback dev option on), or
 * registers at `registration_endpoint` (RFC 7591). Either way the consent page calls the client
 * unverified, no refresh token is issued, and the agent initializes, lists tools, calls one, steps
 * up for one that needs more scope, and has a token for `/api/v1` refused at `/mcp`.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { DEMO_SEED } from '../../examples/server/seed/demo.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { connectWithOAuth, HeadlessProvider, textOf } from '../server/mcp-agent.js'

const TLS = new URL('../fixtures/tls/', import.meta.url)
const CERT = readFileSync(new URL('loopback-cert.pem', TLS), 'utf8')
const KEY = readFileSync(new URL('loopback-key.pem', TLS), 'utf8')

const REDIRECT = 'http://127.0.0.1:8976/callback'
const DOCUMENT_PATH = '/agents/zero.json'

// The agent's host: its client ID metadata document over HTTPS on loopback, and the fetches seen.
let documents: Server
let documentUrl = ''
let documentFetches = 0
let servers: Record<Framework, StartedServer>

beforeAll(async () => {
  documents = createServer({ cert: CERT, key: KEY }, (request, response) => {
    if (request.url !== DOCUMENT_PATH) return void response.writeHead(404).end()
    documentFetches++
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' })
    response.end(
      JSON.stringify({
        client_id: documentUrl,
        client_name: 'Zero Agent',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    )
  })
  await new Promise<void>((done) => documents.listen(0, '127.0.0.1', done))
  documentUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}${DOCUMENT_PATH}`
  const seed = await loadSeed(DEMO_SEED)
  const started = await Promise.all(
    FRAMEWORKS.map((framework) =>
      startServer({
        seed,
        framework,
        host: '127.0.0.1',
        port: 0,
        // `--client-metadata-allow-http-loopback`, and the test certificate as the only CA.
        clientMetadata: { allowHttpLoopback: true, ca: CERT },
      }),
    ),
  )
  servers = Object.fromEntries(started.map((server) => [server.framework, server])) as typeof servers
}, 60_000)

afterAll(async () => {
  await Promise.all(Object.values(servers ?? {}).map((server) => server.close()))
  await new Promise((done) => documents?.close(done))
})

const DATASET = { name: 'get_dataset', arguments: { owner: 'acme', name: 'trial' } }
const WORKFLOW = { name: 'get_workflow', arguments: { owner: 'acme', name: 'etl' } }

/** `tools/list`, an allowed call, then a call denied for scope, the step-up, and the call again. */
async function useTools(
  client: Client,
  transport: StreamableHTTPClientTransport,
  provider: HeadlessProvider,
): Promise<void> {
  const { tools } = await client.listTools()
  expect(tools.map((tool) => tool.name)).toContain('get_workflow')
  const overview = await client.callTool(DATASET)
  expect(overview.isError).toBeFalsy()
  expect(JSON.parse(textOf(overview))).toMatchObject({ owner: 'acme', name: 'trial' })
  await expect(client.callTool(WORKFLOW)).rejects.toBeInstanceOf(UnauthorizedError)
  expect(provider.requests.at(-1)!.searchParams.get('scope')).toBe('data.overview wokflow.read')
  await transport.finishAuth(provider.takeCode())
  expect(JSON.parse(textOf(await client.callTool(WORKFLOW)))).toEqual({ owner: 'acme', name: 'etl' })
  expect((await client.callTool(DATASET)).isError).toBeFalsy()
}

/** What every authorization of a client the operator did not register shows and gives. */
function expectUnverified(provider: HeadlessProvider, detail: string): void {
  expect(provider.consentPages.length).toBeGreaterThan(0)
  for (const page of provider.consentPages) {
    expect(page).toContain(detail)
    expect(page).toContain('not verified by this server')
    expect(page).toContain('id="client-unverified"')
  }
  expect(provider.tokens()?.access_token).toBeTypeOf('string')
  expect(provider.tokens()?.refresh_token).toBeUndefined()
}

describe.each(FRAMEWORKS)('the MCP SDK client with nothing but the /mcp URL, on %s', (framework) => {
  const origin = () => servers[framework].url
  const mcpUrl = () => new URL('/mcp', origin())

  test('names itself by its client ID metadata document, signs in, steps up', async () => {
    const before = documentFetches
    const provider = new HeadlessProvider('bob', 'bob-demo-password', {
      redirectUrl: REDIRECT,
      clientMetadataUrl: documentUrl,
    })
    expect(provider.clientInformation()).toBeUndefined()
    const { client, transport } = await connectWithOAuth(mcpUrl(), provider)
    expect(provider.clientInformation()?.client_id).toBe(documentUrl)
    expect(provider.requests[0]!.searchParams.get('client_id')).toBe(documentUrl)
    expect(provider.requests[0]!.searchParams.getAll('resource')).toEqual([`${origin()}/mcp`])
    // This server fetched the document over HTTPS, trusting the test certificate.
    expect(documentFetches).toBeGreaterThan(before)
    expect(client.getServerVersion()?.name).toBe('data-access-policy reference server')
    await useTools(client, transport, provider)
    expectUnverified(provider, `described by a document on ${new URL(documentUrl).host}`)
    await client.close()
  })

  test('registers itself (RFC 7591), signs in, steps up; its /api/v1 token is refused at /mcp', async () => {
    const provider = new HeadlessProvider('bob', 'bob-demo-password', { redirectUrl: REDIRECT })
    const { client, transport } = await connectWithOAuth(mcpUrl(), provider)
    const clientId = provider.clientInformation()?.client_id
    expect(clientId).toMatch(/^dyn_/)
    expect(provider.requests[0]!.searchParams.get('client_id')).toBe(clientId)
    await useTools(client, transport, provider)
    expectUnverified(provider, 'registered itself')
    await client.close()

    // The same client, for the API: that token is not one /mcp accepts.
    const api = new URL('/api/v1', origin())
    expect(await auth(provider, { serverUrl: api })).toBe('REDIRECT')
    expect(provider.requests.at(-1)!.searchParams.getAll('resource')).toEqual([api.href])
    expect(await auth(provider, { serverUrl: api, authorizationCode: provider.takeCode() })).toBe(
      'AUTHORIZED',
    )
    expect(provider.clientInformation()?.client_id).toBe(clientId)
    const refused = await fetch(mcpUrl(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.tokens()!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })
})
