import { requireNow } from '../tokens/clock.js'
import { DEFAULT_OAUTH_TOKEN_TTL_MS } from '../tokens/token-record.js'
import type { TokenStore } from '../tokens/token-store.js'
import { authenticateClient } from './authenticate-client.js'
import {
  errorResponse,
  type OAuthEndpointResponse,
  requireDuration,
  requireRealm,
  successResponse,
} from './endpoint-response.js'
import type { GrantContext, TokenResponseBody } from './issue-tokens.js'
import type { LookupClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { redeemAuthorizationCode } from './redeem-authorization-code.js'
import { redeemDeviceCode } from './redeem-device-code.js'
import { refreshAccessToken } from './refresh-access-token.js'
import { compileKnownResources, type KnownResources } from './resource-indicators.js'
import {
  requireClientProof,
  requireDpopOptions,
  type TokenEndpointDpopOptions,
  verifyTokenRequestProof,
} from './token-endpoint-dpop.js'

export type { TokenResponseBody } from './issue-tokens.js'

/** The device-code grant type of RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code'

/** Default lifetime of a refresh token: 30 days, renewed by every rotation. */
export const DEFAULT_REFRESH_TOKEN_TTL_MS = 30 * 24 * 3_600_000

const MAX_TTL_MS = 366 * 24 * 3_600_000

/**
 * What {@link handleTokenRequest} needs: the stores and registry (built once) and the request's clock
 * reading and `Authorization` header (given per request).
 */
export type HandleTokenRequestOptions = {
  readonly clients: LookupClient
  readonly state: OAuthStateStore
  readonly tokens: TokenStore
  /** The clock, epoch ms. */
  readonly now: number
  /** The request's `Authorization` header, for `client_secret_basic`. */
  readonly authorization?: string | undefined
  /** Access-token lifetime; one hour by default (docs/tokens.md). */
  readonly accessTokenTtlMs?: number
  /** Refresh-token lifetime, renewed at each rotation; 30 days by default. */
  readonly refreshTokenTtlMs?: number
  /** Realm of the `WWW-Authenticate: Basic` challenge sent with `invalid_client`; `oauth` by default. */
  readonly realm?: string
  /**
   * The resources a `resource` parameter may name (RFC 8707); the same object as the authorization
   * endpoints'. Without it, any `resource` is `invalid_target`.
   */
  readonly resources?: KnownResources | undefined
  /**
   * DPoP support (RFC 9449 §5): the token endpoint's published URL and the replay cache. Without
   * it a `DPoP` header is ignored and tokens are bearer tokens; a `dpopBound` client or a code
   * requested with `dpop_jkt` cannot get any.
   */
  readonly dpop?: TokenEndpointDpopOptions | undefined
  /** Every `DPoP` header value of the request, as received (more than one is refused). */
  readonly dpopProofs?: readonly string[] | undefined
}

/** The answer of the token endpoint: a §5.1 token body or a §5.2 error body, never cached. */
export type TokenEndpointResponse = OAuthEndpointResponse<TokenResponseBody>

type GrantHandler = (context: GrantContext, params: OAuthParams) => Promise<TokenResponseBody>

const GRANT_HANDLERS: ReadonlyMap<string, GrantHandler> = new Map([
  ['authorization_code', redeemAuthorizationCode],
  [DEVICE_CODE_GRANT_TYPE, redeemDeviceCode],
  ['refresh_token', refreshAccessToken],
])

/**
 * The token endpoint (`POST /oauth/token`). The HTTP layer parses the form or JSON body into
 * `params` and sends back `status`, `headers` and `body` (as JSON).
 *
 * Grants: `authorization_code` (with `code`, `redirect_uri`, `code_verifier`), the device code
 * (`device_code`, `code_verifier`) and `refresh_token`; anything else is `unsupported_grant_type`.
 * A confidential client authenticates with `client_secret_basic` or `client_secret_post`
 * (else `invalid_client`, 401, with a `WWW-Authenticate: Basic` challenge); no `client_id` means a
 * session client. Tokens are `dao_` OAuth tokens saved in `tokens`; registered offline clients also
 * get a rotating refresh token. Tokens are for the audience the grant fixed at consent (RFC 8707);
 * `resource` (repeatable) may narrow it, and naming a resource outside it is `invalid_target`, with
 * nothing issued. A store or registry failure answers `server_error` (503).
 *
 * DPoP (RFC 9449 §5, with `dpop`): a request with a valid proof (one `DPoP` header, `htm` `POST`,
 * `htu` the published token endpoint URL, never replayed) gets an access token bound to the proof's
 * key and `token_type` `DPoP`; so does a public client's refresh family. A bound family, a code
 * requested with `dpop_jkt` and a `dpopBound` client need a proof by the right key. A bad proof is
 * `invalid_dpop_proof` (400); a replay cache that fails is `temporarily_unavailable` (503).
 *
 * @throws {ConfigError} for a bad option (`realm`, a TTL), {@link InvalidArgumentError} for a bad `now`.
 * @example
 * const { status, headers, body } = await handleTokenRequest(params, {
 *   clients, state, tokens, now: Date.now(), authorization: req.headers.authorization,
 *   resources: { known: [`${origin}/api/v1`], defaultResource: `${origin}/api/v1` },
 *   dpop: { url: `${origin}/oauth/token`, replayCache }, dpopProofs: req.headersDistinct.dpop,
 * })
 * reply.code(status).headers(headers).send(body)
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-3.4
 * @see https://www.rfc-editor.org/rfc/rfc8707#section-2.2
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-5
 */
export async function handleTokenRequest(
  params: OAuthParams,
  options: HandleTokenRequestOptions,
): Promise<TokenEndpointResponse> {
  requireNow(options.now)
  const realm = requireRealm(options.realm)
  const accessTokenTtlMs = requireDuration(
    'accessTokenTtlMs',
    options.accessTokenTtlMs,
    DEFAULT_OAUTH_TOKEN_TTL_MS,
    MAX_TTL_MS,
  )
  const refreshTokenTtlMs = requireDuration(
    'refreshTokenTtlMs',
    options.refreshTokenTtlMs,
    DEFAULT_REFRESH_TOKEN_TTL_MS,
    MAX_TTL_MS,
  )
  const resources = compileKnownResources(options.resources)
  requireDpopOptions(options.dpop)
  try {
    const grantType = readParam(params, 'grant_type')
    if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required')
    const client = await authenticateClient({
      params,
      authorization: options.authorization,
      lookupClient: options.clients,
    })
    const handler = GRANT_HANDLERS.get(grantType)
    if (handler === undefined) {
      throw new OAuthError(
        'unsupported_grant_type',
        'grant_type must be authorization_code, refresh_token or device_code',
      )
    }
    // Checked before the grant is touched: a bad proof consumes no code and rotates nothing. The
    // replay check waits for the grant (claimDpopProof below), so refused grants fill no cache.
    const proof = await verifyTokenRequestProof(options.dpopProofs, options.dpop, options.now)
    const dpopJkt = proof?.jkt
    requireClientProof(client, dpopJkt)
    const context: GrantContext = {
      client,
      state: options.state,
      tokens: options.tokens,
      now: options.now,
      accessTokenTtlMs,
      refreshTokenTtlMs,
      resources,
      dpopJkt,
      claimDpopProof: proof === undefined ? async () => {} : proof.claim,
    }
    return successResponse(await handler(context, params))
  } catch (error) {
    return errorResponse(error, realm)
  }
}
