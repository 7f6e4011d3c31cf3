import type { OAuthClient } from './oauth-client.js'

// RFC 3986 path and query characters, percent-encodings well formed; no fragment, no user info.
const URI_TAIL = "(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
// RFC 8252 §7.3: http, an IP literal (not "localhost", §8.3), an optional port, then a path.
const LOOPBACK_REDIRECT_URI = new RegExp(
  `^http://(127\\.0\\.0\\.1|\\[::1\\])(?::([1-9][0-9]{0,4}))?((?:[/?]${URI_TAIL})?)$`,
)

type LoopbackUri = { readonly host: string; readonly tail: string }

function parseLoopback(uri: string): LoopbackUri | undefined {
  const match = LOOPBACK_REDIRECT_URI.exec(uri)
  if (match === null) return undefined
  const port = match[2]
  if (port !== undefined && Number(port) > 65_535) return undefined
  return { host: match[1]!, tail: match[3]! }
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
  return parseLoopback(uri) !== undefined
}

/**
 * Whether the authorization server may redirect to `uri` for `client` (`undefined`: a session client).
 *
 * - A registered client: exact string match with one of its redirect URIs; a loopback request URI
 *   also matches a registered loopback URI that differs only by its port (RFC 8252 §7.3).
 * - A session client, which nobody registered: only a loopback URI on any port, because only an
 *   application on the user's own machine can listen there. No `https://` or private-use scheme,
 *   whose owner could not be verified.
 * - Never a URI with a fragment (RFC 6749 §3.1.2), even if registered.
 *
 * @example
 * isAllowedRedirectUri({ id: 'cli', redirectUris: ['http://127.0.0.1:8765/cb'], offline: false },
 *   'http://127.0.0.1:50123/cb') // true
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.1.2.3
 */
export function isAllowedRedirectUri(client: OAuthClient | undefined, uri: string): boolean {
  if (uri.includes('#')) return false
  const loopback = parseLoopback(uri)
  if (client === undefined) return loopback !== undefined
  if (client.redirectUris.includes(uri)) return true
  if (loopback === undefined) return false
  return client.redirectUris.some((registered) => {
    const other = parseLoopback(registered)
    return other !== undefined && other.host === loopback.host && other.tail === loopback.tail
  })
}
