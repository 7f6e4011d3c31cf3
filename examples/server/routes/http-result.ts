/**
 * The server's own answers beside the policy's denials: JSON documents, and the 400/408/413/500 errors
 * it raises itself, in the same `{"error":{status,message,code}}` shape plus a `detail` for the
 * caller. Pure functions; bindings serialize the result.
 */
import { type Deny, deny } from 'data-access-policy'
import type { ResponseHeaders, RouteResult } from './route-set.js'

/** The content type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/**
 * A JSON answer, with optional extra headers.
 *
 * @example
 * json({ access_token: value }, 200, { 'cache-control': 'no-store', pragma: 'no-cache' })
 */
export function json(body: unknown, status = 200, headers?: ResponseHeaders): RouteResult {
  return headers === undefined ? { kind: 'json', status, body } : { kind: 'json', status, body, headers }
}

/**
 * A redirect (empty body, `Cache-Control: no-store`); 303 after a form post, so the browser
 * follows with a GET.
 *
 * @example
 * redirect('/settings/tokens')
 */
export function redirect(location: string, status: 302 | 303 = 303, headers?: ResponseHeaders): RouteResult {
  return headers === undefined
    ? { kind: 'redirect', status, location }
    : { kind: 'redirect', status, location, headers }
}

/** A denial of the policy, to be rendered by the adapter. */
export function denial(decision: Deny): RouteResult {
  return { kind: 'denial', deny: decision }
}

/** The resource does not exist, or the caller may not learn that it does. */
export function notFound(): RouteResult {
  return denial(deny('not_found'))
}

/**
 * One of the server's own errors, in the policy's body shape plus a `detail` for the caller.
 *
 * @example
 * errorResult(409, 'replayed_report', 'Conflict', 'this report was already received')
 * // 409 {"error":{"status":409,"message":"Conflict","code":"replayed_report","detail":"this report was …"}}
 */
export function errorResult(
  status: number,
  code: string,
  message: string,
  detail: string,
  headers?: ResponseHeaders,
): RouteResult {
  return json({ error: { status, message, code, detail } }, status, headers)
}

/**
 * A parameter of the request is invalid: 400 with the policy's `Bad request` body shape and a
 * `detail` saying what was expected (never echoing the value, which could be anything).
 *
 * @example
 * invalidParameter('maxResults must be an integer from 1 to 1000')
 * // 400 {"error":{"status":400,"message":"Bad request","code":"invalid_parameter","detail":"maxResults must be …"}}
 */
export function invalidParameter(detail: string): RouteResult {
  return errorResult(400, 'invalid_parameter', 'Bad request', detail)
}

/** The request body is larger than the server reads. */
export function bodyTooLarge(limit: number): RouteResult {
  return errorResult(413, 'body_too_large', 'Payload too large', `the body must be at most ${limit} bytes`)
}

/**
 * A request body that took a large-body slot did not arrive within its deadline (the sender may be
 * gone by then: the answer is sent if it can be).
 *
 * @example
 * bodyReadTimeout(30_000)
 * // 408 {"error":{"status":408,"message":"Request timeout","code":"body_read_timeout","detail":"the body must arrive within 30 seconds"}}
 */
export function bodyReadTimeout(deadlineMs: number): RouteResult {
  return errorResult(
    408,
    'body_read_timeout',
    'Request timeout',
    `the body must arrive within ${deadlineMs / 1000} seconds`,
  )
}

/** The answer to a failure of the server itself; the cause is logged, never sent. */
export const INTERNAL_ERROR = {
  status: 500,
  body: { error: { status: 500, message: 'Internal server error', code: 'internal_error' } },
} as const

/** A failure of the server itself, as a result. */
export function internalError(): RouteResult {
  return json(INTERNAL_ERROR.body, INTERNAL_ERROR.status)
}
