/**
 * The server's own answers beside the policy's denials: JSON documents, and the 400/413/500 errors
 * it raises itself, in the same `{"error":{status,message,code}}` shape plus a `detail` for the
 * caller. Pure functions; bindings serialize the result.
 */
import { type Deny, deny } from '../../src/index.js'
import type { RouteResult } from './route-set.js'

/** The content type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** A JSON answer. */
export function json(body: unknown, status = 200): RouteResult {
  return { kind: 'json', status, body }
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
 * A parameter of the request is invalid: 400 with the policy's `Bad request` body shape and a
 * `detail` saying what was expected (never echoing the value, which could be anything).
 *
 * @example
 * invalidParameter('maxResults must be an integer from 1 to 1000')
 * // 400 {"error":{"status":400,"message":"Bad request","code":"invalid_parameter","detail":"maxResults must be …"}}
 */
export function invalidParameter(detail: string): RouteResult {
  return json({ error: { status: 400, message: 'Bad request', code: 'invalid_parameter', detail } }, 400)
}

/** The request body is larger than the server reads. */
export function bodyTooLarge(limit: number): RouteResult {
  return json(
    {
      error: {
        status: 413,
        message: 'Payload too large',
        code: 'body_too_large',
        detail: `the body must be at most ${limit} bytes`,
      },
    },
    413,
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
