/**
 * The reference server's limits on its unauthenticated endpoints and on the token settings pages'
 * changes (docs/reliability.md lists them with what each defends). Each is a fixed window counted
 * per client network — the address `--trust-proxy` resolves, as the API's policy sees it, widened
 * to its IPv6 network of `--ipv6-prefix` bits (limits/networks.ts) — except the cap on device grants, which counts every network together so
 * that memory stays bounded however many networks a client has, and the per-account and per-device
 * sign-in limits, which count one handle or one browser from anywhere, and the per-user limit on
 * settings changes, which counts one signed-in user from anywhere. A hit is counted before the
 * work it guards (a lookup, a password check), atomically on the store, so parallel requests cannot
 * slip past a limit; over the limit the endpoint answers `429` with `Retry-After` in its own shape.
 * A network's own count comes before any key that names something it chose (a handle, a browser):
 * a network already refused creates no key, so one network holds a bounded number of keys.
 */
import { DEFAULT_IPV6_PREFIX, networkOf } from './networks.js'
import type { Hit, RateLimitStore } from './rate-limits.js'

/** At most `max` requests within each window of `windowMs`. */
export interface Limit {
  readonly max: number
  readonly windowMs: number
}

/** Every limit of the server, by what it counts. */
export interface AbuseLimits {
  /** `POST /oauth/device_authorization`, per network. */
  readonly deviceAuthorization: Limit
  /**
   * Device grants created by everyone together (a refused request spends nothing): outstanding
   * grants stay below twice `max`.
   */
  readonly deviceGrants: Limit
  /** `POST /oauth/token` and `POST /oauth/revoke`, per network. */
  readonly token: Limit
  /**
   * `POST /oauth/introspect` by a resource server whose secret was proven within the last minutes
   * (oauth/client-registry.ts), per network: it asks for every token its cache does not hold, so it
   * gets a budget of its own, larger than a client's. Any other introspection counts as `token`.
   * Only its active answers stay counted here: an inactive one is moved to
   * {@link AbuseLimits.introspectionInactive}.
   */
  readonly introspection: Limit
  /**
   * Inactive answers to a proven resource server, per network: what it relays of made-up or
   * revoked tokens spends this budget, never the one that serves its users' real tokens. Over it,
   * the answer is withheld (429).
   */
  readonly introspectionInactive: Limit
  /**
   * `POST /oauth/register` (RFC 7591), per network: each registration is kept for a day, so a
   * network's share of the bounded store stays small.
   */
  readonly registration: Limit
  /**
   * `POST /oauth/register` per site (limits/networks.ts `siteOf`: an IPv6 /48, an IPv4 /24), after
   * the network's own limit: one site's many /64s or addresses share this count.
   */
  readonly registrationSite: Limit
  /**
   * Client ID metadata documents fetched (a lookup the cache could not answer), per network, at
   * `GET /oauth/authorize` and the token endpoint: a fetch happens before anyone signs in, so
   * without a count anyone could make the server fetch made-up URLs for as long as they like.
   */
  readonly clientMetadata: Limit
  /** User codes entered on `POST /device`, right or wrong, per network. */
  readonly userCodeEntry: Limit
  /** `POST /signin` attempts, per network. */
  readonly signIn: Limit
  /** `POST /signin` attempts for one handle from one network, cleared by a successful sign-in. */
  readonly signInHandle: Limit
  /**
   * Failed `POST /signin` attempts for one handle from every network together, from browsers
   * without the handle's device cookie (web/device-cookies.ts): guessing one password from many
   * networks. With backoff: each window that reached the limit within the last day doubles the
   * next window ({@link AbuseGuard.hitWithBackoff}).
   */
  readonly signInAccount: Limit
  /**
   * `POST /signin` attempts with one device cookie, from anywhere: a browser the account signed in
   * from before is spared the account's limit, not this one of its own.
   */
  readonly signInDevice: Limit
  /**
   * Changes on the token settings pages (create, rename, rescope, regenerate, revoke), per network:
   * every signed-in user behind one address together.
   */
  readonly settingsWrites: Limit
  /**
   * The same changes per signed-in user, from every network together: one account's churn of
   * records (create and revoke in a loop) is bounded however many networks it uses.
   */
  readonly settingsWritesPerUser: Limit
}

