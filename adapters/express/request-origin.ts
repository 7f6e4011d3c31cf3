// Its own module, free of the adapter's run-time imports (node:http), so that other entries
// (data-access-policy/mcp) read the client the way the Express adapter does without loading it.
import type { Request } from 'express'
import type { ForwardedOrigin } from '../../src/authentication/trusted-proxies.js'
import { strictProtocol } from '../../src/authentication/trusted-proxies.js'
import { directOrigin } from '../shared/direct-origin.js'
import { isEncrypted } from '../shared/node-response.js'

/**
 * The client address and protocol the policy sees for a request: `req.ip` and `req.protocol` under
 * the app's `trust proxy` setting, with a multi-hop `X-Forwarded-Proto` counting as `https` only
 * when every hop says so. Pages of the host's own that must agree with the API (an HTTPS-only
 * sign-in page, say) read it here.
 *
 * @example
 * if (!isSecureTransport(requestOrigin(req))) return res.status(403).send('HTTPS required')
 */
export function requestOrigin(req: Request<unknown>): ForwardedOrigin {
  const direct = directOrigin(req)
  if (direct !== undefined) return direct
  return {
    clientAddress: req.ip,
    protocol: strictProtocol(req.protocol, isEncrypted(req.socket), req.headers['x-forwarded-proto']),
  }
}
