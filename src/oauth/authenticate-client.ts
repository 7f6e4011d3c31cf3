import { timingSafeEqual } from './constant-time.js'
import { hashClientSecret, type LookupClient, type OAuthClient } from './oauth-client.js'
import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'

/** Options of {@link authenticateClient}. */
export type AuthenticateClientOptions = {
  readonly params: OAuthParams
  /** The request's `Authorization` header, if any. */
  readonly authorization?: string | undefined
  readonly lookupClient: LookupClient
}

type BasicCredentials = { readonly id: string; readonly secret: string }

// RFC 7617 with RFC 9110 token68; the scheme is case-insensitive, then one or more SP (not a tab).
const BASIC_HEADER = /^[Bb][Aa][Ss][Ii][Cc] +([A-Za-z0-9+/]+=*)$/
const SCHEME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/

function failedAuthentication(description: string): OAuthError {
  return new OAuthError('invalid_client', description)
}

// RFC 6749 §2.3.1: the id and secret are form-urlencoded before they are joined and base64-encoded.
function formDecode(text: string): string {
  return decodeURIComponent(text.replaceAll('+', ' '))
}

function parseBasic(authorization: string | undefined): BasicCredentials | undefined {
  if (authorization === undefined) return undefined
  if (SCHEME.exec(authorization)?.[0].toLowerCase() !== 'basic') return undefined
  const match = BASIC_HEADER.exec(authorization)
  if (match === null) throw failedAuthentication('malformed Basic authorization header')
  try {
    const bytes = Uint8Array.from(atob(match[1]!), (char) => char.charCodeAt(0))
    const decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    const colon = decoded.indexOf(':')
    if (colon === -1) throw new Error('no colon')
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
  } catch (cause) {
    throw new OAuthError('invalid_client', 'malformed Basic authorization header', { cause })
  }
}

/**
 * Identifies and authenticates the client of a token or device authorization request. Answers
 * `undefined` for a session client (no `client_id` at all), else the registered client.
 *
 * A confidential client (with `secretHash`) must present its secret, either in the `Authorization`
 * header (`client_secret_basic`) or as `client_secret` in the body (`client_secret_post`), never both;
 * the hashes are compared in constant time. A public client may not present a secret.
 *
 * @throws {OAuthError} `invalid_client` (401) when authentication fails or the client is unknown;
 * `invalid_request` when two methods are mixed or the body names another client than the header.
 * @example
 * const client = await authenticateClient({ params, authorization: req.headers.authorization, lookupClient })
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 */
export async function authenticateClient(
  options: AuthenticateClientOptions,
): Promise<OAuthClient | undefined> {
  const { params } = options
  const basic = parseBasic(options.authorization)
  const bodyId = readParam(params, 'client_id')
  const bodySecret = readParam(params, 'client_secret')
  if (basic !== undefined && bodySecret !== undefined) {
    throw new OAuthError('invalid_request', 'use one client authentication method, not both')
  }
  if (basic !== undefined && bodyId !== undefined && bodyId !== basic.id) {
    throw new OAuthError('invalid_request', 'client_id differs from the Authorization header')
  }
  const id = basic?.id ?? bodyId
  const secret = basic === undefined ? bodySecret : basic.secret === '' ? undefined : basic.secret
  if (id === undefined) {
    if (secret !== undefined) throw failedAuthentication('client_secret without client_id')
    return undefined
  }
  const client = await options.lookupClient(id)
  if (client?.id !== id) throw failedAuthentication('unknown client')
  if (client.secretHash === undefined) {
    if (secret !== undefined) throw failedAuthentication('a public client must not send a client secret')
    return client
  }
  if (secret === undefined) throw failedAuthentication('client authentication is required')
  if (!timingSafeEqual(hashClientSecret(secret), client.secretHash)) {
    throw failedAuthentication('client authentication failed')
  }
  return client
}
