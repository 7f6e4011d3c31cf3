import { hashTokenValue } from '../tokens/token-hash.js'

/**
 * A client registered with the operator. `secretHash` makes it confidential: it must then
 * authenticate at the token and device authorization endpoints. `offline` is the operator's grant of
 * offline access: such a client receives a refresh token with every token it obtains.
 *
 * A request without `client_id` is a public *session* client: it gets a short-lived access token and
 * never a refresh token, and may only redirect to a loopback address (see {@link isAllowedRedirectUri}).
 *
 * @example
 * const cli: OAuthClient = { id: 'cli', redirectUris: ['http://127.0.0.1:8765/cb'], offline: false }
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2
 */
export type OAuthClient = {
  readonly id: string
  /** {@link hashClientSecret} of the client secret; absent for a public client. */
  readonly secretHash?: string
  /** Redirect URIs, compared exactly; loopback ones may vary the port (RFC 8252 §7.3). */
  readonly redirectUris: readonly string[]
  /** Whether the client receives refresh tokens (offline access, docs/oauth.md). */
  readonly offline: boolean
  /** A display name for the consent page. */
  readonly name?: string
  /**
   * The operator's grant to call the introspection endpoint (RFC 7662 §4): a resource server's
   * credential. Only a confidential client (with `secretHash`) may hold it.
   */
  readonly introspect?: boolean
  /**
   * The operator's rule that the client's tokens are always sender-constrained (RFC 9449): each of
   * its token requests must carry a DPoP proof, else `invalid_dpop_proof`.
   */
  readonly dpopBound?: boolean
}

/**
 * The host's client registry: the client with this id, or `undefined` when there is none. It may
 * throw (a store failure), which the endpoints answer with `server_error` (503), never with success.
 *
 * @example
 * const lookupClient: LookupClient = (id) => clients.get(id)
 */
export type LookupClient = (clientId: string) => OAuthClient | undefined | Promise<OAuthClient | undefined>

/**
 * The SHA-256 of a client secret, as {@link OAuthClient.secretHash} holds it. Operator-issued secrets
 * are long random strings, so a fast hash suffices, as for token values; never register a
 * human-chosen password as a client secret.
 *
 * @example
 * const client = { id: 'cli', secretHash: hashClientSecret(seed.secret), redirectUris: [], offline: true }
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 */
export function hashClientSecret(secret: string): string {
  return hashTokenValue(secret)
}
