import { isLoopbackRedirectUri } from './redirect-uri.js'

/** The longest redirect URI a client may register or list in its metadata document. */
export const MAX_REGISTRABLE_REDIRECT_URI_LENGTH = 2000

/**
 * Whether a client nobody at the operator vetted (a metadata document, a dynamic registration) may
 * list `uri` as a redirect URI: a loopback `http` URI per RFC 8252 §7.3 (`127.0.0.1` or `[::1]`,
 * any port; never `localhost`, which may resolve elsewhere), or an `https` URI with a host and no
 * fragment, user name or password. No private-use scheme: any application may claim one.
 *
 * @example
 * isRegistrableRedirectUri('http://127.0.0.1:33418/callback') // true
 * isRegistrableRedirectUri('https://app.example.com/callback') // true
 * isRegistrableRedirectUri('myapp://callback') // false
 * @see https://www.rfc-editor.org/rfc/rfc8252#section-7.3
 */
export function isRegistrableRedirectUri(uri: string): boolean {
  if (uri.length > MAX_REGISTRABLE_REDIRECT_URI_LENGTH || uri.includes('#')) return false
  if (isLoopbackRedirectUri(uri)) return true
  if (!URL.canParse(uri)) return false
  const url = new URL(uri)
  return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === ''
}
