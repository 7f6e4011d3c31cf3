/**
 * Running a neutral route (route-set.ts) on behalf of a binding: the handler's failures become
 * answers here — a body past the cap is 413, anything unexpected is 500 (logged, never sent) —
 * so that no framework's own error page ever answers for the API.
 *
 * Here too, once for every API route (a route with `access`), whether or not its handler reads the
 * body: a token in the `Authorization` header and an `access_token` in a form or JSON body is the
 * policy's 400 `invalid_request` (design §4, RFC 6750 §2), as the core decides it for the query.
 * The bindings' guard has authenticated and authorized the request by then, so a request it refuses
 * keeps that refusal (401, 403, 404); none is ever served with a token in its body.
 */

import { extractBearerToken } from '../../src/index.js'
import { bodyTooLarge, denial, internalError } from './http-result.js'
import { BodyTooLargeError, requestBodyHasAccessToken } from './request-body.js'
import type { ApiRequest, Route, RouteResult } from './route-set.js'

/**
 * Runs a route's handler and never rejects.
 *
 * @example
 * const result = await runRoute(route, request)
 */
export async function runRoute(route: Route, request: ApiRequest): Promise<RouteResult> {
  try {
    if (route.access !== undefined) {
      const refused = await bodyTokenDenial(request)
      if (refused !== undefined) return refused
    }
    return await route.handle(request)
  } catch (error) {
    if (error instanceof BodyTooLargeError) return bodyTooLarge(error.limit)
    console.error(`${route.method} ${route.path} failed:`, error)
    return internalError()
  }
}

// The core's rule for a parameter sent next to the header; undefined when the body carries none.
async function bodyTokenDenial(request: ApiRequest): Promise<RouteResult | undefined> {
  if (!(await requestBodyHasAccessToken(request))) return undefined
  const extracted = extractBearerToken({ authorization: request.authorization, accessTokenParameter: true })
  return extracted.ok ? undefined : denial(extracted.decision)
}
