/**
 * The OAuth endpoints that answer JSON: `POST /oauth/token` (RFC 6749 §3.2, RFC 8628 §3.4) and
 * `POST /oauth/device_authorization` (RFC 8628 §3.1), and what every such endpoint checks first
 * (limits, transport, one `Authorization` header, the body). The rules are the core's
 * (`handleTokenRequest`, `handleDeviceAuthorizationRequest`); these handlers only parse the body,
 * pick the client's credentials and send the core's status, headers and §5.1 / §5.2 body.
 */
import {
  DEVICE_CODE_GRANT_TYPE,
  handleDeviceAuthorizationRequest,
  handleTokenRequest,
  type OAuthEndpointResponse,
  OAuthError,
  type OAuthParams,
} from 'data-access-policy/oauth'
import type { LimitName } from '../limits/abuse-limits.js'
import { BodyTooLargeError } from '../request/body.js'
import { json } from '../routes/http-result.js'
import type { ApiRequest, ResponseHeaders, RouteResult } from '../routes/route-set.js'
import { isTransportAcceptable } from '../web/https-only.js'
import { MetadataLookupRefused } from './metadata-clients.js'
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

// A 5xx of the core is a store failing (the replay cache's is `temporarily_unavailable`): reported.
function logServerError(what: string, error: OAuthError | undefined): void {
  if (error !== undefined && error.status >= 500) console.error(`${what} failed:`, error.cause ?? error)
}

/**
 * Sends a core endpoint's answer, logging a `server_error`'s cause (never a token value). A client
 * lookup refused for now (a metadata document this network may not fetch yet, or too many fetches
 * in flight) is answered as such, with `Retry-After` ({@link documentLookupRefused}).
 *
 * @example
 * return respond('POST /oauth/revoke', await handleRevocationRequest(params, options))
 */
export function respond<TBody>(what: string, response: OAuthEndpointResponse<TBody>): RouteResult {
  const cause = response.error?.cause
  if (cause instanceof MetadataLookupRefused) return documentLookupRefused(cause)
  logServerError(what, response.error)
  return json(response.body, response.status, lowerCased(response.headers))
}

// Whether a limited request is a device-code poll, the one request RFC 8628 §3.5 answers with
// `slow_down`; its body is read only for that (a body that cannot be read is no poll).
async function isDeviceCodePoll(request: ApiRequest): Promise<boolean> {
  try {
    const params = parseOAuthBody(await request.body(), request.contentType)
    return params.grant_type === DEVICE_CODE_GRANT_TYPE
  } catch {
    return false
  }
}

/**
 * Counts the request against each of the network's own limits (the shared device-grant cap is
 * counted where grants are made); the first one over answers.
 *
 * @example
 * const limited = await overLimit(context, request, 'token')
 * if (limited !== undefined) return limited
 */
export async function overLimit(
  context: OAuthContext,
  request: ApiRequest,
  ...names: readonly LimitName[]
): Promise<RouteResult | undefined> {
  for (const name of names) {
    const check = await context.guard.hit(name, request.clientAddress)
    if (!check.ok)
      return tooManyRequests(name, check.retryAfter, name === 'token' && (await isDeviceCodePoll(request)))
  }
  return undefined
}

/**
 * RFC 6585's 429 with `Retry-After`, in the §5.2 shape. The code is RFC 8628's `slow_down` for a
 * device-code poll only (a client told it on a refresh would wrongly lengthen a polling interval it
 * has not got); any other request hears `temporarily_unavailable`, RFC 6749's code for a server
 * that cannot take the request now.
 *
 * @example
 * if (!check.ok) return tooManyRequests('introspection', check.retryAfter)
 */
export function tooManyRequests(name: LimitName, retryAfter: number, poll = false): RouteResult {
  const error = new OAuthError(
    poll ? 'slow_down' : 'temporarily_unavailable',
    name === 'deviceGrants'
      ? 'too many device authorizations are pending on this server; try again later'
      : 'too many requests from this network; try again later',
    { status: 429 },
  )
  return json(error.toJSON(), error.status, { ...NO_STORE, 'retry-after': String(retryAfter) })
}

/**
 * The answer when a client's metadata document cannot be fetched now: `temporarily_unavailable`
 * (RFC 6749 §5.2), 429 when the requesting network fetched too many documents lately, 503 when
 * too many fetches are in flight, both with `Retry-After`. Not `invalid_client`: the client may
 * well be valid, and a client told otherwise may drop an id that works.
 *
 * @example
 * if (error instanceof MetadataLookupRefused) return documentLookupRefused(error)
 */
export function documentLookupRefused(refused: MetadataLookupRefused): RouteResult {
  const status = refused.reason === 'rate-limited' ? 429 : 503
  const error = new OAuthError('temporarily_unavailable', refused.message, { status })
  return json(error.toJSON(), status, { ...NO_STORE, 'retry-after': String(refused.retryAfter) })
}

type Checked =
  | { readonly ok: true; readonly params: OAuthParams; readonly authorization: string | undefined }
  | { readonly ok: false; readonly result: RouteResult }

/**
 * What every OAuth POST endpoint checks before the core runs: transport, one Authorization header,
 * a body within the cap, of a type it reads — each refused in the §5.2 shape.
 *
 * @example
 * const checked = await readRequest(request)
 * if (!checked.ok) return checked.result
 */
export async function readRequest(request: ApiRequest): Promise<Checked> {
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
    if (error instanceof BodyTooLargeError) {
      const description = `the request body is larger than ${error.limit} bytes`
      return {
        ok: false,
        result: oauthError(new OAuthError('invalid_request', description, { status: 413 })),
      }
    }
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
    resources: context.resources().known,
    ...(context.accessTokenTtlMs !== undefined && { accessTokenTtlMs: context.accessTokenTtlMs }),
    // RFC 9449 §4.3: htu is the endpoint as the metadata publishes it, never the request's Host.
    dpop: { url: `${context.origin.url}/oauth/token`, replayCache: context.dpopReplayCache },
    dpopProofs: request.dpop,
  })
  // A registered client that obtained a token keeps its registration (oauth/registrations.ts).
  if (response.status === 200 && typeof params.client_id === 'string') {
    await context.clients
      .markUsed(params.client_id)
      .catch((error: unknown) => console.error('POST /oauth/token: registration not renewed:', error))
  }
  return respond('POST /oauth/token', response)
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
  // Only the operator's clients may use the device flow (oauth/client-registry.ts).
  const clients = context.clients.lookupFor(
    params,
    authorization,
    context.guard.network(request.clientAddress),
    { selfIdentified: false },
  )
  // The client's secret is checked before the cap is counted: a request with a wrong one waits its
  // turn in the hash queue holding none of everyone's cap (the core reuses the answer).
  await context.clients.checkFirst(clients, params, authorization)
  // The cap counts grants created: counted before the core runs (a parallel burst cannot pass it),
  // given back when the core refuses the request (a 400 or 401 spends none of everyone's cap).
  const cap = await context.guard.hitShared('deviceGrants', 'everyone')
  if (!cap.ok) return tooManyRequests('deviceGrants', cap.retryAfter)
  let created = false
  try {
    const response = await handleDeviceAuthorizationRequest(params, {
      clients,
      state: context.state,
      now: context.now(),
      authorization,
      verificationUri: `${context.origin.url}/device`,
      realm: OAUTH_REALM,
      resources: context.resources().known,
    })
    created = response.status === 200
    return respond('POST /oauth/device_authorization', response)
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
