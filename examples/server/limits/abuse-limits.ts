/**
 * The reference server's limits on its unauthenticated endpoints (design §9; docs/reliability.md
 * lists them with what each defends). Each is a fixed window counted per client address — the
 * address `--trust-proxy` resolves, as the API's policy sees it — except the cap on device grants,
 * which counts every address together so that memory stays bounded however many addresses a
 * client has. A hit is counted before the work it guards (a lookup, a password check), atomically
 * on the store, so parallel requests cannot slip past a limit; over the limit the endpoint answers
 * `429` with `Retry-After` in its own shape.
 */
import type { RateLimitStore } from './rate-limits.js'

/** At most `max` requests within each window of `windowMs`. */
export interface Limit {
  readonly max: number
  readonly windowMs: number
}

/** Every limit of the server, by what it counts. */
export interface AbuseLimits {
  /** `POST /oauth/device_authorization`, per address. */
  readonly deviceAuthorization: Limit
  /** Device grants started by everyone together: outstanding grants stay below twice `max`. */
  readonly deviceGrants: Limit
  /** `POST /oauth/token`, per address. */
  readonly token: Limit
  /** User codes entered on `POST /device`, right or wrong, per address. */
  readonly userCodeEntry: Limit
  /** `POST /signin` attempts, per address. */
  readonly signIn: Limit
  /** `POST /signin` attempts for one handle from one address, cleared by a successful sign-in. */
  readonly signInHandle: Limit
}

const MINUTE = 60_000

/** The limits `npm start` runs with. */
export const DEFAULT_ABUSE_LIMITS: AbuseLimits = Object.freeze({
  deviceAuthorization: { max: 20, windowMs: 10 * MINUTE },
  // A device code lives 10 minutes (the core's default): at most ~4,000 grants exist at once.
  deviceGrants: { max: 2000, windowMs: 10 * MINUTE },
  token: { max: 300, windowMs: MINUTE },
  userCodeEntry: { max: 50, windowMs: 15 * MINUTE },
  signIn: { max: 100, windowMs: 15 * MINUTE },
  signInHandle: { max: 5, windowMs: 15 * MINUTE },
})

/** The name of a limit. */
export type LimitName = keyof AbuseLimits

/** The verdict on one request: go ahead, or wait `retryAfter` seconds. */
export type LimitCheck = { readonly ok: true } | { readonly ok: false; readonly retryAfter: number }

/**
 * Counts requests against the server's limits.
 *
 * @example
 * const guard = new AbuseGuard(new MemoryRateLimitStore())
 * const check = await guard.hit('token', request.clientAddress)
 * if (!check.ok) return tooManyRequests(check.retryAfter)
 */
export class AbuseGuard {
  readonly #store: RateLimitStore
  readonly #now: () => number
  /** The limits in force. */
  readonly limits: AbuseLimits

  constructor(store: RateLimitStore, limits: Partial<AbuseLimits> = {}, now: () => number = Date.now) {
    this.#store = store
    this.#now = now
    this.limits = { ...DEFAULT_ABUSE_LIMITS, ...limits }
  }

  /**
   * Counts one request of `subject` (a client address, or several parts joined) against a limit.
   * A client whose address is unknown shares one count with every other such client: fail closed.
   */
  async hit(name: LimitName, ...subject: readonly (string | undefined)[]): Promise<LimitCheck> {
    const { max, windowMs } = this.limits[name]
    const { count, resetInMs } = await this.#store.hit(keyOf(name, subject), windowMs, this.#now())
    return count <= max ? { ok: true } : { ok: false, retryAfter: Math.ceil(resetInMs / 1000) }
  }

  /** Forgets a subject's count of one limit. */
  reset(name: LimitName, ...subject: readonly (string | undefined)[]): Promise<void> {
    return this.#store.reset(keyOf(name, subject))
  }
}

// Parts are joined with a character no address or handle holds (handles are checked first).
function keyOf(name: LimitName, subject: readonly (string | undefined)[]): string {
  return [name, ...subject.map((part) => part ?? 'unknown')].join('\n')
}

/**
 * `Retry-After` in words for the pages: "1 minute", "15 minutes", "30 seconds".
 *
 * @example
 * waitInWords(61) // '2 minutes'
 */
export function waitInWords(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`
  const minutes = Math.ceil(seconds / 60)
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}
