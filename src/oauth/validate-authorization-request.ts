import type { ScopeSet } from '../decisions/scopes.js'
import { JWK_THUMBPRINT_PATTERN } from '../tokens/token-fields.js'
import { buildRedirectUrl } from './build-redirect-url.js'
import type { LookupClient, OAuthClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import { requireS256Challenge } from './pkce-syntax.js'
import { isAllowedRedirectUri } from './redirect-uri.js'
import { parseRequestedScopes } from './requested-scopes.js'
import { compileKnownResources, grantedAudience, type KnownResources } from './resource-indicators.js'

/** A valid authorization request, ready for sign-in and consent. */
export type AuthorizationRequest = {
  /** Absent for a session client (no `client_id`). */
  readonly clientId?: string
  readonly redirectUri: string
  /** The requested scopes; `public` alone when `scope` was absent. */
  readonly scopes: ScopeSet
  readonly state?: string
  /** The S256 code challenge. */
  readonly codeChallenge: string
  /**
   * The resources the token will be for (RFC 8707): those `resource` named, else the host's
   * default resource; absent when the host declared no resources.
   */
  readonly audience?: readonly string[]
  /**
   * The `dpop_jkt` parameter (RFC 9449 §10): the thumbprint of the key the client will prove at the
   * token endpoint; the code is redeemed only with a DPoP proof by that key.
   */
  readonly dpopJkt?: string
}

function readDpopJkt(params: OAuthParams): string | undefined {
  const value = readParam(params, 'dpop_jkt')
  if (value !== undefined && !JWK_THUMBPRINT_PATTERN.test(value)) {
    throw new OAuthError(
      'invalid_request',
      `dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url characters), got ${JSON.stringify(value.slice(0, 64))}`,
    )
  }
  return value
}

/**
 * Options of {@link validateAuthorizationRequest}.
 *
 * @example
 * const options: ValidateAuthorizationRequestOptions = {
 *   resources: { known: ['https://data.example.org/api/v1'], defaultResource: 'https://data.example.org/api/v1' },
 *   issuer: 'https://data.example.org',
 * }
 */
export type ValidateAuthorizationRequestOptions = {
  /**
   * The resources a `resource` parameter may name, and the default one. Without it, any `resource`
   * is `invalid_target` and tokens carry no audience.
   */
  readonly resources?: KnownResources | undefined
  /**
   * The issuer identifier, added as `iss` to every error redirect (RFC 9207); give it to
   * {@link issueAuthorizationCode} too.
   */
  readonly issuer?: string | undefined
}

/**
 * What {@link validateAuthorizationRequest} concluded.
 *
 * - `ok: true`: go on to sign-in and consent; `client` is the registered client, if any.
 * - `respond: 'page'`: show a 400 page naming `error.error`; never redirect, because the client or
 *   its redirect URI could not be verified.
 * - `respond: 'redirect'`: redirect (302/303) to `location`, the verified redirect URI carrying
 *   `error`, `error_description` and `state`.
 */
export type ValidateAuthorizationRequestResult =
  | { readonly ok: true; readonly request: AuthorizationRequest; readonly client?: OAuthClient }
  | { readonly ok: false; readonly respond: 'page'; readonly error: OAuthError }
  | {
      readonly ok: false
      readonly respond: 'redirect'
      readonly error: OAuthError
      readonly redirectUri: string
      readonly location: string
    }

type Verified = { readonly client: OAuthClient | undefined; readonly redirectUri: string }

function page(error: OAuthError): ValidateAuthorizationRequestResult {
  return { ok: false, respond: 'page', error }
}

async function verifyClientAndRedirect(
  params: OAuthParams,
  lookupClient: LookupClient,
): Promise<Verified | OAuthError> {
  let clientId: string | undefined
  let redirectUri: string | undefined
  try {
    clientId = readParam(params, 'client_id')
    redirectUri = readParam(params, 'redirect_uri')
  } catch (error) {
    return error as OAuthError
  }
  let client: OAuthClient | undefined
  if (clientId !== undefined) {
    try {
      client = await lookupClient(clientId)
    } catch (cause) {
      return new OAuthError('server_error', 'the client registry is unavailable', { status: 503, cause })
    }
    if (client?.id !== clientId) return new OAuthError('invalid_client', 'unknown client_id', { status: 400 })
  }
  if (redirectUri === undefined) return new OAuthError('invalid_request', 'redirect_uri is required')
  if (!isAllowedRedirectUri(client, redirectUri)) {
    return new OAuthError(
      'invalid_request',
      client === undefined
        ? 'without client_id, redirect_uri must be http://127.0.0.1:PORT/... or http://[::1]:PORT/...'
        : 'redirect_uri is not registered for this client',
    )
  }
  return { client, redirectUri }
}

/**
 * Validates an authorization request (`GET /oauth/authorize`) before any sign-in. The client and
 * redirect URI are checked first: an unknown `client_id` or a missing, repeated or unregistered
 * `redirect_uri` is a 400 page. Every later error (response type, PKCE, scope, a repeated parameter)
 * is redirected to the verified redirect URI with `error` and `state` (RFC 6749 §4.1.2.1).
 *
 * Rules: `response_type=code` (absent → `invalid_request`, another value →
 * `unsupported_response_type`); `code_challenge` with `code_challenge_method=S256` exactly (else
 * `invalid_request`); `scope` parsed with the core's scope rules (unknown → `invalid_scope`; absent →
 * `public` only); `resource` (repeatable) must name resources of `options.resources` (else
 * `invalid_target`; absent → the default resource, RFC 8707 §2); `dpop_jkt`, when present, a JWK
 * SHA-256 thumbprint (RFC 9449 §10, else `invalid_request`); `state` passed through. Unknown
 * parameters are ignored (RFC 6749 §3.1). With `options.issuer`, error redirects carry `iss`
 * (RFC 9207 §2).
 *
 * @throws {ConfigError} for a bad `options.resources`.
 * @example
 * const result = await validateAuthorizationRequest(Object.fromEntries(url.searchParams), lookupClient, {
 *   resources: { known: [`${origin}/api/v1`], defaultResource: `${origin}/api/v1` },
 *   issuer: origin,
 * })
 * if (!result.ok && result.respond === 'redirect') return reply.redirect(result.location, 303)
 * if (!result.ok) return reply.code(400).send(errorPage(result.error.error))
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2.1
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.4.1
 * @see https://www.rfc-editor.org/rfc/rfc8707#section-2
 * @see https://www.rfc-editor.org/rfc/rfc9207#section-2
 */
export async function validateAuthorizationRequest(
  params: OAuthParams,
  lookupClient: LookupClient,
  options: ValidateAuthorizationRequestOptions = {},
): Promise<ValidateAuthorizationRequestResult> {
  const resources = compileKnownResources(options.resources)
  const verified = await verifyClientAndRedirect(params, lookupClient)
  if (verified instanceof OAuthError) return page(verified)
  const { client, redirectUri } = verified
  let state: string | undefined
  try {
    state = readParam(params, 'state')
    const responseType = readParam(params, 'response_type')
    if (responseType === undefined) throw new OAuthError('invalid_request', 'response_type is required')
    if (responseType !== 'code') {
      throw new OAuthError('unsupported_response_type', 'only response_type=code is supported')
    }
    const codeChallenge = requireS256Challenge(
      readParam(params, 'code_challenge'),
      readParam(params, 'code_challenge_method'),
    )
    const scopes = parseRequestedScopes(readParam(params, 'scope'))
    const audience = grantedAudience(params, resources)
    const dpopJkt = readDpopJkt(params)
    const request: AuthorizationRequest = {
      ...(client !== undefined && { clientId: client.id }),
      redirectUri,
      scopes,
      ...(state !== undefined && { state }),
      codeChallenge,
      ...(audience !== undefined && { audience }),
      ...(dpopJkt !== undefined && { dpopJkt }),
    }
    return client === undefined ? { ok: true, request } : { ok: true, request, client }
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error
    const location = buildRedirectUrl(redirectUri, {
      error: error.error,
      error_description: error.error_description,
      state,
      iss: options.issuer,
    })
    return { ok: false, respond: 'redirect', error, redirectUri, location }
  }
}