const MINUTE = 60_000

/** The limits `npm start` runs with. */
export const DEFAULT_ABUSE_LIMITS: AbuseLimits = Object.freeze({
  deviceAuthorization: { max: 20, windowMs: 10 * MINUTE },
  // A device code lives 10 minutes (the core's default): at most ~4,000 grants exist at once.
  deviceGrants: { max: 2000, windowMs: 10 * MINUTE },
  token: { max: 300, windowMs: MINUTE },
  // A token in steady use costs a resource server about 12 a minute (a 5 s cache): ~250 tokens.
  introspection: { max: 3000, windowMs: MINUTE },
  // Twice what an IntrospectionTokenStore passes on at most by default (300 misses a minute).
  introspectionInactive: { max: 600, windowMs: MINUTE },
  registration: { max: 20, windowMs: 60 * MINUTE },
  registrationSite: { max: 60, windowMs: 60 * MINUTE },
  // A client's document is cached for a minute at least: a user signing in costs one or two.
  clientMetadata: { max: 30, windowMs: 10 * MINUTE },
  userCodeEntry: { max: 50, windowMs: 15 * MINUTE },
  signIn: { max: 100, windowMs: 15 * MINUTE },
  signInHandle: { max: 5, windowMs: 15 * MINUTE },
  signInAccount: { max: 10, windowMs: 15 * MINUTE },
  signInDevice: { max: 5, windowMs: 15 * MINUTE },
  // Revoking every one of an account's tokens after a leak alert fits in one window.
  settingsWrites: { max: 300, windowMs: 10 * MINUTE },
  settingsWritesPerUser: { max: 120, windowMs: 10 * MINUTE },
})

/**
 * Live API tokens (neither revoked nor expired) one user may hold at once by default: creating one
 * more is refused until one is revoked or expires. `--max-live-tokens` raises or lowers it.
 */
export const DEFAULT_MAX_LIVE_TOKENS = 100

/** The most `--max-live-tokens` may allow. */
export const MAX_LIVE_TOKENS_LIMIT = 10_000

/** How long the windows in which a limit with backoff was reached are remembered. */
export const BACKOFF_MEMORY_MS = 24 * 60 * MINUTE

/** A limit with backoff lengthens its window at most 2^6 times: 15 minutes become 16 hours. */
export const MAX_BACKOFF_DOUBLINGS = 6

/** The name of a limit. */
export type LimitName = keyof AbuseLimits

/**
 * The verdict on one request: go ahead (with the counted hit, which {@link AbuseGuard.giveBack} can
 * take back), or wait `retryAfter` seconds.
 */
export type LimitCheck =
  | { readonly ok: true; readonly counted: CountedHit | undefined }
  | { readonly ok: false; readonly retryAfter: number }

