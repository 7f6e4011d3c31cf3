import { InvalidArgumentError } from '../errors.js'

/**
 * Adds response parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2: it "MUST be
 * retained"). Values are form-urlencoded; `undefined` ones are left out.
 *
 * @throws {InvalidArgumentError} when `redirectUri` has a fragment, which a redirect URI may not have.
 * @example
 * buildRedirectUrl('https://app.example/cb?tenant=7', { code: 'abc', state: 'x y' })
 * // 'https://app.example/cb?tenant=7&code=abc&state=x+y'
 * buildRedirectUrl(request.redirectUri, { error: 'access_denied', state: request.state }) // the user said no
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2
 */
export function buildRedirectUrl(
  redirectUri: string,
  params: Readonly<Record<string, string | undefined>>,
): string {
  if (redirectUri.includes('#')) {
    throw new InvalidArgumentError('redirectUri must not have a fragment (RFC 6749 §3.1.2)')
  }
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value)
  const encoded = query.toString()
  if (encoded === '') return redirectUri
  if (!redirectUri.includes('?')) return `${redirectUri}?${encoded}`
  const separator = redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&'
  return `${redirectUri}${separator}${encoded}`
}
