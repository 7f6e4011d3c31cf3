import type { ForwardedOrigin } from '../../src/index.js'
import type { McpHttpRequest } from '../../src/mcp/gate.js'
import { bodyHasAccessToken, queryHasAccessToken } from '../shared/access-token-parameter.js'
import { type NodeHeaderSource, readAuthorizationValues } from '../shared/authorization-header.js'

/** The slice of a Node `IncomingMessage` that {@link nodeMcpRequest} reads. */
export interface NodeMcpSource extends NodeHeaderSource {
  /** The request target, for an `access_token` in the query (refused, RFC 6750 §2.3). */
  readonly url?: string | undefined
}

/**
 * What {@link McpGate.check} reads, from a Node request (Express, Fastify, `node:http`): every
 * `Authorization` value as received (a repeated header is 400), the client address and protocol as
 * the framework's adapter resolved them (`requestOrigin` of `data-access-policy/express` or
 * `…/fastify`), and the parsed JSON-RPC body.
 *
 * @example
 * const checked = await gate.check(nodeMcpRequest(request.raw, requestOrigin(request), request.body))
 */
export function nodeMcpRequest(req: NodeMcpSource, origin: ForwardedOrigin, body: unknown): McpHttpRequest {
  return {
    authorization: readAuthorizationValues(req),
    accessTokenParameter: queryHasAccessToken(req.url ?? '') || bodyHasAccessToken(body),
    clientAddress: origin.clientAddress,
    protocol: origin.protocol,
    body,
  }
}
