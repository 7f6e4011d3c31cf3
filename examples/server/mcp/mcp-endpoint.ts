/**
 * Serving `/mcp` (Streamable HTTP, stateless): after the gate of `data-access-policy/mcp` let a POST
 * through, a fresh MCP server and transport answer it, as JSON. GET (the server-to-client stream) and
 * DELETE (ending a session) have nothing to serve on a stateless endpoint: 405, which the SDK's client
 * expects from such a server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { McpAuthInfo, McpGate } from 'data-access-policy/mcp'
import type { ApiContext } from '../api/api-routes.js'
import { createMcpServer } from './mcp-tools.js'

export { MCP_PATH } from './mcp-tools.js'

/** What the bindings need to serve `/mcp`. */
export interface McpEndpoint {
  /** The endpoint's guard, with its own policy (resource `{public-url}/mcp`). */
  readonly gate: McpGate
  /** The data and the REST routes' policy rules the tools share. */
  readonly context: ApiContext
}

/** The answer to GET and DELETE on the stateless endpoint. */
export const METHOD_NOT_ALLOWED = Object.freeze({
  status: 405,
  headers: Object.freeze({ allow: 'POST', 'content-type': 'application/json; charset=utf-8' }),
  body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }),
})

/**
 * Answers a POST on a Node response (Express, Fastify): `auth` is what the gate made, `body` the
 * parsed JSON-RPC message.
 *
 * @example
 * await serveNode(endpoint, Object.assign(req, { auth: checked.authInfo }), res, req.body)
 */
export async function serveNode(
  endpoint: McpEndpoint,
  req: IncomingMessage & { auth?: McpAuthInfo },
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const server = createMcpServer(endpoint.gate, endpoint.context)
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
  res.once('close', () => {
    void transport.close()
    void server.close()
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, body)
}

/**
 * Answers a POST as a Fetch response (Hono).
 *
 * @example
 * return serveWeb(endpoint, c.req.raw, c.get('auth'), c.get('parsedBody'))
 */
export async function serveWeb(
  endpoint: McpEndpoint,
  request: Request,
  authInfo: McpAuthInfo,
  body: unknown,
): Promise<Response> {
  const server = createMcpServer(endpoint.gate, endpoint.context)
  const transport = new WebStandardStreamableHTTPServerTransport({
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request, { authInfo, parsedBody: body })
  } finally {
    void transport.close()
    void server.close()
  }
}
