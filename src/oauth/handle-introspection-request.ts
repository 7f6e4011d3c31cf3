import type { Scope } from '../decisions/scopes.js'
import { requireNow } from '../tokens/clock.js'
import type { TokenStore } from '../tokens/token-store.js'
import {
  errorResponse,
  type OAuthEndpointResponse,
  requireRealm,
  successResponse,
} from './endpoint-response.js'
import { type PresentedToken, readPresentedToken } from './find-presented-token.js'
import type { LookupClient, OAuthClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import type { OAuthParams } from './oauth-params.js'
import type { OAuthStateStore } from './oauth-state-store.js'

/** What {@link handleIntrospectionRequest} needs; the same stores and registry as the token endpoint. */
export type HandleIntrospectionRequestOptions = {
  readonly clients: LookupClient
  readonly state: OAuthStateStore
  readonly tokens: TokenStore
  /** The clock, epoch ms. */
  readonly now: number
  /** The request's `Authorization` header, for `client_secret_basic`. */
  readonly authorization?: string | undefined
  /** Realm of the `WWW-Authenticate: Basic` challenge sent with `invalid_client`; `oauth` by default. */
  readonly realm?: string
  /**
   * The user's human-readable name for `username`, where the host has one (it may be the user id
   * itself); `username` is left out when absent or when it answers `undefined`.
   */
  readonly usernameOf?: (userId: string) => string | undefined
}

/**
 * An introspection answer (RFC 7662 §2.2): `{"active": false}` for anything not currently valid,
 * else what the token grants. Never the token value.
 */
export type IntrospectionResponseBody =
  | { readonly active: false }
  | {
      readonly active: true
      /** The granted scopes, space-delimited, `public` first. */
      readonly scope: string
      /** The OAuth client the token was issued to; absent for API tokens and session clients. */
      readonly client_id?: string
      /** The user the token acts for. */
      readonly sub: string
      readonly username?: string
      /**
       * `DPoP` for an access token bound to a key (RFC 9449 §6.2), `Bearer` for any other; absent
       * for a refresh token, which is no credential at a resource.
       */
      readonly token_type?: 'Bearer' | 'DPoP'
      /** Expiry in seconds since the epoch; absent for an API token that never expires. */
      readonly exp?: number
      /** Issue instant in seconds since the epoch. */
      readonly iat: number
      /** The token's id (never its value), for logs and for a remote token store's records. */
      readonly jti?: string
      /**
       * The resources the token is for (RFC 8707, RFC 7662 §2.2): a string when it names one, an
       * array when several; absent for a token usable at any of the issuer's resources.
       */
      readonly aud?: string | readonly string[]
      /** The key a bound token is for (RFC 9449 §6.2, RFC 7800): its JWK SHA-256 thumbprint. */
      readonly cnf?: { readonly jkt: string }
    }

/** The answer of the introspection endpoint: an RFC 7662 body, or a §5.2 error body, never cached. */
export type IntrospectionEndpointResponse = OAuthEndpointResponse<IntrospectionResponseBody>

const INACTIVE: IntrospectionResponseBody = Object.freeze({ active: false })

function seconds(epochMs: number): number {
  return Math.floor(epochMs / 1000)
}

// RFC 7662 §4: the caller is a protected resource the operator named, authenticated by its secret.
function requireIntrospector(client: OAuthClient | undefined): void {
  if (client === undefined) {
    throw new OAuthError('invalid_client', 'introspection requires client authentication')
  }
  if (client.secretHash === undefined) {
    throw new OAuthError('invalid_client', 'introspection requires a confidential client')
  }
  if (client.introspect !== true) {
    throw new OAuthError('unauthorized_client', 'this client is not allowed to introspect tokens')
  }
}

function describe(
  found: PresentedToken,
  now: number,
  usernameOf: ((userId: string) => string | undefined) | undefined,
): IntrospectionResponseBody {
  let fields: {
    userId: string
    scopes: readonly Scope[]
    clientId: string | undefined
    createdAt: number
    expiresAt: number | undefined
    bearer: boolean
    id: string | undefined
    audience: readonly string[] | undefined
    jkt: string | undefined
  }
  if (found.type === 'access') {
    const { record } = found
    if (found.status !== 'active') return INACTIVE
    fields = {
      userId: record.userId,
      scopes: record.scopes,
      clientId: record.clientId,
      createdAt: record.createdAt,
      expiresAt: found.expiresAt,
      bearer: true,
      id: record.id,
      audience: record.audience,
      jkt: record.dpopJkt,
    }
  } else if (found.type === 'refresh') {
    const { family } = found
    // Only the family's current token is valid: a rotated one is a replay, a revoked family is over.
    if (!found.current || family.revokedAt !== undefined || !(now < family.expiresAt)) return INACTIVE
    fields = {
      userId: family.userId,
      scopes: family.scopes,
      clientId: family.clientId,
      createdAt: family.createdAt,
      expiresAt: family.expiresAt,
      bearer: false,
      id: undefined,
      audience: family.audience,
      jkt: family.dpopJkt,
    }
  } else {
    return INACTIVE
  }
  const username = usernameOf?.(fields.userId)
  return {
    active: true,
    scope: fields.scopes.join(' '),
    ...(fields.clientId !== undefined && { client_id: fields.clientId }),
    sub: fields.userId,
    ...(username !== undefined && { username }),
    ...(fields.bearer && { token_type: fields.jkt === undefined ? ('Bearer' as const) : ('DPoP' as const) }),
    ...(fields.expiresAt !== undefined && { exp: seconds(fields.expiresAt) }),
    iat: seconds(fields.createdAt),
    ...(fields.id !== undefined && { jti: fields.id }),
    ...(fields.audience !== undefined && { aud: audienceClaim(fields.audience) }),
    ...(fields.jkt !== undefined && { cnf: { jkt: fields.jkt } }),
  }
}

// RFC 7662 §2.2 takes `aud` from JWT (RFC 7519 §4.1.3): one string, or an array of them.
function audienceClaim(audience: readonly string[]): string | readonly string[] {
  return audience.length === 1 ? audience[0]! : audience
}

/**
 * The introspection endpoint (`POST /oauth/introspect`, RFC 7662). The caller authenticates as a
 * registered confidential client the operator allowed to introspect ({@link OAuthClient.introspect}):
 * without credentials, or as a public client, it is `invalid_client` (401); as a client without the
 * grant, `unauthorized_client`. Then `{"active": false}` for anything not currently valid (unknown,
 * malformed, expired, revoked, a rotated refresh token), else `active`, `scope`, `client_id`,
 * `sub`, `username` (with {@link HandleIntrospectionRequestOptions.usernameOf}), `token_type`,
 * `exp`, `iat`, `jti` (the token's id), `aud` (the token's resources: a string for one, an array
 * for several; absent for a token without audience) and, for a token bound to a DPoP key,
 * `token_type` `DPoP` and `cnf.jkt` (RFC 9449 §6.2). Works for API (`dap_`) and OAuth (`dao_`) access tokens
 * and for refresh tokens; never answers the token value. A store failure is `server_error` (503),
 * never `active`.
 *
 * @throws {ConfigError} for a bad `realm`, {@link InvalidArgumentError} for a bad `now`.
 * @example
 * const { status, headers, body } = await handleIntrospectionRequest(params, {
 *   clients, state, tokens, now: Date.now(), authorization: req.headers.authorization,
 * })
 * reply.code(status).headers(headers).send(body) // { active: true, scope: 'public data.data', … }
 * @see https://www.rfc-editor.org/rfc/rfc7662#section-2
 */
export async function handleIntrospectionRequest(
  params: OAuthParams,
  options: HandleIntrospectionRequestOptions,
): Promise<IntrospectionEndpointResponse> {
  requireNow(options.now)
  const realm = requireRealm(options.realm)
  try {
    const { found } = await readPresentedToken(params, options, requireIntrospector)
    return successResponse(describe(found, options.now, options.usernameOf))
  } catch (error) {
    return errorResponse(error, realm)
  }
}
