/**
 * `POST /oauth/register`: RFC 7591 dynamic client registration, for public clients only (the rules
 * are the library's `validateClientRegistration`). Counted per network, then per site (an IPv6 /48,
 * an IPv4 /24: `registrationSite`), before the body is read (429 with `Retry-After`); kept in the
 * registration store, which bounds their number, lets unused ones expire, and refuses a new one
 * (429) rather than push out one in use or one just made (oauth/registrations.ts). A registered client gets access
 * tokens, never a refresh token: offline use needs a client the operator registered.
 */
import {
  generateRegisteredClientId,
  OAuthError,
  registrationResponse,
  validateClientRegistration,
} from 'data-access-policy/oauth'
import { siteOf } from '../limits/networks.js'
import { BodyTooLargeError } from '../request/body.js'
import { json } from '../routes/http-result.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import { isTransportAcceptable } from '../web/https-only.js'
import { overLimit, tooManyRequests } from './json-endpoints.js'
import type { OAuthContext } from './oauth-context.js'

/** Where clients register (RFC 7591 §3), under the server's origin. */
export const REGISTRATION_PATH = '/oauth/register'

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

function refuse(error: OAuthError): RouteResult {
  return json(error.toJSON(), error.status, NO_STORE)
}

async function readJsonBody(request: ApiRequest): Promise<unknown | OAuthError> {
  const type = request.contentType?.split(';', 1)[0]?.trim().toLowerCase()
  if (type !== 'application/json') {
    return new OAuthError('invalid_client_metadata', 'the registration request must be application/json')
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await request.body()))
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      return new OAuthError('invalid_request', `the request body is larger than ${error.limit} bytes`, {
        status: 413,
      })
    }
    return new OAuthError('invalid_client_metadata', 'the registration request is not valid JSON')
  }
}

/**
 * `POST /oauth/register`.
 *
 * @example
 * { method: 'POST', path: REGISTRATION_PATH, handle: (request) => register(context, request) }
 */
export async function register(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const { registrations } = context
  if (registrations === undefined) {
    return refuse(new OAuthError('invalid_request', 'this server does not register clients', { status: 404 }))
  }
  const limited = await overLimit(context, request, 'registration')
  if (limited !== undefined) return limited
  // The network's own count first, so that a network already refused creates no site key.
  const site = await context.guard.hitShared('registrationSite', siteOf(request.clientAddress))
  if (!site.ok) return tooManyRequests('registrationSite', site.retryAfter)
  if (!isTransportAcceptable(request)) {
    return refuse(new OAuthError('invalid_request', 'use HTTPS: plain HTTP is accepted only from loopback'))
  }
  const body = await readJsonBody(request)
  if (body instanceof OAuthError) return refuse(body)
  const check = validateClientRegistration(body)
  if (!check.ok) return refuse(check.error)
  const id = generateRegisteredClientId()
  const added = await registrations.add(id, check.registration)
  if (!added.added) {
    const error = new OAuthError(
      'temporarily_unavailable',
      'this server holds as many registered clients as it can; try again later',
      { status: 429 },
    )
    const retryAfter = String(Math.max(1, Math.ceil(added.retryAfterMs / 1000)))
    return json(error.toJSON(), 429, { ...NO_STORE, 'retry-after': retryAfter })
  }
  const issuedAt = Math.floor(context.now() / 1000)
  return json(registrationResponse(id, issuedAt, check.registration), 201, NO_STORE)
}
