/**
 * Limiting sign-in attempts per handle: at most `max` attempts in a sliding window. An attempt is
 * counted before its password is checked, so parallel guesses cannot slip past the limit, and a
 * successful sign-in clears its handle's count. Memory stays bounded: old attempts are dropped,
 * and past `maxKeys` handles the least recently tried ones are forgotten.
 */

/** Options of {@link AttemptLimiter}. */
export interface AttemptLimiterOptions {
  /** Attempts allowed per key within the window. */
  readonly max: number
  readonly windowMs: number
  readonly now: () => number
  /** Keys remembered at most; default 10,000. */
  readonly maxKeys?: number
}

/**
 * A sliding-window limiter keyed by handle.
 *
 * @example
 * const limiter = new AttemptLimiter({ max: 5, windowMs: 15 * 60_000, now: Date.now })
 * const wait = limiter.attempt('alice') // undefined: go ahead; a number: seconds to wait
 */
export class AttemptLimiter {
  readonly #options: AttemptLimiterOptions
  readonly #attempts = new Map<string, number[]>()

  constructor(options: AttemptLimiterOptions) {
    this.#options = options
  }

  /**
   * Records an attempt for `key` unless the limit is reached; answers how many seconds to wait
   * when it is (the attempt is then not recorded), `undefined` when the attempt may go ahead.
   */
  attempt(key: string): number | undefined {
    const { max, windowMs, now } = this.#options
    const at = now()
    const recent = (this.#attempts.get(key) ?? []).filter((time) => at - time < windowMs)
    if (recent.length >= max) {
      this.#attempts.set(key, recent)
      return Math.max(1, Math.ceil((recent[0]! + windowMs - at) / 1000))
    }
    recent.push(at)
    // Re-inserting keeps the map in least-recently-tried order for the eviction below.
    this.#attempts.delete(key)
    this.#attempts.set(key, recent)
    this.#evict()
    return undefined
  }

  /** Forgets a key's attempts (after a successful sign-in). */
  reset(key: string): void {
    this.#attempts.delete(key)
  }

  #evict(): void {
    const maxKeys = this.#options.maxKeys ?? 10_000
    for (const key of this.#attempts.keys()) {
      if (this.#attempts.size <= maxKeys) return
      this.#attempts.delete(key)
    }
  }
}
