/**
 * `POST /oauth/revoke` (RFC 7009) and `POST /oauth/introspect` (RFC 7662). The rules are the
 * core's (`handleRevocationRequest`, `handleIntrospectionRequest`); these handlers only apply the
 * per-address limit, read the request as the token endpoint does and send the core's answer.
 */
import {
  type HandleRevocationRequestOptions,
  handleIntrospectionRequest,
  handleRevocationRequest,
  type OAuthEndpointResponse,
  type OAuthParams,
} from 'data-access-policy/oauth'
import type { LimitCheck } from '../limits/abuse-limits.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import { OAUTH_REALM, overLimit, readRequest, respond, tooManyRequests } from './json-endpoints.js'
import type { OAuthContext } from './oauth-context.js'

// The options both endpoints take (introspection adds an optional `usernameOf`).
type EndpointOptions = HandleRevocationRequestOptions

// What both endpoints do around the core: the network's limit, the request read as the token
// endpoint reads it, the client looked up for this network. Revocation shares the token endpoint's
// limit; introspection has a larger one of its own, but only for a resource server whose secret
// was proven within the last minutes (anyone else, a resource server's first call included,
// counts against the token endpoint's, so a guesser gets no more checks than there). A proven
// resource server's inactive answers are moved to a budget of their own once known (the lookup is
// cheap; the budget is what the server lets one client cost it): junk it relays cannot spend the
// budget that serves its users' real tokens.
async function answer(
  what: string,
  introspection: boolean,
  context: OAuthContext,
  request: ApiRequest,
  handle: (params: OAuthParams, options: EndpointOptions) => Promise<OAuthEndpointResponse<unknown>>,
): Promise<RouteResult> {
  const checked = await readRequest(request)
  const known =
    checked.ok && introspection && context.clients.isKnownIntrospector(checked.params, checked.authorization)
  let counted: LimitCheck | undefined
  if (known) {
    counted = await context.guard.hit('introspection', request.clientAddress)
    if (!counted.ok) return tooManyRequests('introspection', counted.retryAfter)
  } else {
    const limited = await overLimit(context, request, 'token')
    if (limited !== undefined) return limited
  }
  if (!checked.ok) return checked.result
  const { params, authorization } = checked
  const options: EndpointOptions = {
    clients: context.clients.lookupFor(params, authorization, context.guard.network(request.clientAddress)),
    state: context.state,
    tokens: context.tokens,
    now: context.now(),
    authorization,
    realm: OAUTH_REALM,
  }
  const response = await handle(params, options)
  if (counted !== undefined && isInactive(response)) {
    const moved = await moveToInactive(context, request, counted)
    if (moved !== undefined) return moved
  }
  return respond(what, response)
}

function isInactive(response: OAuthEndpointResponse<unknown>): boolean {
  const body = response.body as { active?: unknown }
  return response.status === 200 && body.active === false
}

// Takes the request's hit back from the introspection budget (unless its window has ended) and
// counts it against the inactive answers' budget instead: over that, the answer is withheld.
async function moveToInactive(
  context: OAuthContext,
  request: ApiRequest,
  counted: LimitCheck,
): Promise<RouteResult | undefined> {
  await context.guard.giveBack(counted)
  const check = await context.guard.hit('introspectionInactive', request.clientAddress)
  return check.ok ? undefined : tooManyRequests('introspectionInactive', check.retryAfter)
}

/**
 * `POST /oauth/revoke`: a client revokes a token it was issued (a refresh token with its family).
 *
 * @example
 * { method: 'POST', path: '/oauth/revoke', handle: (request) => revoke(context, request) }
 */
export function revoke(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  return answer('POST /oauth/revoke', false, context, request, handleRevocationRequest)
}

/**
 * `POST /oauth/introspect`: a resource server's client asks whether a token is active.
 *
 * @example
 * { method: 'POST', path: '/oauth/introspect', handle: (request) => introspect(context, request) }
 */
export function introspect(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  return answer('POST /oauth/introspect', true, context, request, (params, options) =>
    // The server's user ids are the users' handles: what a person signs in with.
    handleIntrospectionRequest(params, { ...options, usernameOf: (userId) => userId }),
  )
}
