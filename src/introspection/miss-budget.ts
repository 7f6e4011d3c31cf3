/**
 * The budgets of lookups an introspecting store may pass on to its issuer for tokens it has not
 * seen active: token buckets per client network and for every network together, so that anyone who
 * can send requests (the token checksum is public: anyone can mint well-formed values) cannot make
 * the store flood its issuer, nor spend the whole budget from one network.
 */

/** The configured budgets: `perNetwork` and `total` lookups per `windowMs`, at most `maxNetworks` tracked. */
export interface MissBudgetLimits {
  readonly perNetwork: number
  readonly total: number
  readonly windowMs: number
  readonly maxNetworks: number
}

/** The verdict on one miss: pass it on, or refuse it for `retryAfterMs`. */
export type MissVerdict = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number }

type Bucket = { tokens: number; at: number }

const PASS: MissVerdict = Object.freeze({ ok: true })

// The last tenth of the total is kept for networks that have spent less than half their own budget
// in the window: a flooding network spends its half quickly and then cannot take it, so that a user
// with a new token on a quiet network still gets through while floods from elsewhere spend the rest.
const RESERVE_SHARE = 0.1

/**
 * Token buckets: each holds up to its budget and refills continuously at budget per window, so a
 * network that stops flooding has its budget back within one window. Internal to the package.
 *
 * @example
 * const budget = new MissBudget({ perNetwork: 30, total: 300, windowMs: 60_000, maxNetworks: 10_000 })
 * budget.take('203.0.113.9', Date.now()) // { ok: true }
 */
export class MissBudget {
  readonly #limits: MissBudgetLimits
  readonly #reserve: number
  readonly #total: Bucket
  // Insertion order is use order (a used bucket is moved to the end): the first is the least recent.
  readonly #networks = new Map<string, Bucket>()

  constructor(limits: MissBudgetLimits) {
    this.#limits = limits
    this.#reserve = Math.floor(limits.total * RESERVE_SHARE)
    this.#total = { tokens: limits.total, at: Number.NEGATIVE_INFINITY }
  }

  /**
   * Spends one miss of `network` (and of the total) at `now`, or says how long until one is
   * available. A clock that is not a number refuses: fail closed.
   */
  take(network: string, now: number): MissVerdict {
    const { perNetwork, total, windowMs } = this.#limits
    if (!Number.isFinite(now)) return { ok: false, retryAfterMs: windowMs }
    const own = this.#bucketOf(network, now)
    refill(own, perNetwork, this.#rate(perNetwork), now)
    refill(this.#total, total, this.#rate(total), now)
    if (own.tokens < 1) return this.#refuse(own.tokens, 1, perNetwork)
    const floor = own.tokens >= perNetwork / 2 ? 0 : this.#reserve
    if (this.#total.tokens < floor + 1) return this.#refuse(this.#total.tokens, floor + 1, total)
    own.tokens -= 1
    this.#total.tokens -= 1
    return PASS
  }

  /** How many networks are tracked (for tests of the bound). */
  get networks(): number {
    return this.#networks.size
  }

  #rate(budget: number): number {
    return budget / this.#limits.windowMs
  }

  #refuse(tokens: number, needed: number, budget: number): MissVerdict {
    return { ok: false, retryAfterMs: (needed - tokens) / this.#rate(budget) }
  }

  #bucketOf(network: string, now: number): Bucket {
    let bucket = this.#networks.get(network)
    if (bucket === undefined) {
      bucket = { tokens: this.#limits.perNetwork, at: now }
      // A forgotten network starts afresh; the total still bounds what all of them can spend.
      if (this.#networks.size >= this.#limits.maxNetworks) {
        this.#networks.delete(this.#networks.keys().next().value!)
      }
    } else {
      this.#networks.delete(network)
    }
    this.#networks.set(network, bucket)
    return bucket
  }
}

function refill(bucket: Bucket, budget: number, rate: number, now: number): void {
  // A clock going back refills nothing, and spends nothing it had not spent.
  if (now > bucket.at) {
    bucket.tokens = Math.min(budget, bucket.tokens + (now - bucket.at) * rate)
    bucket.at = now
  }
}
