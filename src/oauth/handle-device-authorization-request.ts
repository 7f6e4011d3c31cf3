import { authenticateClient } from './authenticate-client.js'
import {
  errorResponse,
  type OAuthEndpointResponse,
  requireRealm,
  successResponse,
} from './endpoint-response.js'
import type { LookupClient } from './oauth-client.js'
import { type OAuthParams, readParam } from './oauth-params.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { compileKnownResources, type KnownResources } from './resource-indicators.js'
import {
  checkDeviceAuthorizationOptions,
  type DeviceAuthorizationResponseBody,
  startDeviceAuthorization,
} from './start-device-authorization.js'

/** What {@link handleDeviceAuthorizationRequest} needs. */
export type HandleDeviceAuthorizationRequestOptions = {
  readonly clients: LookupClient
  readonly state: OAuthStateStore
  /** The clock, epoch ms. */
  readonly now: number
  /** The request's `Authorization` header, for `client_secret_basic`. */
  readonly authorization?: string | undefined
  /** The verification page, `{auth_url}/device`. */
  readonly verificationUri: string
  /** Lifetime in seconds; 600 by default. */
  readonly expiresIn?: number
  /** Polling interval in seconds; 5 by default. */
  readonly interval?: number
  /** Realm of the `WWW-Authenticate: Basic` challenge sent with `invalid_client`; `oauth` by default. */
  readonly realm?: string
  /**
   * The resources `resource` may name, and the default one (RFC 8707). Without it, any `resource`
   * is `invalid_target` and tokens carry no audience.
   */
  readonly resources?: KnownResources | undefined
}

/** The answer of the device authorization endpoint: an RFC 8628 §3.2 body or a §5.2 error body. */
export type DeviceAuthorizationEndpointResponse = OAuthEndpointResponse<DeviceAuthorizationResponseBody>

/**
 * The device authorization endpoint (`POST /oauth/device_authorization`): authenticates the client
 * like the token endpoint (none for a session client), then {@link startDeviceAuthorization} with
 * `scope`, `resource` (repeatable; unknown → `invalid_target`), `code_challenge` and
 * `code_challenge_method` from the body. A store or registry failure answers `server_error` (503).
 *
 * @throws {ConfigError} for a bad option, {@link InvalidArgumentError} for a bad `now`.
 * @example
 * const { status, headers, body } = await handleDeviceAuthorizationRequest(params, {
 *   clients, state, now: Date.now(), verificationUri: `${origin}/device`,
 *   resources: { known: [`${origin}/api/v1`], defaultResource: `${origin}/api/v1` },
 * })
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-3.1
 */
export async function handleDeviceAuthorizationRequest(
  params: OAuthParams,
  options: HandleDeviceAuthorizationRequestOptions,
): Promise<DeviceAuthorizationEndpointResponse> {
  const realm = requireRealm(options.realm)
  // Checked before the try, so that the host's own mistake is thrown rather than answered.
  checkDeviceAuthorizationOptions(options)
  compileKnownResources(options.resources)
  try {
    const client = await authenticateClient({
      params,
      authorization: options.authorization,
      lookupClient: options.clients,
    })
    const body = await startDeviceAuthorization({
      clientId: client?.id,
      scope: readParam(params, 'scope'),
      resource: params.resource,
      resources: options.resources,
      codeChallenge: readParam(params, 'code_challenge'),
      codeChallengeMethod: readParam(params, 'code_challenge_method'),
      verificationUri: options.verificationUri,
      now: options.now,
      store: options.state,
      ...(options.expiresIn !== undefined && { expiresIn: options.expiresIn }),
      ...(options.interval !== undefined && { interval: options.interval }),
    })
    return successResponse(body)
  } catch (error) {
    return errorResponse(error, realm)
  }
}
