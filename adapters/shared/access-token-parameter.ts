/**
 * True when the request target's query carries an `access_token` parameter (RFC 6750 §2.3), however
 * its name is percent-encoded. Reads the raw target so that every framework answers alike.
 *
 * @example
 * queryHasAccessToken('/api/v1/x?access%5Ftoken=abc') // true
 */
export function queryHasAccessToken(target: string): boolean {
  const start = target.indexOf('?')
  if (start === -1) return false
  const query = target.slice(start + 1)
  // The name contains `_` when spelled plainly and `%` when encoded: most queries skip the parse.
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent because URLSearchParams below answers the same; a fast path
  if (!query.includes('_') && !query.includes('%')) return false
  return new URLSearchParams(query).has('access_token')
}

/**
 * True when a parsed request body (a JSON object, form fields, `URLSearchParams` or `FormData`)
 * carries an `access_token` parameter (RFC 6750 §2.2).
 *
 * @example
 * bodyHasAccessToken({ access_token: 'abc' }) // true
 */
export function bodyHasAccessToken(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  if (body instanceof URLSearchParams) return body.has('access_token')
  if (typeof FormData === 'function' && body instanceof FormData) return body.has('access_token')
  return Object.hasOwn(body, 'access_token')
}
