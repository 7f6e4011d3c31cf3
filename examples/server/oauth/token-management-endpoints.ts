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
} from '../../../src/oauth/index.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import { OAUTH_REALM, overLimit, readRequest, respond } from './json-endpoints.js'
import type { OAuthContext } from './oauth-context.js'

// The options both endpoints take (introspection adds an optional `usernameOf`).
type EndpointOptions = HandleRevocationRequestOptions

// What both endpoints do around the core: the network's limit, the request read as the token
// endpoint reads it, the client looked up for this network. Revocation shares the token endpoint's
// limit; introspection has a larger one of its own, but only for a resource server whose secret
// was proven within the last minutes (anyone else, a resource server's first call included,
// counts against the token endpoint's, so a guesser gets no more checks than there).
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
  const limited = await overLimit(context, request, known ? 'introspection' : 'token')
  if (limited !== undefined) return limited
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
  return respond(what, await handle(params, options))
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
