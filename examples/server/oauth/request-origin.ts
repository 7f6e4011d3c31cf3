/**
 * Where the OAuth endpoints live: `auth_url` is the server's own origin. Whether a request may use
 * them at all (HTTPS, or loopback) is the pages' one transport rule, ../web/https-only.ts.
 */
import type { ApiRequest } from '../route-set.js'

// RFC 3986 host (a registered name or an IP literal) and optional port: nothing else may reach a
// URL the server hands out.
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/

/**
 * The origin the client reached, `http://127.0.0.1:3000`: the request's protocol (as trust-proxy
 * resolved it) and its `Host` header; `undefined` when the header is missing or not a host.
 *
 * @example
 * requestOrigin(request) // 'http://127.0.0.1:3000'
 */
export function requestOrigin(request: Pick<ApiRequest, 'protocol' | 'headers'>): string | undefined {
  const host = request.headers.host
  if (host === undefined || !HOST.test(host)) return undefined
  return `${request.protocol === 'https' ? 'https' : 'http'}://${host.toLowerCase()}`
}
