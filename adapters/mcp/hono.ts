import type { Context, MiddlewareHandler } from 'hono'
import type { ForwardedOrigin } from '../../src/index.js'
import type { McpAuthInfo, McpGate } from '../../src/mcp/gate.js'
import { authorizationValues, dpopValues } from '../hono/request.js'
import { queryHasAccessToken } from '../shared/access-token-parameter.js'

/** The context variables {@link mcpHono} sets: what to hand to the SDK's web-standard transport. */
export type McpVariables = { auth: McpAuthInfo; parsedBody: unknown }

/** The Hono environment of an MCP route behind {@link mcpHono}. */
export type McpEnv = { Variables: McpVariables }

/** Options of {@link mcpHono}. */
export interface McpHonoOptions {
  /**
   * The client address and protocol the policy sees: `access.requestOrigin` of the Hono adapter's
   * `accessControl`, so that the MCP endpoint and the API agree on them.
   */
  readonly requestOrigin: (c: Context) => ForwardedOrigin
}

async function jsonBody(c: Context): Promise<unknown> {
  if (c.req.method !== 'POST') return undefined
  try {
    return JSON.parse(await c.req.text()) as unknown
  } catch {
    // Not JSON: the transport answers the JSON-RPC parse error itself; no tool is called.
    return undefined
  }
}

/**
 * Hono 4 middleware that guards an MCP endpoint served by the SDK's
 * `WebStandardStreamableHTTPServerTransport`: parses the JSON-RPC body, runs
 * {@link McpGate.check}, answers its 401/403 itself, and on success sets `auth` and `parsedBody`,
 * to pass to `transport.handleRequest(c.req.raw, { authInfo, parsedBody })`.
 *
 * @example
 * app.all('/mcp', mcpHono(gate, { requestOrigin: access.requestOrigin }), async (c) => {
 *   const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined })
 *   await buildServer().connect(transport)
 *   return transport.handleRequest(c.req.raw, { authInfo: c.get('auth'), parsedBody: c.get('parsedBody') })
 * })
 */
export function mcpHono(gate: McpGate, options: McpHonoOptions): MiddlewareHandler<McpEnv> {
  return async (c, next) => {
    const origin = options.requestOrigin(c)
    const body = await jsonBody(c)
    const checked = await gate.check({
      authorization: authorizationValues(c),
      accessTokenParameter: queryHasAccessToken(c.req.url),
      clientAddress: origin.clientAddress,
      protocol: origin.protocol,
      // RFC 9449: the proofs, and the method and URL their htm and htu must name.
      dpop: dpopValues(c),
      method: c.req.method,
      host: c.req.header('host'),
      target: c.req.url,
      body,
    })
    if (!checked.ok) {
      const { status, headers, body: text } = checked.denial
      return new Response(text, { status, headers: { ...headers } })
    }
    c.set('auth', checked.authInfo)
    c.set('parsedBody', body)
    await next()
    return undefined
  }
}
