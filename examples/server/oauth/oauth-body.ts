/**
 * The bodies of the OAuth JSON endpoints: `application/x-www-form-urlencoded` (RFC 6749 §4.1.3,
 * RFC 8628 §3.1) and, for clients that send JSON, `application/json` (docs/oauth.md). Either becomes
 * the core's `OAuthParams`; the core then reads each parameter (a repeated one, or a JSON value
 * that is not a string, is its `invalid_request`).
 */
import { OAuthError, type OAuthParams } from 'data-access-policy/oauth'

type Params = Record<string, string | string[] | undefined>

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase()
}

function decodeUtf8(body: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch (cause) {
    throw new OAuthError('invalid_request', 'the request body is not valid UTF-8', { cause })
  }
}

/**
 * Query or form parameters as the core's parameters; a name sent more than once keeps every
 * value, so that the core can refuse it (RFC 6749 §3.1: parameters must not be repeated).
 *
 * @example
 * paramsOf(new URLSearchParams('response_type=code&scope=data.data')) // { response_type: 'code', scope: 'data.data' }
 */
export function paramsOf(search: URLSearchParams): OAuthParams {
  // No prototype: a parameter named `__proto__` or `constructor` is a parameter like any other.
  const params: Params = Object.create(null)
  for (const [name, value] of search) {
    const previous = params[name]
    params[name] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value]
  }
  return params
}

function parseJsonParams(text: string): OAuthParams {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new OAuthError('invalid_request', 'the request body is not valid JSON', { cause })
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OAuthError('invalid_request', 'a JSON request body must be an object')
  }
  const params: Params = Object.create(null)
  // Values stay as sent: the core refuses any that is not a string (or a one-string array).
  for (const [name, inner] of Object.entries(value)) params[name] = inner as string
  return params
}

/**
 * Parses the body of a token or device authorization request by its `Content-Type`: a form, JSON,
 * or nothing at all (an empty body is no parameters, which the core then finds missing).
 *
 * @throws {OAuthError} `invalid_request` for another media type, bad UTF-8 or bad JSON.
 * @example
 * const params = parseOAuthBody(await request.body(), request.contentType)
 */
export function parseOAuthBody(body: Uint8Array, contentType: string | undefined): OAuthParams {
  const type = mediaType(contentType)
  if (body.byteLength === 0 && (type === undefined || type === '')) return Object.create(null)
  if (type === 'application/x-www-form-urlencoded') return paramsOf(new URLSearchParams(decodeUtf8(body)))
  if (type === 'application/json') return parseJsonParams(decodeUtf8(body))
  throw new OAuthError(
    'invalid_request',
    'the request body must be application/x-www-form-urlencoded or application/json',
  )
}
