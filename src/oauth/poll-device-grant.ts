import type { DeviceGrantRecord } from './oauth-state-records.js'

/** How a device-code poll is answered; `issue` means: redeem now and issue the token. */
export type DevicePollAnswer =
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'invalid_grant'
  | 'issue'

/** Added to the polling interval by every `slow_down`, for good (RFC 8628 §3.5). */
export const SLOW_DOWN_INCREMENT_SECONDS = 5

/**
 * The pure rule of one poll of the token endpoint with a device code (the client and verifier
 * already checked): the answer, and the grant as it must be stored afterwards (if it changes).
 *
 * - redeemed → `invalid_grant` (a device code redeems once);
 * - denied → `access_denied`; past `expiresAt` → `expired_token`; approved → `issue` (now redeemed).
 *   A decided or expired grant answers at once, however soon after the previous poll;
 * - pending → `slow_down` when this poll follows the previous poll of this device code by less than
 *   the current interval (which then grows by 5 s for good), else `authorization_pending`. The
 *   first poll has no previous one, so it is never `slow_down`.
 *
 * @example
 * const { answer, next } = pollDeviceGrant(grant, now)
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-3.5
 */
export function pollDeviceGrant(
  grant: DeviceGrantRecord,
  now: number,
): { readonly answer: DevicePollAnswer; readonly next?: DeviceGrantRecord } {
  if (grant.status === 'redeemed') return { answer: 'invalid_grant' }
  if (grant.status === 'denied') return { answer: 'access_denied' }
  if (!(now < grant.expiresAt)) return { answer: 'expired_token' }
  const version = grant.version + 1
  if (grant.status === 'approved') {
    return { answer: 'issue', next: { ...grant, version, status: 'redeemed', redeemedAt: now } }
  }
  if (grant.lastPolledAt !== undefined && now - grant.lastPolledAt < grant.interval * 1000) {
    const interval = grant.interval + SLOW_DOWN_INCREMENT_SECONDS
    return { answer: 'slow_down', next: { ...grant, version, interval, lastPolledAt: now } }
  }
  return { answer: 'authorization_pending', next: { ...grant, version, lastPolledAt: now } }
}
