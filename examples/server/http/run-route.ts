/**
 * Running a neutral route (routes/route-set.ts) on behalf of a binding: the handler's failures become
 * answers here — a body past the cap is 413, a large body that stalled past its deadline 408, a store that fails (a `TokenStoreError`: tokens,
 * OAuth state, sessions, rate limits) is 503 and reported, anything else is 500 (logged, never
 * sent) — so that no framework's own error page ever answers for the API.
 *
 * The adapters have authenticated and authorized an API route's request by then, including the
 * policy's 400 for an `access_token` in a parsed form or JSON body next to the header.
 */

import { deny, TokenStoreError } from 'data-access-policy'
import {
  BodyReadTimeoutError,
  BodyTooLargeError,
  LargeBodyRefusedError,
  parameterBodyTooLarge,
} from '../request/body.js'
import { bodyReadTimeout, bodyTooLarge, denial, internalError } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult } from '../routes/route-set.js'
import { MAX_BODY_BYTES } from '../routes/route-set.js'

/** Where a failure behind a 503 is reported: what failed, and where. */
export type ErrorReport = (error: unknown, where: string) => void

/**
 * Runs a route's handler and never rejects. A store failure is reported to `report` and answered
 * 503: the route's own `unavailable` answer (every page has the 503 page: web/https-only.ts), else
 * the policy's JSON 503.
 *
 * @example
 * const result = await runRoute(route, request, app.reportError)
 */
export async function runRoute(route: Route, request: ApiRequest, report: ErrorReport): Promise<RouteResult> {
  try {
    if (route.access !== undefined && (await parameterBodyTooLarge(request)))
      return bodyTooLarge(route.maxBodyBytes ?? MAX_BODY_BYTES)
    return await route.handle(request)
  } catch (error) {
    if (error instanceof BodyTooLargeError) return bodyTooLarge(error.limit)
    if (error instanceof BodyReadTimeoutError) return bodyReadTimeout(error.deadlineMs)
    // A route that refused the body past the default cap and did not say how: the default cap's 413.
    if (error instanceof LargeBodyRefusedError) return bodyTooLarge(MAX_BODY_BYTES)
    const where = `${route.method} ${route.path}`
    if (error instanceof TokenStoreError) {
      report(error, where)
      if (route.access !== undefined) return denial(deny('service_unavailable'))
      return route.unavailable?.() ?? denial(deny('service_unavailable'))
    }
    report(error, `${where} failed`)
    return internalError()
  }
}
