import type { ForwardedOrigin } from '../../src/index.js'
import type { McpHttpRequest } from '../../src/mcp/gate.js'
import { bodyHasAccessToken, queryHasAccessToken } from '../shared/access-token-parameter.js'
import {
  type NodeHeaderSource,
  readAuthorizationValues,
  readDpopValues,
} from '../shared/authorization-header.js'

/** The slice of a Node `IncomingMessage` that {@link nodeMcpRequest} reads. */
export interface NodeMcpSource extends NodeHeaderSource {
  /**
   * The request target, for an `access_token` in the query (refused, RFC 6750 §2.3) and a DPoP
   * proof's `htu`.
   */
  readonly url?: string | undefined
  /** Express's target before any router stripped its mount path: preferred to `url` when present. */
  readonly originalUrl?: string | undefined
  /** The method, a DPoP proof's `htm`. */
  readonly method?: string | undefined
}

/**
 * What {@link McpGate.check} reads, from a Node request (Express, Fastify, `node:http`): every
 * `Authorization` value as received (a repeated header is 400), every `DPoP` proof with the method,
 * `Host` and target its `htm` and `htu` are checked against (RFC 9449), the client address and
 * protocol as the framework's adapter resolved them (`requestOrigin` of `data-access-policy/express`
 * or `…/fastify`), and the parsed JSON-RPC body.
 *
 * @example
 * const checked = await gate.check(nodeMcpRequest(request.raw, requestOrigin(request), request.body))
 */
export function nodeMcpRequest(req: NodeMcpSource, origin: ForwardedOrigin, body: unknown): McpHttpRequest {
  const target = req.originalUrl ?? req.url
  return {
    authorization: readAuthorizationValues(req),
    accessTokenParameter: queryHasAccessToken(target ?? '') || bodyHasAccessToken(body),
    clientAddress: origin.clientAddress,
    protocol: origin.protocol,
    dpop: readDpopValues(req),
    method: req.method,
    host: req.headers.host,
    target,
    body,
  }
}
