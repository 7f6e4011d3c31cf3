import type { Deny } from '../decisions/decision.js'

/** A denial rendered as HTTP: what every adapter sends, byte for byte. */
export interface HttpDenial {
  readonly status: number
  /** Lower-case header names: `content-type`, and `www-authenticate` where RFC 6750 asks for it. */
  readonly headers: Readonly<Record<string, string>>
  /** `{"error":{"status":403,"message":"Not authorized","code":"…"}}` */
  readonly body: string
}

/** Quotes a value as an RFC 9110 quoted-string, escaping `"` and `\` (RFC 6750 §3). */
export function quoteHeaderValue(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`
}

/**
 * The `WWW-Authenticate` value for a denial, or undefined where none belongs.
 * No credentials: `Bearer realm="…"` with no error code (RFC 6750 §3.1); a bad request or token
 * adds `error`; insufficient scope names the scope that would have sufficed.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 *
 * @example
 * wwwAuthenticate(deny('invalid_token'), 'data-api') // 'Bearer realm="data-api", error="invalid_token"'
 */
export function wwwAuthenticate(decision: Deny, realm: string): string | undefined {
  switch (decision.code) {
    case 'missing_token':
      return `Bearer realm=${quoteHeaderValue(realm)}`
    case 'invalid_request':
    case 'invalid_token':
      return `Bearer realm=${quoteHeaderValue(realm)}, error="${decision.code}"`
    case 'insufficient_scope':
      return decision.scope === undefined
        ? 'Bearer error="insufficient_scope"'
        : `Bearer error="insufficient_scope", scope=${quoteHeaderValue(decision.scope)}`
  }
  // Every other denial (403s other than scope, 404, 503) carries no challenge.
  return undefined
}

/**
 * Renders a denial as status, headers and JSON body. The body carries only the status, the public
 * message and the stable code: never a token, an allow-list or a limit.
 *
 * @example
 * renderDenial(deny('missing_token'), 'data-api')
 * // { status: 401, headers: { 'www-authenticate': 'Bearer realm="data-api"', … }, body: '{"error":…}' }
 */
export function renderDenial(decision: Deny, realm: string): HttpDenial {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' }
  const challenge = wwwAuthenticate(decision, realm)
  if (challenge !== undefined) headers['www-authenticate'] = challenge
  const body = JSON.stringify({
    error: { status: decision.status, message: decision.message, code: decision.code },
  })
  return Object.freeze({ status: decision.status, headers: Object.freeze(headers), body })
}
