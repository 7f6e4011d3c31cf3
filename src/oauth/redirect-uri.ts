import type { OAuthClient } from './oauth-client.js'

// RFC 3986 path and query characters, percent-encodings well formed; no fragment, no user info.
const URI_TAIL = "(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
// RFC 8252 §7.3: http, a loopback host, an optional port, then a path. `localhost` is matched
// only against a registered `localhost` URI (below), never for a session client (§8.3).
const LOOPBACK_REDIRECT_URI = new RegExp(
  `^http://(127\\.0\\.0\\.1|\\[::1\\]|localhost)(?::([1-9][0-9]{0,4}))?((?:[/?]${URI_TAIL})?)$`,
)

type LoopbackUri = { readonly host: string; readonly tail: string }

function parseLoopback(uri: string): LoopbackUri | undefined {
  const match = LOOPBACK_REDIRECT_URI.exec(uri)
  if (match === null) return undefined
  const port = match[2]
  if (port !== undefined && Number(port) > 65_535) return undefined
  return { host: match[1]!, tail: match[3]! }
}

// An IP literal of the loopback interface: what nobody but the user's own machine can listen on.
function parseLoopbackLiteral(uri: string): LoopbackUri | undefined {
  const loopback = parseLoopback(uri)
  return loopback?.host === 'localhost' ? undefined : loopback
}

/**
 * True when `uri` is a loopback redirect URI: `http://127.0.0.1[:PORT][/path][?query]` or the same
 * with `[::1]`. `localhost` is not one (RFC 8252 §8.3: it may resolve elsewhere).
 *
 * @example
 * isLoopbackRedirectUri('http://127.0.0.1:8765/cb') // true
 * isLoopbackRedirectUri('http://localhost:8765/cb') // false
 * @see https://www.rfc-editor.org/rfc/rfc8252#section-7.3
 */
export function isLoopbackRedirectUri(uri: string): boolean {
  return parseLoopbackLiteral(uri) !== undefined
}

/**
 * Whether the authorization server may redirect to `uri` for `client` (`undefined`: a session client).
 *
 * - A registered client: exact string match with one of its redirect URIs; a loopback request URI
 *   (`127.0.0.1`, `[::1]` or `localhost`) also matches a registered loopback URI with the same host
 *   and the same path and query on any port (RFC 8252 §7.3): a native app binds whatever port is
 *   free. `localhost` matches only a registered `localhost` URI, so registering it is the opt-in.
 * - A session client, which nobody registered: only a loopback URI on any port, because only an
 *   application on the user's own machine can listen there. No `https://` or private-use scheme,
 *   whose owner could not be verified.
 * - Never a URI with a fragment (RFC 6749 §3.1.2), even if registered.
 *
 * @example
 * isAllowedRedirectUri({ id: 'cli', redirectUris: ['http://127.0.0.1:8765/cb'], offline: false },
 *   'http://127.0.0.1:50123/cb') // true
 * isAllowedRedirectUri({ id: 'r', redirectUris: ['http://localhost:1410/'], offline: false },
 *   'http://localhost:53682/') // true
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.1.2.3
 */
export function isAllowedRedirectUri(client: OAuthClient | undefined, uri: string): boolean {
  if (uri.includes('#')) return false
  if (client === undefined) return parseLoopbackLiteral(uri) !== undefined
  if (client.redirectUris.includes(uri)) return true
  const loopback = parseLoopback(uri)
  if (loopback === undefined) return false
  return client.redirectUris.some((registered) => {
    const other = parseLoopback(registered)
    return other !== undefined && other.host === loopback.host && other.tail === loopback.tail
  })
}
