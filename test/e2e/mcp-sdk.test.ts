/**
 * End to end with the MCP SDK's own client (`Client` + `StreamableHTTPClientTransport`) against the
 * reference server's `/mcp` on Express, Fastify and Hono. An `OAuthClientProvider` signs in and
 * approves by posting the pages' forms, headlessly, for the demo seed's registered public client:
 * the 401 leads it to the endpoint's metadata and a token for `/mcp` with the scope the challenge
 * named; a tool that needs more answers 403 `insufficient_scope`, and the SDK's step-up asks for the
 * scopes accumulated. A token for `/api/v1` is refused at `/mcp`, and each tool answers what its REST
 * route answers for the same token.
 */
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { FRAMEWORKS, type Framework } from '../../examples/server/flags.js'
import { DEMO_SEED, DEMO_TOKENS } from '../../examples/server/seed/demo.js'
import { DEMO_CLIENTS } from '../../examples/server/seed/demo-oauth.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { type StartedServer, startServer } from '../../examples/server/server.js'
import { connectWithOAuth, HeadlessProvider, mcpClient, textOf } from '../server/mcp-agent.js'

const CLIENT = DEMO_CLIENTS[0]
const SEED_CLIENT = { clientId: CLIENT.id, redirectUrl: CLIENT.redirectUris[0] }

let servers: Record<Framework, StartedServer>

beforeAll(async () => {
  const seed = await loadSeed(DEMO_SEED)
  const started = await Promise.all(
    FRAMEWORKS.map((framework) => startServer({ seed, framework, host: '127.0.0.1', port: 0 })),
  )
  servers = Object.fromEntries(started.map((server) => [server.framework, server])) as typeof servers
})

afterAll(async () => {
  await Promise.all(Object.values(servers ?? {}).map((server) => server.close()))
})

/** Connects with a bearer token of the seed (no audience: accepted by the API and by `/mcp`). */
async function connectWithToken(url: URL, token: string): Promise<Client> {
  const client = mcpClient()
  const headers = { authorization: `Bearer ${token}` }
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }))
  return client
}

const tokenOf = (user: string, name: string) =>
  DEMO_TOKENS.find((token) => token.user === user && token.name === name)!.value

