import { ConfigError, TokenStoreError } from '../errors.js'

/**
 * Where the `jti` of every accepted DPoP proof is remembered for as long as the proof could be
 * accepted, so that a proof is used once (RFC 9449 §11.1). Several instances behind one load
 * balancer must share one (`RedisDpopReplayCache` from `data-access-policy/redis`); a cache that
 * fails makes the request a 503, never an allow.
 *
 * @example
 * const fresh = await cache.claim(`${jkt}.${jti}`, Date.now() + 300_000) // false for a replay
 */
export interface DpopReplayCache {
  /**
   * Records `key` until `expiresAt` (epoch ms) and answers `true`, or answers `false` when `key` is
   * already recorded and not expired: the proof is a replay.
   */
  claim(key: string, expiresAt: number): boolean | Promise<boolean>
}

/** Options of {@link MemoryDpopReplayCache}. */
export interface MemoryDpopReplayCacheOptions {
  /**
   * The most proofs remembered at once (default 200,000, about 30 MB). When that many are live, a
   * new proof is refused with a `TokenStoreError` (a 503): forgetting one early would let it be
   * replayed.
   */
  readonly maxEntries?: number
  /** The clock, epoch ms; `Date.now` by default. */
  readonly now?: () => number
}

// How many expired entries one claim removes at most from the front: the work per request stays
// constant and outpaces insertion (one per claim), so expired entries do not pile up.
const SWEEP_PER_CLAIM = 8

/**
 * An in-process {@link DpopReplayCache}: right for one instance. Entries leave when they expire,
 * a few per claim, oldest first; the number live is bounded.
 *
 * @example
 * const policy = createAccessPolicy({ tokens, dpop: { replayCache: new MemoryDpopReplayCache() } })
 */
export class MemoryDpopReplayCache implements DpopReplayCache {
  readonly #entries = new Map<string, number>()
  readonly #maxEntries: number
  readonly #now: () => number

  constructor(options: MemoryDpopReplayCacheOptions = {}) {
    const maxEntries = options.maxEntries ?? 200_000
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new ConfigError(['maxEntries'], `must be a positive integer, got ${String(maxEntries)}`)
    }
    this.#maxEntries = maxEntries
    this.#now = options.now ?? Date.now
  }

  /** How many proofs are remembered now, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size
  }

  claim(key: string, expiresAt: number): boolean {
    const now = this.#now()
    this.#sweep(now)
    const known = this.#entries.get(key)
    if (known !== undefined && known > now) return false
    if (known === undefined && this.#entries.size >= this.#maxEntries && !this.#sweepAll(now)) {
      throw new TokenStoreError(
        `the DPoP replay cache holds ${this.#maxEntries} live proofs (maxEntries); refusing more until some expire`,
      )
    }
    // Re-inserting moves the key to the end, where the sweep expects the latest entries.
    this.#entries.delete(key)
    this.#entries.set(key, expiresAt)
    return true
  }

  // The full pass, only when the bound is reached: an entry that expires late can sit before
  // expired ones and stop the per-claim sweep. True when it freed room.
  #sweepAll(now: number): boolean {
    for (const [key, expiresAt] of this.#entries) {
      if (expiresAt <= now) this.#entries.delete(key)
    }
    return this.#entries.size < this.#maxEntries
  }

  #sweep(now: number): void {
    let removed = 0
    for (const [key, expiresAt] of this.#entries) {
      if (expiresAt > now || removed === SWEEP_PER_CLAIM) return
      this.#entries.delete(key)
      removed++
    }
  }
}
