import { requireNow } from '../tokens/clock.js'
import type { TokenStore } from '../tokens/token-store.js'
import {
  errorResponse,
  type OAuthEndpointResponse,
  requireRealm,
  successResponse,
} from './endpoint-response.js'
import { readPresentedToken } from './find-presented-token.js'
import { revokeAccessTokens, revokeRefreshFamily } from './issue-tokens.js'
import type { LookupClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import type { OAuthParams } from './oauth-params.js'
import type { OAuthStateStore } from './oauth-state-store.js'

/** What {@link handleRevocationRequest} needs; the same stores and registry as the token endpoint. */
export type HandleRevocationRequestOptions = {
  readonly clients: LookupClient
  readonly state: OAuthStateStore
  readonly tokens: TokenStore
  /** The clock, epoch ms. */
  readonly now: number
  /** The request's `Authorization` header, for `client_secret_basic`. */
  readonly authorization?: string | undefined
  /** Realm of the `WWW-Authenticate: Basic` challenge sent with `invalid_client`; `oauth` by default. */
  readonly realm?: string
}

/** The answer of the revocation endpoint: an empty JSON object, or a §5.2 error body. */
export type RevocationEndpointResponse = OAuthEndpointResponse<Record<string, never>>

const REVOKED: Record<string, never> = Object.freeze({})

function issuedToAnother(): OAuthError {
  return new OAuthError('invalid_request', 'the token was issued to another client')
}

/**
 * The revocation endpoint (`POST /oauth/revoke`, RFC 7009). The client authenticates as at the
 * token endpoint (a confidential client with its secret, a public client with its `client_id`, a
 * session client with neither) and may revoke only the tokens issued to it.
 *
 * - an OAuth access token (`dao_`) is revoked;
 * - a refresh token revokes its whole family, so it can never rotate again, and every access token
 *   the family issued;
 * - an unknown, malformed, expired or already revoked token answers 200 all the same (§2.2);
 * - a working API token (`dap_`) is `unsupported_token_type` (§2.2.1): API tokens are revoked by
 *   their owner in the settings pages, and a 200 would tell a client its token was gone while it
 *   still works; an unknown, expired or revoked one answers 200 like any other;
 * - `token_type_hint` only orders the search; a token of another client is `invalid_request`.
 *
 * A store failure answers `server_error` (503): the client must not believe a token revoked.
 *
 * @throws {ConfigError} for a bad `realm`, {@link InvalidArgumentError} for a bad `now`.
 * @example
 * const { status, headers, body } = await handleRevocationRequest(params, {
 *   clients, state, tokens, now: Date.now(), authorization: req.headers.authorization,
 * })
 * reply.code(status).headers(headers).send(body)
 * @see https://www.rfc-editor.org/rfc/rfc7009#section-2
 */
export async function handleRevocationRequest(
  params: OAuthParams,
  options: HandleRevocationRequestOptions,
): Promise<RevocationEndpointResponse> {
  requireNow(options.now)
  const realm = requireRealm(options.realm)
  try {
    const { client, found } = await readPresentedToken(params, options)
    const { tokens, state, now } = options
    if (found.type === 'access' && found.kind === 'api') {
      // Revoked by its owner in the settings, never by a client; one that no longer works is a dead
      // token like any other (200, §2.2), and only a working one is refused, so that no client
      // believes gone a token that still opens the API.
      if (found.status === 'active') {
        throw new OAuthError(
          'unsupported_token_type',
          'API tokens are revoked by their owner in the token settings, not by a client',
        )
      }
    } else if (found.type === 'access') {
      if (found.record.clientId !== client?.id) throw issuedToAnother()
      await revokeAccessTokens(tokens, [found.record.id], now)
    } else if (found.type === 'refresh') {
      if (found.family.clientId !== client?.id) throw issuedToAnother()
      await revokeRefreshFamily({ tokens, state, now }, found.family.id)
    }
    return successResponse(REVOKED)
  } catch (error) {
    return errorResponse(error, realm)
  }
}
