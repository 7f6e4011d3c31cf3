/**
 * `POST /oauth/revoke` (RFC 7009) and `POST /oauth/introspect` (RFC 7662). The rules are the
 * core's (`handleRevocationRequest`, `handleIntrospectionRequest`); these handlers only apply the
 * per-address limit, read the request as the token endpoint does and send the core's answer.
 */
import { handleIntrospectionRequest, handleRevocationRequest } from '../../../src/oauth/index.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import { OAUTH_REALM, overLimit, readRequest, respond } from './json-endpoints.js'
import type { OAuthContext } from './oauth-context.js'

/**
 * `POST /oauth/revoke`: a client revokes a token it was issued (a refresh token with its family).
 *
 * @example
 * { method: 'POST', path: '/oauth/revoke', handle: (request) => revoke(context, request) }
 */
export async function revoke(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const limited = await overLimit(context, request, 'token')
  if (limited !== undefined) return limited
  const checked = await readRequest(request)
  if (!checked.ok) return checked.result
  const { params, authorization } = checked
  return respond(
    'POST /oauth/revoke',
    await handleRevocationRequest(params, {
      clients: context.clients.lookupFor(params, authorization, context.guard.network(request.clientAddress)),
      state: context.state,
      tokens: context.tokens,
      now: context.now(),
      authorization,
      realm: OAUTH_REALM,
    }),
  )
}

/**
 * `POST /oauth/introspect`: a resource server's client asks whether a token is active.
 *
 * @example
 * { method: 'POST', path: '/oauth/introspect', handle: (request) => introspect(context, request) }
 */
export async function introspect(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const limited = await overLimit(context, request, 'token')
  if (limited !== undefined) return limited
  const checked = await readRequest(request)
  if (!checked.ok) return checked.result
  const { params, authorization } = checked
  return respond(
    'POST /oauth/introspect',
    await handleIntrospectionRequest(params, {
      clients: context.clients.lookupFor(params, authorization, context.guard.network(request.clientAddress)),
      state: context.state,
      tokens: context.tokens,
      now: context.now(),
      authorization,
      realm: OAUTH_REALM,
      // The server's user ids are the users' handles: what a person signs in with.
      usernameOf: (userId) => userId,
    }),
  )
}
