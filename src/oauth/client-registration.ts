/**
 * RFC 7591 dynamic client registration, for public clients only: the rules a registration request
 * must meet, the id a registered client gets and the response body. Where registrations are kept,
 * how many and for how long, is the host's.
 */
import { isScope } from '../decisions/scopes.js'
import { generateRandomBase62 } from '../tokens/token-format.js'
import { isPlainText, MAX_CLIENT_NAME_LENGTH, MAX_CLIENT_REDIRECT_URIS } from './client-metadata-document.js'
import type { OAuthClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import { isRegistrableRedirectUri } from './registrable-redirect-uri.js'

/** Every dynamically registered client's id starts with this; no operator client's may. */
export const REGISTERED_CLIENT_ID_PREFIX = 'dyn_'

/** What a registration request asked for, as accepted. */
export interface ClientRegistration {
  readonly redirectUris: readonly string[]
  /** `client_name`, plain text, when given. */
  readonly name: string | undefined
  /** `scope` as requested (space-separated contract scopes), when given. */
  readonly scope: string | undefined
}

/** The outcome of {@link validateClientRegistration}. */
export type ClientRegistrationCheck =
  | { readonly ok: true; readonly registration: ClientRegistration }
  | { readonly ok: false; readonly error: OAuthError }

const metadataError = (description: string): ClientRegistrationCheck => ({
  ok: false,
  error: new OAuthError('invalid_client_metadata', description),
})

function checkRedirectUris(value: unknown): ClientRegistrationCheck | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    return {
      ok: false,
      error: new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array of URIs'),
    }
  }
  if (value.length > MAX_CLIENT_REDIRECT_URIS) {
    return {
      ok: false,
      error: new OAuthError(
        'invalid_redirect_uri',
        `redirect_uris may list at most ${MAX_CLIENT_REDIRECT_URIS}`,
      ),
    }
  }
  const bad = value.find((uri) => typeof uri !== 'string' || !isRegistrableRedirectUri(uri))
  if (bad === undefined) return undefined
  return {
    ok: false,
    error: new OAuthError(
      'invalid_redirect_uri',
      `redirect_uris holds ${JSON.stringify(bad)}; expected http://127.0.0.1 or http://[::1] (any port), or an https URI without fragment`,
    ),
  }
}

function checkFlow(body: Record<string, unknown>): ClientRegistrationCheck | undefined {
  const method = body.token_endpoint_auth_method
  if (method !== undefined && method !== 'none') {
    return metadataError(
      `token_endpoint_auth_method is ${JSON.stringify(method)}; only "none" (a public client) may register itself`,
    )
  }
  const grants = body.grant_types
  if (
    grants !== undefined &&
    (!Array.isArray(grants) ||
      !grants.includes('authorization_code') ||
      grants.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token'))
  ) {
    return metadataError('grant_types must list authorization_code, and refresh_token at most besides')
  }
  const responses = body.response_types
  if (responses !== undefined && (!Array.isArray(responses) || responses.some((type) => type !== 'code'))) {
    return metadataError('response_types may only list "code"')
  }
  return undefined
}

function checkScope(value: unknown): ClientRegistrationCheck | undefined {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || value.length > 1000)
    return metadataError('scope must be a string of scopes')
  const unknown = value.split(' ').find((scope) => !isScope(scope))
  if (unknown === undefined) return undefined
  return metadataError(`scope holds ${JSON.stringify(unknown)}, which is not a scope of this server`)
}

/**
 * Checks an RFC 7591 §2 registration request (a parsed JSON body). Accepted: a public client
 * (`token_endpoint_auth_method` absent or `none`) with `redirect_uris` that are loopback `http`
 * (RFC 8252) or `https` without fragment, `grant_types` within `authorization_code` and
 * `refresh_token`, `response_types` within `code`, a plain-text `client_name` of at most
 * {@link MAX_CLIENT_NAME_LENGTH} characters and a `scope` of contract scopes. Anything else is
 * `invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 §3.2.2); other fields are ignored.
 *
 * @example
 * const check = validateClientRegistration({ redirect_uris: ['http://127.0.0.1/cb'], client_name: 'My CLI' })
 * if (!check.ok) return json(check.error.toJSON(), check.error.status)
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-2
 */
export function validateClientRegistration(body: unknown): ClientRegistrationCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return metadataError('the registration request must be a JSON object')
  }
  const fields = body as Record<string, unknown>
  const problem = checkRedirectUris(fields.redirect_uris) ?? checkFlow(fields) ?? checkScope(fields.scope)
  if (problem !== undefined) return problem
  const name = fields.client_name
  if (name !== undefined && !isPlainText(name, MAX_CLIENT_NAME_LENGTH)) {
    return metadataError(`client_name must be plain text of at most ${MAX_CLIENT_NAME_LENGTH} characters`)
  }
  return {
    ok: true,
    registration: {
      redirectUris: fields.redirect_uris as string[],
      name: name === '' ? undefined : (name as string | undefined),
      scope: fields.scope === '' ? undefined : (fields.scope as string | undefined),
    },
  }
}

/**
 * A fresh id for a registered client: {@link REGISTERED_CLIENT_ID_PREFIX} and 32 random base62
 * characters (190 bits), so that nobody can guess another's, and it can be told from an operator's.
 *
 * @example
 * generateRegisteredClientId() // 'dyn_4fQ…'
 */
export function generateRegisteredClientId(): string {
  return `${REGISTERED_CLIENT_ID_PREFIX}${generateRandomBase62(32)}`
}

/**
 * Whether `id` has the form {@link generateRegisteredClientId} gives.
 *
 * @example
 * isRegisteredClientId('dyn_4fQ…') // true for a full-length id
 * isRegisteredClientId('cli') // false
 */
export function isRegisteredClientId(id: string): boolean {
  return /^dyn_[0-9A-Za-z]{32}$/.test(id)
}

/**
 * The RFC 7591 §3.2.1 body of a successful registration: the id, when it was issued (seconds), and
 * the metadata as registered. No secret; `grant_types` is `authorization_code` only, even when
 * `refresh_token` was asked for: such a client gets no refresh token.
 *
 * @example
 * json(registrationResponse(id, Math.floor(now / 1000), check.registration), 201)
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-3.2.1
 */
export function registrationResponse(
  clientId: string,
  issuedAt: number,
  registration: ClientRegistration,
): Record<string, unknown> {
  return {
    client_id: clientId,
    client_id_issued_at: issuedAt,
    redirect_uris: registration.redirectUris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    ...(registration.name !== undefined && { client_name: registration.name }),
    ...(registration.scope !== undefined && { scope: registration.scope }),
  }
}

/**
 * The client a registration describes, as the endpoints see it: public and never offline — storing
 * a user's token for offline use needs a client the operator registered.
 *
 * @example
 * const client = registeredClient(id, registration) // client.offline === false
 */
export function registeredClient(clientId: string, registration: ClientRegistration): OAuthClient {
  return {
    id: clientId,
    redirectUris: registration.redirectUris,
    offline: false,
    ...(registration.name !== undefined && { name: registration.name }),
  }
}
