/**
 * Running a neutral route (routes/route-set.ts) on behalf of a binding: the handler's failures become
 * answers here — a body past the cap is 413, anything unexpected is 500 (logged, never sent) —
 * so that no framework's own error page ever answers for the API.
 *
 * The adapters have authenticated and authorized an API route's request by then, including the
 * policy's 400 for an `access_token` in a parsed form or JSON body next to the header.
 */

import { BodyTooLargeError, parameterBodyTooLarge } from '../request/body.js'
import { bodyTooLarge, internalError } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult } from '../routes/route-set.js'
import { MAX_BODY_BYTES } from '../routes/route-set.js'

/**
 * Runs a route's handler and never rejects.
 *
 * @example
 * const result = await runRoute(route, request)
 */
export async function runRoute(route: Route, request: ApiRequest): Promise<RouteResult> {
  try {
    if (route.access !== undefined && (await parameterBodyTooLarge(request)))
      return bodyTooLarge(MAX_BODY_BYTES)
    return await route.handle(request)
  } catch (error) {
    if (error instanceof BodyTooLargeError) return bodyTooLarge(error.limit)
    console.error(`${route.method} ${route.path} failed:`, error)
    return internalError()
  }
}
