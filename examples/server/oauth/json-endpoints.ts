/**
 * The OAuth endpoints that answer JSON: `POST /oauth/token` (RFC 6749 §3.2, RFC 8628 §3.4),
 * `POST /oauth/device_authorization` (RFC 8628 §3.1) and the server's metadata (RFC 8414). The
 * rules are the core's (`handleTokenRequest`, `handleDeviceAuthorizationRequest`); these handlers
 * only parse the body, pick the client's credentials and send the core's status, headers and
 * §5.1 / §5.2 body.
 */
import { SCOPES } from '../../../src/index.js'
import {
  handleDeviceAuthorizationRequest,
  handleTokenRequest,
  OAuthError,
  type OAuthParams,
} from '../../../src/oauth/index.js'
import type { LimitName } from '../limits/abuse-limits.js'
import { json } from '../routes/http-result.js'
import type { ApiRequest, ResponseHeaders, RouteResult } from '../routes/route-set.js'
import { isTransportAcceptable } from '../web/https-only.js'
import { parseOAuthBody } from './oauth-body.js'
import type { OAuthContext } from './oauth-context.js'

/** Realm of the `WWW-Authenticate: Basic` challenge sent with `invalid_client`. */
export const OAUTH_REALM = 'oauth'

// RFC 6749 §5.1: token answers are never cached; the errors go the same way.
const NO_STORE: ResponseHeaders = { 'cache-control': 'no-store', pragma: 'no-cache' }

function lowerCased(headers: Readonly<Record<string, string>>): ResponseHeaders {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}

function oauthError(error: OAuthError): RouteResult {
  return json(error.toJSON(), error.status, NO_STORE)
}

function logServerError(what: string, error: OAuthError | undefined): void {
  if (error?.error === 'server_error') console.error(`${what} failed:`, error.cause ?? error)
}

// A client over one of the per-address limits: RFC 6585's 429 in the §5.2 shape. `slow_down` is
// RFC 8628's code for a client that asks too often, the only such code OAuth defines.
async function overLimit(
  context: OAuthContext,
  request: ApiRequest,
  ...names: readonly LimitName[]
): Promise<RouteResult | undefined> {
  for (const name of names) {
    const check = await context.guard.hit(name, request.clientAddress)
    if (!check.ok) return tooManyRequests(name, check.retryAfter)
  }
  return undefined
}

function tooManyRequests(name: LimitName, retryAfter: number): RouteResult {
  const error = new OAuthError(
    'slow_down',
    name === 'deviceGrants'
      ? 'too many device authorizations are pending on this server; try again later'
      : 'too many requests from this address; try again later',
    { status: 429 },
  )
  return json(error.toJSON(), error.status, { ...NO_STORE, 'retry-after': String(retryAfter) })
}

type Checked =
  | { readonly ok: true; readonly params: OAuthParams; readonly authorization: string | undefined }
  | { readonly ok: false; readonly result: RouteResult }

// What both POST endpoints check before the core runs: transport, one Authorization header, a body.
async function readRequest(request: ApiRequest): Promise<Checked> {
  if (!isTransportAcceptable(request)) {
    return {
      ok: false,
      result: oauthError(
        new OAuthError('invalid_request', 'use HTTPS: plain HTTP is accepted only from loopback'),
      ),
    }
  }
  if (request.authorization.length > 1) {
    return {
      ok: false,
      result: oauthError(new OAuthError('invalid_request', 'send at most one Authorization header')),
    }
  }
  try {
    const params = parseOAuthBody(await request.body(), request.contentType)
    return { ok: true, params, authorization: request.authorization[0] }
  } catch (error) {
    if (error instanceof OAuthError) return { ok: false, result: oauthError(error) }
    throw error
  }
}

/**
 * `POST /oauth/token`: the authorization-code, device-code and refresh-token grants.
 *
 * @example
 * { method: 'POST', path: '/oauth/token', handle: (request) => token(context, request) }
 */
export async function token(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const limited = await overLimit(context, request, 'token')
  if (limited !== undefined) return limited
  const checked = await readRequest(request)
  if (!checked.ok) return checked.result
  const { params, authorization } = checked
  const response = await handleTokenRequest(params, {
    clients: context.clients.lookupFor(params, authorization, context.guard.network(request.clientAddress)),
    state: context.state,
    tokens: context.tokens,
    now: context.now(),
    authorization,
    realm: OAUTH_REALM,
    ...(context.accessTokenTtlMs !== undefined && { accessTokenTtlMs: context.accessTokenTtlMs }),
  })
  logServerError('POST /oauth/token', response.error)
  return json(response.body, response.status, lowerCased(response.headers))
}

/**
 * `POST /oauth/device_authorization`: starts a device grant; the user then visits `/device`.
 *
 * @example
 * { method: 'POST', path: '/oauth/device_authorization', handle: (request) => deviceAuthorization(context, request) }
 */
export async function deviceAuthorization(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  // The network's own limit first, so that one client cannot use up everyone's allowance.
  const limited = await overLimit(context, request, 'deviceAuthorization')
  if (limited !== undefined) return limited
  const checked = await readRequest(request)
  if (!checked.ok) return checked.result
  const { params, authorization } = checked
  // The cap counts grants created: counted before the core runs (a parallel burst cannot pass it),
  // given back when the core refuses the request (a 400 or 401 spends none of everyone's cap).
  const cap = await context.guard.hitShared('deviceGrants', 'everyone')
  if (!cap.ok) return tooManyRequests('deviceGrants', cap.retryAfter)
  let created = false
  try {
    const response = await handleDeviceAuthorizationRequest(params, {
      clients: context.clients.lookupFor(params, authorization, context.guard.network(request.clientAddress)),
      state: context.state,
      now: context.now(),
      authorization,
      verificationUri: `${context.origin.url}/device`,
      realm: OAUTH_REALM,
    })
    created = response.status === 200
    logServerError('POST /oauth/device_authorization', response.error)
    return json(response.body, response.status, lowerCased(response.headers))
  } finally {
    // A count the store cannot take back stays spent: the cap errs on the side of refusing.
    if (!created) {
      await context.guard
        .giveBack(cap)
        .catch((error: unknown) =>
          console.error('POST /oauth/device_authorization: cap not given back:', error),
        )
    }
  }
}

/**
 * `GET /.well-known/oauth-authorization-server`: where the endpoints are and what they support
 * (RFC 8414), at the server's public origin (`--public-url`, else its listening address).
 *
 * @example
 * { method: 'GET', path: '/.well-known/oauth-authorization-server', handle: () => metadata(context) }
 */
export async function metadata(context: OAuthContext): Promise<RouteResult> {
  const origin = context.origin.url
  return json({
    issuer: origin,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    device_authorization_endpoint: `${origin}/oauth/device_authorization`,
    scopes_supported: SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
  })
}
