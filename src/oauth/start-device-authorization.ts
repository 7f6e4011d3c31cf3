import { ConfigError, TokenStoreError } from '../errors.js'
import { requireNow } from '../tokens/clock.js'
import { buildRedirectUrl } from './build-redirect-url.js'
import { requireDuration } from './endpoint-response.js'
import type { DeviceGrantRecord } from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { requireS256Challenge } from './pkce-syntax.js'
import { generateOpaqueSecret, hashSecret } from './random-secret.js'
import { parseRequestedScopes } from './requested-scopes.js'
import { compileKnownResources, grantedAudience, type KnownResources } from './resource-indicators.js'
import { formatUserCode, generateUserCode } from './user-code.js'

/** Default lifetime of a device code and its user code: 600 s. */
export const DEFAULT_DEVICE_CODE_EXPIRES_IN = 600

/** Default (and minimum) polling interval: 5 s (RFC 8628 §3.2). */
export const DEFAULT_DEVICE_POLL_INTERVAL = 5

// Draws of a fresh user code before giving up; with 20^8 codes a second draw is already rare.
const MAX_USER_CODE_DRAWS = 8

/** Options of {@link startDeviceAuthorization}. */
export type StartDeviceAuthorizationOptions = {
  /** The client, already authenticated; absent for a session client. */
  readonly clientId?: string | undefined
  /** The requested scope string; absent means `public` only. */
  readonly scope?: string | undefined
  /** The requested `resource` values (RFC 8707 §2, repeatable); absent means the default resource. */
  readonly resource?: string | readonly string[] | undefined
  /**
   * The resources `resource` may name, and the default one. Without it, any `resource` is
   * `invalid_target` and tokens carry no audience.
   */
  readonly resources?: KnownResources | undefined
  readonly codeChallenge?: string | undefined
  /** Must be `S256`, exactly. */
  readonly codeChallengeMethod?: string | undefined
  /** The verification page (`{auth_url}/device`), shown to the user. */
  readonly verificationUri: string
  /** The clock, epoch ms. */
  readonly now: number
  readonly store: OAuthStateStore
  /** Lifetime in seconds; 600 by default. */
  readonly expiresIn?: number
  /** Polling interval in seconds; 5 by default. */
  readonly interval?: number
}

/** The device authorization response (RFC 8628 §3.2). */
export type DeviceAuthorizationResponseBody = {
  readonly device_code: string
  /** Displayed as `WDJB-MJHT`. */
  readonly user_code: string
  readonly verification_uri: string
  /** The verification page with the user code filled in (for a QR code or a link). */
  readonly verification_uri_complete: string
  readonly expires_in: number
  readonly interval: number
}

/** @internal Checks the host's options (not the request): lifetime, interval, clock and page. */
export function checkDeviceAuthorizationOptions(options: {
  readonly now: number
  readonly verificationUri: string
  readonly expiresIn?: number | undefined
  readonly interval?: number | undefined
}): { readonly expiresIn: number; readonly interval: number } {
  requireNow(options.now)
  const verificationUri = options.verificationUri
  if (typeof verificationUri !== 'string' || verificationUri === '' || verificationUri.includes('#')) {
    throw new ConfigError(['verificationUri'], 'must be an absolute URI without a fragment')
  }
  return {
    expiresIn: requireDuration('expiresIn', options.expiresIn, DEFAULT_DEVICE_CODE_EXPIRES_IN, 3600),
    interval: requireDuration('interval', options.interval, DEFAULT_DEVICE_POLL_INTERVAL, 60),
  }
}

/**
 * Starts a device authorization: checks PKCE (S256 only), the scope and the resources, then stores
 * a pending grant, with the audience it will have, under the SHA-256 of a fresh device code
 * (190 bits) and of a fresh user code (8 consonants).
 *
 * @throws {OAuthError} `invalid_request` (PKCE), `invalid_scope` or `invalid_target` (RFC 8707 §2).
 * @throws {ConfigError} for a bad `verificationUri`, `expiresIn`, `interval` or `resources`.
 * @example
 * const body = await startDeviceAuthorization({
 *   scope: 'data.metadata', codeChallenge, codeChallengeMethod: 'S256',
 *   resource: 'https://data.example.org/api/v1',
 *   resources: { known: ['https://data.example.org/api/v1'], defaultResource: 'https://data.example.org/api/v1' },
 *   verificationUri: 'https://auth.example/device', now: Date.now(), store,
 * })
 * body.user_code // 'WDJB-MJHT'
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-3.2
 * @see https://www.rfc-editor.org/rfc/rfc8707#section-2
 */
export async function startDeviceAuthorization(
  options: StartDeviceAuthorizationOptions,
): Promise<DeviceAuthorizationResponseBody> {
  const { now, verificationUri } = options
  const { expiresIn, interval } = checkDeviceAuthorizationOptions(options)
  const resources = compileKnownResources(options.resources)
  const codeChallenge = requireS256Challenge(options.codeChallenge, options.codeChallengeMethod)
  const scopes = parseRequestedScopes(options.scope)
  const audience = grantedAudience({ resource: options.resource }, resources)
  const deviceCode = generateOpaqueSecret()
  const expiresAt = now + expiresIn * 1000
  for (let draw = 0; draw < MAX_USER_CODE_DRAWS; draw++) {
    const userCode = generateUserCode()
    const grant: DeviceGrantRecord = {
      deviceCodeHash: hashSecret(deviceCode),
      userCodeHash: hashSecret(userCode),
      version: 0,
      ...(options.clientId !== undefined && { clientId: options.clientId }),
      scopes: scopes.granted,
      ...(audience !== undefined && { audience }),
      codeChallenge,
      createdAt: now,
      expiresAt,
      // Kept as long again, so that a late poll still hears `expired_token` and the user code
      // is not handed out again while someone may still type it.
      retainUntil: expiresAt + expiresIn * 1000,
      interval,
      status: 'pending',
    }
    if (!(await options.store.saveDeviceGrant(grant))) continue
    const displayed = formatUserCode(userCode)
    return {
      device_code: deviceCode,
      user_code: displayed,
      verification_uri: verificationUri,
      verification_uri_complete: buildRedirectUrl(verificationUri, { user_code: displayed }),
      expires_in: expiresIn,
      interval,
    }
  }
  throw new TokenStoreError('no free user code found; the store may be full')
}