/** A hit as counted: its key and the window it fell in. */
export interface CountedHit {
  readonly key: string
  readonly window: string
}

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
  readonly #ipv6Prefix: number
  /** The limits in force. */
  readonly limits: AbuseLimits

  /** `ipv6Prefix`: the length of the IPv6 networks counted together (`--ipv6-prefix`). */
  constructor(
    store: RateLimitStore,
    limits: Partial<AbuseLimits> = {},
    now: () => number = Date.now,
    ipv6Prefix = DEFAULT_IPV6_PREFIX,
  ) {
    this.#store = store
    this.#now = now
    this.#ipv6Prefix = ipv6Prefix
    this.limits = { ...DEFAULT_ABUSE_LIMITS, ...limits }
  }

  /**
   * The network a client address counts in (limits/networks.ts), also the key the password checks
   * queue under (limits/hash-queue.ts).
   */
  network(address: string | undefined): string {
    return networkOf(address, this.#ipv6Prefix)
  }

  /**
   * Counts one request from the client at `address` (its network) against a limit, `parts`
   * narrowing it (a handle). A client whose address is unknown shares one count with every other
   * such client: fail closed.
   */
  hit(name: LimitName, address: string | undefined, ...parts: readonly string[]): Promise<LimitCheck> {
    return this.#hit(name, [this.network(address), ...parts])
  }

  /**
   * {@link hit} for a client whose network {@link network} already resolved (what the client
   * registry is handed): the same count as `hit(name, address)`.
   */
  hitNetwork(name: LimitName, network: string): Promise<LimitCheck> {
    return this.#hit(name, [network])
  }

  /**
   * Counts one request against a limit shared by every network: `subject` names what is counted
   * (`'everyone'`, a handle, a browser). Call it only once the network's own limit has let the
   * request through, so that a network already refused creates no key.
   */
  hitShared(name: LimitName, subject: string): Promise<LimitCheck> {
    return this.#hit(name, [subject])
  }

  /**
   * {@link hitShared} with backoff: each window in which `subject` reached the limit within the
   * last day ({@link BACKOFF_MEMORY_MS}) doubles the length of its next window, up to
   * {@link MAX_BACKOFF_DOUBLINGS} times, so that a patient guesser's allowance shrinks from `max`
   * per window to `max` per 2^6 windows.
   */
  async hitWithBackoff(name: LimitName, subject: string): Promise<LimitCheck> {
    const { max, windowMs } = this.limits[name]
    const now = this.#now()
    // A name no limit has, so that no subject's key can be mistaken for it.
    const locksKey = keyOf(`${name}:locks`, [subject])
    const locks = await this.#store.peek(locksKey, now)
    const key = keyOf(name, [subject])
    const hit = await this.#store.hit(key, windowMs * 2 ** Math.min(locks, MAX_BACKOFF_DOUBLINGS), now)
    // The window's first refusal, seen by exactly one request however many race: one more lock.
    if (hit.count === max + 1) await this.#store.hit(locksKey, BACKOFF_MEMORY_MS, now)
    return verdict(key, max, hit)
  }

  /**
   * Takes back a hit whose work did not happen (a device authorization refused as invalid): it
   * counts no more, unless its window has ended meanwhile.
   */
  async giveBack(check: LimitCheck): Promise<void> {
    if (check.ok && check.counted !== undefined) {
      await this.#store.giveBack(check.counted.key, check.counted.window)
    }
  }

  /** Forgets the count of a limit for the client at `address` (its network) and `parts`. */
  reset(name: LimitName, address: string | undefined, ...parts: readonly string[]): Promise<void> {
    return this.#store.reset(keyOf(name, [this.network(address), ...parts]))
  }

  /** Forgets the count of a shared limit's `subject`. */
  resetShared(name: LimitName, subject: string): Promise<void> {
    return this.#store.reset(keyOf(name, [subject]))
  }

  async #hit(name: LimitName, subject: readonly string[]): Promise<LimitCheck> {
    const { max, windowMs } = this.limits[name]
    const key = keyOf(name, subject)
    return verdict(key, max, await this.#store.hit(key, windowMs, this.#now()))
  }
}

function verdict(key: string, max: number, { count, resetInMs, window }: Hit): LimitCheck {
  if (count > max) return { ok: false, retryAfter: Math.ceil(resetInMs / 1000) }
  return { ok: true, counted: window === undefined ? undefined : { key, window } }
}

// Parts are joined with a line break, which no network holds; only the last part can be a handle
// (which might), so two different subjects never make one key.
function keyOf(name: LimitName | `${LimitName}:locks`, subject: readonly string[]): string {
  return [name, ...subject].join('\n')
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
