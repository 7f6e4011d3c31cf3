import type { IncomingHttpHeaders } from 'node:http'
import type { ForwardedOrigin } from '../../src/authentication/trusted-proxies.js'

/** The slice of a Node `IncomingMessage` that tells where a request came from. */
export interface NodeOriginSource {
  readonly headers: IncomingHttpHeaders
  readonly socket: { readonly remoteAddress?: string | undefined; readonly encrypted?: unknown } | null
}

/**
 * The origin of a Node request that carries neither `X-Forwarded-For` nor `X-Forwarded-Proto`: the
 * connection's own address and protocol. That is what Express (`req.ip`, `req.protocol`) and
 * Fastify (`request.ip`, `request.protocol`) answer for such a request under any trust setting, so
 * the adapters skip their proxy-addr walk, which parses the peer's address with ipaddr.js to test it
 * against the trusted ranges (Express does it twice, for `req.ip` and `req.protocol`): the costliest
 * read of a request under a `trust proxy` setting, as the HTTP bench measured it.
 * Undefined when a forwarding header is present: the framework decides.
 *
 * @example
 * directOrigin(req) ?? { clientAddress: req.ip, protocol: req.protocol }
 */
export function directOrigin(message: NodeOriginSource): ForwardedOrigin | undefined {
  const { headers, socket } = message
  if (headers['x-forwarded-for'] !== undefined || headers['x-forwarded-proto'] !== undefined) return undefined
  if (socket === null) return undefined
  return { clientAddress: socket.remoteAddress, protocol: socket.encrypted === true ? 'https' : 'http' }
}
