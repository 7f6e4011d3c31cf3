/**
 * Reading the `Cookie` header and writing `Set-Cookie` values (RFC 6265), for the pages' session
 * and CSRF cookies. Only what the server's own cookies need: names are tokens, values are
 * base64url or similar, so nothing is percent-encoded or quoted.
 */

// RFC 6265 §4.1.1: cookie-name is an RFC 9110 token, cookie-value has no space, quote, comma,
// semicolon or backslash.
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/

/**
 * Parses `Cookie` header values into name → value; the first occurrence of a name wins (RFC 6265
 * §5.4 sends the most specific path first). Malformed pairs are skipped, never guessed at.
 *
 * @example
 * parseCookies(['dap_session=abc; theme=dark']) // { dap_session: 'abc', theme: 'dark' }
 */
export function parseCookies(headers: readonly string[]): Readonly<Record<string, string>> {
  const cookies: Record<string, string> = Object.create(null)
  for (const header of headers) {
    for (const pair of header.split(';')) {
      const equals = pair.indexOf('=')
      if (equals === -1) continue
      const name = pair.slice(0, equals).trim()
      let value = pair.slice(equals + 1).trim()
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
      if (!COOKIE_NAME.test(name) || !COOKIE_VALUE.test(value) || name in cookies) continue
      cookies[name] = value
    }
  }
  return cookies
}

/** Attributes of a `Set-Cookie` value. */
export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. Absent: a session cookie, gone when the browser closes. */
  readonly maxAge?: number
  readonly path?: string
  readonly httpOnly?: boolean
  readonly secure?: boolean
  readonly sameSite?: 'Strict' | 'Lax'
}

/**
 * Builds a `Set-Cookie` value.
 *
 * @throws {TypeError} for a name or value outside RFC 6265's syntax (a bug, never user input).
 * @example
 * serializeCookie('dap_session', id, { path: '/', httpOnly: true, sameSite: 'Lax', secure: true })
 * // 'dap_session=…; Path=/; HttpOnly; SameSite=Lax; Secure'
 */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (!COOKIE_NAME.test(name)) throw new TypeError(`cookie name ${JSON.stringify(name)} is not a token`)
  if (!COOKIE_VALUE.test(value)) throw new TypeError(`the value of cookie ${name} has a forbidden character`)
  const parts = [`${name}=${value}`]
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`)
  if (options.path !== undefined) parts.push(`Path=${options.path}`)
  if (options.httpOnly) parts.push('HttpOnly')
  if (options.sameSite !== undefined) parts.push(`SameSite=${options.sameSite}`)
  if (options.secure) parts.push('Secure')
  return parts.join('; ')
}