describe.each(FRAMEWORKS)('the MCP SDK client against /mcp on %s', (framework) => {
  const origin = () => servers[framework].url
  const mcpUrl = () => new URL('/mcp', origin())

  test('initialize, tools/list, an allowed call, then step-up for a tool that needs more scope', async () => {
    const provider = new HeadlessProvider('bob', 'bob-demo-password', SEED_CLIENT)
    const { client, transport } = await connectWithOAuth(mcpUrl(), provider)
    // The 401 named the endpoint's metadata and the narrowest scope; the token is for /mcp.
    expect(provider.requests[0]!.searchParams.get('scope')).toBe('data.overview')
    expect(provider.requests[0]!.searchParams.getAll('resource')).toEqual([`${origin()}/mcp`])
    expect(client.getServerVersion()?.name).toBe('data-access-policy reference server')

    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_dataset',
      'get_dataset_metadata',
      'get_workflow',
      'list_datasets',
      'read_table_rows',
    ])
    const overview = await client.callTool({
      name: 'get_dataset',
      arguments: { owner: 'acme', name: 'trial' },
    })
    expect(overview.isError).toBeFalsy()
    expect(JSON.parse(textOf(overview))).toMatchObject({ owner: 'acme', name: 'trial' })

    // get_workflow needs wokflow.read: 403, and the SDK asks again for what it holds plus that.
    const workflow = { name: 'get_workflow', arguments: { owner: 'acme', name: 'etl' } }
    await expect(client.callTool(workflow)).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.requests[1]!.searchParams.get('scope')).toBe('data.overview wokflow.read')
    await transport.finishAuth(provider.takeCode())
    expect(JSON.parse(textOf(await client.callTool(workflow)))).toEqual({ owner: 'acme', name: 'etl' })
    // Nothing granted before was lost.
    const again = await client.callTool({ name: 'get_dataset', arguments: { owner: 'acme', name: 'trial' } })
    expect(again.isError).toBeFalsy()
    await client.close()
  })

  test('a token bound to /api/v1 is refused at /mcp with 401, and works at the API', async () => {
    const provider = new HeadlessProvider('bob', 'bob-demo-password', SEED_CLIENT)
    const api = new URL('/api/v1', origin())
    expect(await auth(provider, { serverUrl: api })).toBe('REDIRECT')
    expect(provider.requests[0]!.searchParams.getAll('resource')).toEqual([api.href])
    expect(await auth(provider, { serverUrl: api, authorizationCode: provider.takeCode() })).toBe(
      'AUTHORIZED',
    )
    const token = provider.tokens()!.access_token
    const refused = await fetch(mcpUrl(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
    expect(refused.headers.get('www-authenticate')).toContain(
      `resource_metadata="${origin()}/.well-known/oauth-protected-resource/mcp"`,
    )
    const listed = await fetch(`${origin()}/api/v1/organizations/acme/datasets`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(listed.status).toBe(200)
  })

  // Each tool beside its REST route, for the same seed token: the same JSON when the route answers
  // 200, "Not found" for its 404 (hidden and missing alike), "Not authorized" for its 403 (levels,
  // export caps).
  const PARITY: ReadonlyArray<readonly [string, string, string, Record<string, unknown>, string, number]> = [
    ['bob', 'analyst', 'list_datasets', { organization: 'acme' }, '/organizations/acme/datasets', 200],
    ['bob', 'analyst', 'list_datasets', { user: 'acme' }, '/users/acme/datasets', 404],
    [
      'bob',
      'analyst',
      'list_datasets',
      { user: 'bob', maxResults: 1 },
      '/users/bob/datasets?maxResults=1',
      200,
    ],
    ['bob', 'analyst', 'get_dataset', { owner: 'acme', name: 'claims' }, '/datasets/acme/claims', 200],
    ['bob', 'analyst', 'get_dataset', { owner: 'acme', name: 'nope' }, '/datasets/acme/nope', 404],
    ['alice', 'reader', 'get_dataset', { owner: 'bob', name: 'notes' }, '/datasets/bob/notes', 404],
    [
      'bob',
      'analyst',
      'get_dataset_metadata',
      { owner: 'acme', name: 'claims' },
      '/datasets/acme/claims/metadata',
      200,
    ],
    [
      'alice',
      'reader',
      'get_dataset_metadata',
      { owner: 'bob', name: 'notes' },
      '/datasets/bob/notes/metadata',
      404,
    ],
    [
      'bob',
      'analyst',
      'read_table_rows',
      { owner: 'acme', name: 'claims', table: 'visits' },
      '/datasets/acme/claims/tables/visits/rows',
      403,
    ],
    [
      'bob',
      'analyst',
      'read_table_rows',
      { owner: 'acme', name: 'survey', table: 'answers' },
      '/datasets/acme/survey/tables/answers/rows',
      200,
    ],
    [
      'bob',
      'analyst',
      'read_table_rows',
      { owner: 'acme', name: 'survey', table: 'nope' },
      '/datasets/acme/survey/tables/nope/rows',
      404,
    ],
    [
      'bob',
      'analyst',
      'read_table_rows',
      { owner: 'acme', name: 'trial', table: 'visits' },
      '/datasets/acme/trial/tables/visits/rows',
      403,
    ],
    [
      'bob',
      'analyst',
      'read_table_rows',
      { owner: 'acme', name: 'trial', table: 'visits', maxResults: 5 },
      '/datasets/acme/trial/tables/visits/rows?maxResults=5',
      200,
    ],
    ['bob', 'analyst', 'get_workflow', { owner: 'acme', name: 'etl' }, '/workflows/acme/etl', 200],
    ['bob', 'analyst', 'get_workflow', { owner: 'acme', name: 'nope' }, '/workflows/acme/nope', 404],
  ]

  test.each(PARITY)(
    '%s/%s: %s %j answers as GET /api/v1%s (%i)',
    async (user, name, tool, args, path, status) => {
      const token = tokenOf(user, name)
      const rest = await fetch(`${origin()}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } })
      expect(rest.status).toBe(status)
      const client = await connectWithToken(mcpUrl(), token)
      try {
        const result = await client.callTool({ name: tool, arguments: args })
        if (status === 200) {
          expect(result.isError).toBeFalsy()
          expect(JSON.parse(textOf(result))).toEqual(await rest.json())
        } else {
          expect(result.isError).toBe(true)
          expect(textOf(result)).toBe(status === 404 ? 'Not found' : 'Not authorized')
        }
      } finally {
        await client.close()
      }
    },
  )
})
