/**
 * The budgets of lookups an introspecting store may pass on to its issuer for tokens it has not
 * seen active: token buckets per client network, per the block around it (an IPv4 /24, an IPv6
 * /48) and for every network together, so that anyone who can send requests (the token checksum is
 * public: anyone can mint well-formed values) cannot make the store flood its issuer, nor spend the
 * whole budget from one network or from the many networks of one allocation.
 */

/**
 * The configured budgets, per `windowMs`: `perNetwork` lookups per client network, `perBlock` per
 * block of networks, `total` for all; at most `maxNetworks` networks (and as many blocks, and as
 * many networks seen active) tracked.
 */
export interface MissBudgetLimits {
  readonly perNetwork: number
  readonly perBlock: number
  readonly total: number
  readonly windowMs: number
  readonly maxNetworks: number
}

/**
 * Where a miss comes from: its client network and the coarser block that holds it, absent when
 * there is none (a network already as coarse as a block, or the network of unknown addresses).
 */
export interface MissSource {
  readonly network: string
  readonly block?: string | undefined
}

/** The verdict on one miss: pass it on, or refuse it for `retryAfterMs`. */
export type MissVerdict = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number }

type Bucket = { tokens: number; at: number }

const PASS: MissVerdict = Object.freeze({ ok: true })

// The last tenth of the total is kept for networks that have shown an active token within the
// window and have spent less than half their own budget: a stranger cannot make an active token, so
// floods from any number of new networks leave it to the users who already have one there.
const RESERVE_SHARE = 0.1

/**
 * Token buckets: each holds up to its budget and refills continuously at budget per window, so a
 * network that stops flooding has its budget back within one window. Internal to the package.
 *
 * @example
 * const budget = new MissBudget({ perNetwork: 30, perBlock: 120, total: 300, windowMs: 60_000, maxNetworks: 10_000 })
 * budget.take({ network: '203.0.113.9', block: '203.0.113.0/24' }, Date.now()) // { ok: true }
 */
export class MissBudget {
  readonly #limits: MissBudgetLimits
  readonly #reserve: number
  readonly #total: Bucket
  // Insertion order is use order (a used entry is moved to the end): the first is the least recent.
  readonly #networks = new Map<string, Bucket>()
  readonly #blocks = new Map<string, Bucket>()
  // When each network last showed an active token.
  readonly #active = new Map<string, number>()

  constructor(limits: MissBudgetLimits) {
    this.#limits = limits
    this.#reserve = Math.floor(limits.total * RESERVE_SHARE)
    this.#total = { tokens: limits.total, at: Number.NEGATIVE_INFINITY }
  }

  /**
   * Spends one miss of `source` (its network, its block and the total) at `now`, or says how long
   * until one is available. A clock that is not a number refuses: fail closed.
   */
  take(source: MissSource, now: number): MissVerdict {
    const { perNetwork, perBlock, total, windowMs } = this.#limits
    if (!Number.isFinite(now)) return { ok: false, retryAfterMs: windowMs }
    const own = this.#bucketOf(this.#networks, source.network, perNetwork, now)
    const block =
      source.block === undefined ? undefined : this.#bucketOf(this.#blocks, source.block, perBlock, now)
    refill(this.#total, total, this.#rate(total), now)
    if (own.tokens < 1) return this.#refuse(own.tokens, 1, perNetwork)
    if (block !== undefined && block.tokens < 1) return this.#refuse(block.tokens, 1, perBlock)
    const floor = this.#mayTakeReserve(source.network, own, now) ? 0 : this.#reserve
    if (this.#total.tokens < floor + 1) return this.#refuse(this.#total.tokens, floor + 1, total)
    own.tokens -= 1
    if (block !== undefined) block.tokens -= 1
    this.#total.tokens -= 1
    return PASS
  }

  /** Notes that `network` showed an active token at `now`: for a window, it may take the reserve. */
  sawActive(network: string, now: number): void {
    if (!Number.isFinite(now)) return
    touch(this.#active, network, now, this.#limits.maxNetworks)
  }

  /** How many networks are tracked (for tests of the bound). */
  get networks(): number {
    return this.#networks.size
  }

  /** How many blocks are tracked (for tests of the bound). */
  get blocks(): number {
    return this.#blocks.size
  }

  /** How many networks seen active are remembered (for tests of the bound). */
  get activeNetworks(): number {
    return this.#active.size
  }

  #mayTakeReserve(network: string, own: Bucket, now: number): boolean {
    const seen = this.#active.get(network)
    if (seen === undefined || now - seen >= this.#limits.windowMs) return false
    return own.tokens >= this.#limits.perNetwork / 2
  }

  #rate(budget: number): number {
    return budget / this.#limits.windowMs
  }

  #refuse(tokens: number, needed: number, budget: number): MissVerdict {
    return { ok: false, retryAfterMs: (needed - tokens) / this.#rate(budget) }
  }

  #bucketOf(buckets: Map<string, Bucket>, key: string, budget: number, now: number): Bucket {
    // A forgotten key starts afresh; the total still bounds what all of them can spend.
    const bucket = buckets.get(key) ?? { tokens: budget, at: now }
    touch(buckets, key, bucket, this.#limits.maxNetworks)
    refill(bucket, budget, this.#rate(budget), now)
    return bucket
  }
}

// Moves `key` to the end (the most recent), forgetting the least recent past `max`.
function touch<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > max) map.delete(map.keys().next().value!)
}

function refill(bucket: Bucket, budget: number, rate: number, now: number): void {
  // A clock going back refills nothing, and spends nothing it had not spent.
  if (now > bucket.at) {
    bucket.tokens = Math.min(budget, bucket.tokens + (now - bucket.at) * rate)
    bucket.at = now
  }
}
