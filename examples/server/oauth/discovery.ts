/**
 * Discovery documents: the authorization server's metadata (RFC 8414) and the API's
 * protected-resource metadata (RFC 9728), both derived from the server's public origin
 * (`--public-url`, else its listening address), never from a request's `Host`.
 *
 * Each is served at the root location and, for an origin with a path (`https://data.example.org/dap`),
 * at the path-inserted one (`/.well-known/oauth-authorization-server/dap`), which is where RFC 8414
 * §3.1 and RFC 9728 §3.1 clients look; a proxy in front of the server forwards that path unchanged.
 */
import { SCOPES } from 'data-access-policy'
import { DPOP_ALGORITHMS } from 'data-access-policy/dpop'
import { DEVICE_CODE_GRANT_TYPE } from 'data-access-policy/oauth'
import { API_PREFIX } from '../api/api-routes.js'
import { MCP_PATH } from '../mcp/mcp-tools.js'
import type { PublicOrigin } from '../public-origin.js'
import { json } from '../routes/http-result.js'
import type { Route, RouteResult } from '../routes/route-set.js'

/** The well-known name of the authorization server's metadata (RFC 8414 §3). */
export const AUTHORIZATION_SERVER = 'oauth-authorization-server'
/** The well-known name of a protected resource's metadata (RFC 9728 §3). */
export const PROTECTED_RESOURCE = 'oauth-protected-resource'
// The client authentication methods the endpoints accept (client-registry.ts, authenticate-client.ts).
const CLIENT_AUTH = ['none', 'client_secret_basic', 'client_secret_post']
const CONFIDENTIAL_AUTH = ['client_secret_basic', 'client_secret_post']

/**
 * The RFC 8414 §2 metadata: every endpoint the server has, and only what it supports.
 *
 * @example
 * authorizationServerMetadata(new PublicOrigin('https://data.example.org/dap')).issuer // 'https://data.example.org/dap'
 */
export function authorizationServerMetadata(origin: PublicOrigin): Record<string, unknown> {
  const issuer = origin.url
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    device_authorization_endpoint: `${issuer}/oauth/device_authorization`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    // RFC 7591: public clients register themselves here (oauth/registration-endpoint.ts).
    registration_endpoint: `${issuer}/oauth/register`,
    // draft-ietf-oauth-client-id-metadata-document: an https client_id names the client's metadata.
    client_id_metadata_document_supported: true,
    scopes_supported: SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT_TYPE],
    code_challenge_methods_supported: ['S256'],
    // RFC 9207: every authorization response, success or error, carries `iss`.
    authorization_response_iss_parameter_supported: true,
    token_endpoint_auth_methods_supported: CLIENT_AUTH,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH,
    // RFC 7662 §4: only registered confidential clients allowed to introspect.
    introspection_endpoint_auth_methods_supported: CONFIDENTIAL_AUTH,
    // RFC 9728 §4: the resources that accept this server's tokens.
    protected_resources: [`${issuer}${API_PREFIX}`, `${issuer}${MCP_PATH}`],
    // RFC 9449 §5.1: the token endpoint binds tokens to DPoP proofs signed with these.
    dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
  }
}

/**
 * The RFC 9728 §2 metadata of `resource`: who issues its tokens, what scopes it knows, and that it
 * takes them in the `Authorization` header only (RFC 6750 §2.1; the policy refuses the others).
 *
 * @example
 * protectedResourceMetadata(origin, `${origin.url}/api/v1`).bearer_methods_supported // ['header']
 */
export function protectedResourceMetadata(origin: PublicOrigin, resource: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [origin.url],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
  }
}

/**
 * The URL of the API's protected-resource metadata, for the policy's `resourceMetadata`: the
 * path-inserted location of `{origin}/api/v1`.
 *
 * @example
 * resourceMetadataUrl(new PublicOrigin('https://data.example.org'))
 * // 'https://data.example.org/.well-known/oauth-protected-resource/api/v1'
 */
export function resourceMetadataUrl(origin: PublicOrigin): string {
  return origin.wellKnown(PROTECTED_RESOURCE, API_PREFIX)
}

/**
 * `build`, made once per origin: what depends only on the origin is not rebuilt per request. The
 * origin may be known only once the server listens (before any request), so it is read on the
 * first call, and again on each to notice a change.
 *
 * @example
 * const metadataUrl = perOrigin(origin, () => resourceMetadataUrl(origin))
 */
export function perOrigin<T>(origin: PublicOrigin, build: () => T): () => T {
  let cached: { readonly url: string; readonly value: T } | undefined
  return () => {
    const url = origin.url
    if (cached?.url !== url) cached = { url, value: build() }
    return cached.value
  }
}

const served = (origin: PublicOrigin, answer: () => Record<string, unknown>) => {
  const document = perOrigin(origin, answer)
  return async (): Promise<RouteResult> => json(document())
}

/**
 * The discovery routes: the authorization server's metadata at `/.well-known/oauth-authorization-server`
 * (and `…/PREFIX` for an origin with a path), the API's protected-resource metadata at
 * `/.well-known/oauth-protected-resource[/PREFIX]/api/v1`, the MCP endpoint's at
 * `/.well-known/oauth-protected-resource[/PREFIX]/mcp`, and the origin's own at
 * `/.well-known/oauth-protected-resource[/PREFIX]` (with a prefix, not at the root: that would
 * describe the whole host).
 *
 * @example
 * const routes = discoveryRoutes(origin)
 */
export function discoveryRoutes(origin: PublicOrigin): Route[] {
  const prefix = origin.pathPrefix
  const asPaths = [
    `/.well-known/${AUTHORIZATION_SERVER}`,
    ...(prefix === '' ? [] : [`/.well-known/${AUTHORIZATION_SERVER}${prefix}`]),
  ]
  // RFC 9728 §3.3: a document's `resource` is the identifier its location was formed from. The root
  // location would describe the whole host, which a server under a prefix may share with others:
  // with a prefix, only the path-inserted one is served.
  const originPath = `/.well-known/${PROTECTED_RESOURCE}${prefix}`
  const asMetadata = served(origin, () => authorizationServerMetadata(origin))
  return [
    ...asPaths.map((path): Route => ({ method: 'GET', path, handle: asMetadata })),
    {
      method: 'GET',
      path: originPath,
      handle: served(origin, () => protectedResourceMetadata(origin, origin.url)),
    },
    {
      method: 'GET',
      path: `/.well-known/${PROTECTED_RESOURCE}${prefix}${API_PREFIX}`,
      handle: served(origin, () => protectedResourceMetadata(origin, `${origin.url}${API_PREFIX}`)),
    },
    {
      method: 'GET',
      path: `/.well-known/${PROTECTED_RESOURCE}${prefix}${MCP_PATH}`,
      handle: served(origin, () => protectedResourceMetadata(origin, `${origin.url}${MCP_PATH}`)),
    },
  ]
}
