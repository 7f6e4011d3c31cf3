import { parseScopes, type ScopeSet } from '../decisions/scopes.js'
import { InvalidArgumentError } from '../errors.js'
import type { DeviceGrantRecord } from './oauth-state-records.js'
import type { OAuthStateStore } from './oauth-state-store.js'
import { hashSecret } from './random-secret.js'
import { formatUserCode, normalizeUserCode } from './user-code.js'

/** Wrong user-code entries that lock a verifying session. */
export const MAX_USER_CODE_FAILURES = 5

/** How long the wrong entries count, from the first one: 15 minutes, longer than a device code lives. */
export const USER_CODE_FAILURE_WINDOW_MS = 15 * 60_000

/** Options of {@link verifyUserCode}. */
export type VerifyUserCodeOptions = {
  /** What the user typed (or what `verification_uri_complete` carried). */
  readonly userCode: string
  /**
   * Whose wrong entries count: the verifying browser session (its session id), or the signed-in user
   * if the user code is asked after sign-in. A wrong code belongs to no grant, so the lock cannot be
   * per grant; rate-limit by client address as well, since new sessions are cheap.
   */
  readonly attemptKey: string
  /** The clock, epoch ms. */
  readonly now: number
  readonly store: OAuthStateStore
}

/** What the consent page shows about a pending device grant (RFC 8628 §5.4: name the client). */
export type DeviceGrantSummary = {
  /** Identifies the grant in the consent form (for {@link decideDeviceAuthorization}); not a secret. */
  readonly grantId: string
  /** The user code as displayed, `WDJB-MJHT`. */
  readonly userCode: string
  readonly clientId?: string
  readonly scopes: ScopeSet
  /** The resources the token will be for (RFC 8707), to show by name; absent: any of the issuer's. */
  readonly audience?: readonly string[]
  readonly expiresAt: number
}

/** Why a user code was refused; `attemptsLeft` before the session is locked. */
export type VerifyUserCodeFailure = {
  readonly ok: false
  /**
   * `invalid_code`: no such code (counts as a wrong entry); `locked`: too many wrong entries;
   * `expired`: the code is no longer valid; `already_decided`: approved or denied before.
   */
  readonly reason: 'invalid_code' | 'locked' | 'expired' | 'already_decided'
  readonly attemptsLeft: number
}

/** The result of {@link verifyUserCode}. */
export type VerifyUserCodeResult =
  | { readonly ok: true; readonly grant: DeviceGrantSummary }
  | VerifyUserCodeFailure

function summarize(grant: DeviceGrantRecord, normalized: string): DeviceGrantSummary {
  return {
    grantId: grant.deviceCodeHash,
    userCode: formatUserCode(normalized),
    ...(grant.clientId !== undefined && { clientId: grant.clientId }),
    scopes: parseScopes(grant.scopes),
    ...(grant.audience !== undefined && { audience: grant.audience }),
    expiresAt: grant.expiresAt,
  }
}

/**
 * Looks up the pending device grant of a user code typed on the verification page. Matching ignores
 * case, white space and punctuation (`wdjb mjht` is `WDJB-MJHT`). Each entry that matches no grant
 * counts against `attemptKey`; after 5 within 15 minutes that key is locked for the rest of the
 * window, and even a correct code is refused. A correct entry does not reset the count, or an
 * attacker could interleave codes of grants they started themselves.
 *
 * @example
 * const result = await verifyUserCode({ userCode: form.user_code, attemptKey: session.id, now: Date.now(), store })
 * if (result.ok) renderConsent(result.grant)
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-5.1
 */
export async function verifyUserCode(options: VerifyUserCodeOptions): Promise<VerifyUserCodeResult> {
  const { store, now, attemptKey } = options
  if (typeof attemptKey !== 'string' || attemptKey === '') {
    throw new InvalidArgumentError('attemptKey must be a non-empty string')
  }
  if ((await store.countUserCodeFailures(attemptKey, now)) >= MAX_USER_CODE_FAILURES) {
    return { ok: false, reason: 'locked', attemptsLeft: 0 }
  }
  const normalized = normalizeUserCode(options.userCode)
  const grant =
    normalized === undefined ? undefined : await store.findDeviceGrantByUserCode(hashSecret(normalized), now)
  if (grant === undefined || normalized === undefined) {
    const failures = await store.recordUserCodeFailure(attemptKey, now, USER_CODE_FAILURE_WINDOW_MS)
    const attemptsLeft = Math.max(0, MAX_USER_CODE_FAILURES - failures)
    return { ok: false, reason: attemptsLeft === 0 ? 'locked' : 'invalid_code', attemptsLeft }
  }
  // Read again: wrong entries sent in parallel with this one may have locked the key meanwhile.
  const failures = await store.countUserCodeFailures(attemptKey, now)
  const attemptsLeft = Math.max(0, MAX_USER_CODE_FAILURES - failures)
  if (attemptsLeft === 0) return { ok: false, reason: 'locked', attemptsLeft }
  if (!(now < grant.expiresAt)) return { ok: false, reason: 'expired', attemptsLeft }
  if (grant.status !== 'pending') return { ok: false, reason: 'already_decided', attemptsLeft }
  return { ok: true, grant: summarize(grant, normalized) }
}
