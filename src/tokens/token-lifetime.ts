/**
 * How long an API token lives: the lifetimes hosts offer at creation, the cap a deployment may put
 * on them (`maxLifetimeDays`, the reference server's `--max-token-lifetime`), and when a token
 * counts as expiring soon. GitHub's fine-grained tokens are the model: an expiry chosen from a few
 * presets or a date, "none" only where the organization allows it.
 */
import { ConfigError, TokenLifetimeError } from '../errors.js'

/** One day in milliseconds. */
export const DAY_MS = 86_400_000

/** The lifetimes, in days, that creation offers besides a date and (where allowed) no expiry. */
export const TOKEN_LIFETIME_DAYS = Object.freeze([7, 30, 60, 90, 365] as const)

/** The longest lifetime or cap, in days (100 years): anything longer is a typo, not a policy. */
export const MAX_TOKEN_LIFETIME_DAYS = 36_500

/** How long before its expiry a token is shown as expiring soon: seven days. */
export const EXPIRING_SOON_MS = 7 * DAY_MS

/**
 * Whether `days` is a whole number of days from 1 to {@link MAX_TOKEN_LIFETIME_DAYS}.
 *
 * @example
 * isLifetimeDays(90)  // true
 * isLifetimeDays(1.5) // false
 */
export function isLifetimeDays(days: unknown): days is number {
  return Number.isSafeInteger(days) && (days as number) >= 1 && (days as number) <= MAX_TOKEN_LIFETIME_DAYS
}

/**
 * Refuses an expiry that breaks the cap: none at all, or later than `maxLifetimeDays` after `now`.
 * Without a cap every expiry passes.
 *
 * @throws {ConfigError} naming `maxLifetimeDays` when the cap itself is not 1–36,500 whole days.
 * @throws {TokenLifetimeError} naming the cap.
 * @example
 * checkTokenLifetime(now + 30 * DAY_MS, now, 90) // passes
 * checkTokenLifetime(undefined, now, 90)         // throws: the cap requires an expiry
 */
export function checkTokenLifetime(
  expiresAt: number | undefined,
  now: number,
  maxLifetimeDays: number | undefined,
): void {
  if (maxLifetimeDays === undefined) return
  if (!isLifetimeDays(maxLifetimeDays)) {
    throw new ConfigError(
      ['maxLifetimeDays'],
      `must be a whole number of days from 1 to ${MAX_TOKEN_LIFETIME_DAYS}`,
    )
  }
  const cap = formatDays(maxLifetimeDays)
  if (expiresAt === undefined) {
    throw new TokenLifetimeError(
      maxLifetimeDays,
      `token lifetimes are capped at ${cap}: choose an expiry within ${cap}; no expiry is not allowed`,
    )
  }
  if (expiresAt - now > maxLifetimeDays * DAY_MS) {
    throw new TokenLifetimeError(
      maxLifetimeDays,
      `token lifetimes are capped at ${cap}: choose an expiry within ${cap}`,
    )
  }
}

/**
 * Whether an unexpired token expires within `withinMs` (default seven days) of `now`.
 *
 * @example
 * isExpiringSoon({ expiresAt: now + 3 * DAY_MS }, now) // true
 * isExpiringSoon({}, now)                             // false: it never expires
 */
export function isExpiringSoon(
  token: { readonly expiresAt?: number | undefined },
  now: number,
  withinMs: number = EXPIRING_SOON_MS,
): boolean {
  const expiresAt = token.expiresAt
  return expiresAt !== undefined && now < expiresAt && expiresAt - now <= withinMs
}

function formatDays(days: number): string {
  return days === 1 ? '1 day' : `${days} days`
}
