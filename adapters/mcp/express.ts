import type { NextFunction, Request, Response } from 'express'
import type { McpAuthInfo, McpGate } from '../../src/mcp/gate.js'
import { requestOrigin } from '../express/request-origin.js'
import { writeDenial } from '../shared/node-response.js'
import { nodeMcpRequest } from './node.js'

/** An Express request after {@link mcpExpress}: `auth` is what the SDK's transport hands to tools. */
export type McpExpressRequest = Request & { auth?: McpAuthInfo }

/**
 * Express 5 middleware that guards an MCP endpoint served by the SDK's
 * `StreamableHTTPServerTransport`: runs {@link McpGate.check} on the request (after `express.json()`,
 * which parses the JSON-RPC body into `req.body`), answers its 401/403 itself, and on success sets
 * `req.auth`, which the transport passes to every tool handler as `extra.authInfo`. The client
 * address and protocol are the Express adapter's (`req.ip`, `req.protocol`: the app's `trust proxy`).
 *
 * @example
 * app.post('/mcp', express.json(), mcpExpress(gate), async (req, res) => {
 *   const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
 *   await buildServer().connect(transport)
 *   await transport.handleRequest(req, res, req.body)
 * })
 */
export function mcpExpress(gate: McpGate): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    gate.check(nodeMcpRequest(req, requestOrigin(req), req.body)).then((checked) => {
      if (!checked.ok) return writeDenial(res, checked.denial)
      ;(req as McpExpressRequest).auth = checked.authInfo
      next()
    }, next)
  }
}
