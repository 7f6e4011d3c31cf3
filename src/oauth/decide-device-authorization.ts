import { InvalidArgumentError } from '../errors.js'
import type { DeviceGrantRecord } from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { updateRecord } from './update-record.js'

/** Options of {@link decideDeviceAuthorization}. */
export type DecideDeviceAuthorizationOptions = {
  /** {@link DeviceGrantSummary.grantId} from {@link verifyUserCode}. */
  readonly grantId: string
  /** The signed-in user deciding. */
  readonly userId: string
  /** The consent form's `decision` field. */
  readonly decision: 'approve' | 'deny'
  /** The clock, epoch ms. */
  readonly now: number
  readonly store: OAuthStateStore
}

/** The result of {@link decideDeviceAuthorization}. */
export type DecideDeviceAuthorizationResult =
  | { readonly ok: true; readonly status: 'approved' | 'denied' }
  | { readonly ok: false; readonly reason: 'unknown_grant' | 'expired' | 'already_decided' }

/**
 * Records the signed-in user's decision on a pending device grant. Only a pending, unexpired grant
 * can be decided, once; the next poll of its device code then answers the outcome at once.
 *
 * @example
 * await decideDeviceAuthorization({ grantId: form.grant, userId: session.user, decision: form.decision, now, store })
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-3.3
 */
export async function decideDeviceAuthorization(
  options: DecideDeviceAuthorizationOptions,
): Promise<DecideDeviceAuthorizationResult> {
  const { store, now, userId, decision } = options
  if (decision !== 'approve' && decision !== 'deny') {
    throw new InvalidArgumentError('decision must be "approve" or "deny"')
  }
  if (typeof userId !== 'string' || userId === '')
    throw new InvalidArgumentError('userId must be a non-empty string')
  const status = decision === 'approve' ? 'approved' : 'denied'
  return updateRecord<DeviceGrantRecord, DecideDeviceAuthorizationResult>(
    () => store.findDeviceGrant(options.grantId, now),
    (next) => store.replaceDeviceGrant(next),
    (grant) => {
      if (grant === undefined) return { result: { ok: false, reason: 'unknown_grant' } }
      if (!(now < grant.expiresAt)) return { result: { ok: false, reason: 'expired' } }
      if (grant.status !== 'pending') return { result: { ok: false, reason: 'already_decided' } }
      const next: DeviceGrantRecord = { ...grant, version: grant.version + 1, status, userId, decidedAt: now }
      return { result: { ok: true, status }, next }
    },
  )
}
