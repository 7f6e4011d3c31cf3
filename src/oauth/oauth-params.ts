import { OAuthError } from './oauth-error.js'

/**
 * Request parameters as the HTTP layer parsed them from a query, a form or a JSON body. A parameter
 * sent more than once may be given as an array; it is then refused (RFC 6749 §3.1).
 *
 * @example
 * const params: OAuthParams = Object.fromEntries(new URLSearchParams(body))
 */
export type OAuthParams = Readonly<Record<string, string | readonly string[] | undefined>>

/**
 * One parameter's value. An empty value counts as absent (RFC 6749 §3.1); a repeated or non-string
 * one is `invalid_request`.
 *
 * @throws {OAuthError} `invalid_request`.
 */
export function readParam(params: OAuthParams, name: string): string | undefined {
  if (!Object.hasOwn(params, name)) return undefined
  let value: unknown = params[name]
  if (Array.isArray(value)) {
    if (value.length > 1) throw new OAuthError('invalid_request', `${name} must not be repeated`)
    value = value[0]
  }
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be a string`)
  return value
}
