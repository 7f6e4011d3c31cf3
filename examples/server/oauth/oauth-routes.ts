/**
 * The OAuth route set of the reference server (docs/oauth.md), `auth_url` being the server's own
 * origin:
 *
 * | route | what |
 * |---|---|
 * | `GET /oauth/authorize` | validate, then sign in (`handle`, `password`), then the consent page |
 * | `POST /oauth/consent` | the consent answer (`decision` = `approve` / `deny`), both flows |
 * | `POST /oauth/device_authorization` | start a device grant (form or JSON body) |
 * | `GET /device`, `POST /device` | the verification page (`user_code`), then sign-in and consent |
 * | `POST /oauth/token` | codes, device codes and refresh tokens for tokens (form or JSON body) |
 * | `POST /oauth/revoke` | a client revokes a token it was issued (RFC 7009) |
 * | `POST /oauth/introspect` | a resource server's client asks about a token (RFC 7662) |
 * | `POST /oauth/register` | a public client registers itself (RFC 7591) |
 * | `GET /.well-known/oauth-authorization-server[/PREFIX]` | the endpoints, for discovery (RFC 8414) |
 * | `GET /.well-known/oauth-protected-resource[/PREFIX][/api/v1]` | the API's metadata (RFC 9728) |
 *
 * Routes without `access`: the pages have their own sessions, the JSON endpoints their own client
 * authentication. Over plain HTTP from another machine the pages are a 403 page and the POST
 * endpoints a 400 `invalid_request` (../web/https-only.ts). docs/oauth.md describes the flows for
 * users of the server.
 */
import { OAuthError } from 'data-access-policy/oauth'
import { json } from '../routes/http-result.js'
import type { Route, RouteResult, RouteSet } from '../routes/route-set.js'
import { httpsOnly } from '../web/https-only.js'
import { answerConsent, authorize } from './authorization-pages.js'
import { enterUserCode, showDevicePage } from './device-pages.js'
import { discoveryRoutes } from './discovery.js'
import { deviceAuthorization, token } from './json-endpoints.js'
import { createOAuthContext, type OAuthContext, type OAuthContextOptions } from './oauth-context.js'
import { CONSENT_PATH, DEVICE_PATH } from './oauth-pages.js'
import { REGISTRATION_PATH, register } from './registration-endpoint.js'
import { introspect, revoke } from './token-management-endpoints.js'

// The JSON endpoints' answer when a store fails before the core runs (a rate-limit count): the core's
// own `server_error` 503 in RFC 6749's shape, never the pages' HTML.
function unavailable(): RouteResult {
  const error = new OAuthError('server_error', 'the authorization server is temporarily unavailable', {
    status: 503,
  })
  return json(error.toJSON(), error.status, { 'cache-control': 'no-store', pragma: 'no-cache' })
}

/** The OAuth route set and the context it runs on (for tests that look inside). */
export interface OAuthRouteSet extends RouteSet {
  readonly context: OAuthContext
}

/**
 * Builds the OAuth route set from the seed's clients, the API's token store and the pages' context.
 *
 * @example
 * const routes = oauthRoutes({ clients: seed.clients, tokens, web })
 */
export function oauthRoutes(options: OAuthContextOptions): OAuthRouteSet {
  const context = createOAuthContext(options)
  const pages: Route[] = [
    { method: 'GET', path: '/oauth/authorize', handle: (request) => authorize(context, request) },
    { method: 'POST', path: CONSENT_PATH, handle: (request) => answerConsent(context, request) },
    { method: 'GET', path: DEVICE_PATH, handle: (request) => showDevicePage(context, request) },
    { method: 'POST', path: DEVICE_PATH, handle: (request) => enterUserCode(context, request) },
  ]
  const routes: Route[] = [
    ...pages.map(httpsOnly(context.web.paths)),
    {
      method: 'POST',
      path: '/oauth/device_authorization',
      handle: (request) => deviceAuthorization(context, request),
      unavailable,
    },
    { method: 'POST', path: '/oauth/token', handle: (request) => token(context, request), unavailable },
    { method: 'POST', path: '/oauth/revoke', handle: (request) => revoke(context, request), unavailable },
    {
      method: 'POST',
      path: '/oauth/introspect',
      handle: (request) => introspect(context, request),
      unavailable,
    },
    { method: 'POST', path: REGISTRATION_PATH, handle: (request) => register(context, request), unavailable },
    ...discoveryRoutes(context.origin),
  ]
  return { name: 'oauth', routes, context }
}
