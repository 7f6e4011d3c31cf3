/**
 * Counters behind the reference server's abuse limits (limits/abuse-limits.ts): fixed windows, counted
 * atomically and before the work they guard, so that a parallel burst cannot slip past a limit
 * between a check and a record. In process memory by default; on Redis (limits/redis-rate-limits.ts) with
 * `--store redis://…`, so that every instance sharing the store shares the counts.
 */

/** One counted hit: how many hits the key has in its current window, and when that window ends. */
export interface Hit {
  readonly count: number
  /** Milliseconds until the window ends and the count starts again from zero; at least 1. */
  readonly resetInMs: number
}

/** Where the counts live. Each call is atomic on its own: the count it answers includes this hit. */
export interface RateLimitStore {
  /**
   * Counts one hit against `key`: a new window of `windowMs` starts with the first hit after the
   * previous one ended.
   */
  hit(key: string, windowMs: number, now: number): Promise<Hit>
  /** Forgets a key's count (a successful sign-in clears its own failures). */
  reset(key: string): Promise<void>
}

/** Keys a {@link MemoryRateLimitStore} remembers at most by default. */
export const MAX_RATE_LIMIT_KEYS = 100_000

interface Window {
  count: number
  readonly endsAt: number
}

/**
 * The in-memory counts of one server process. Memory stays bounded whatever the number of keys
 * (client addresses, handles): ended windows are swept, and past `maxKeys` the oldest windows are
 * forgotten first — which can only let an old key start afresh, never lock a new one out.
 *
 * @example
 * const limits = new MemoryRateLimitStore()
 * const { count, resetInMs } = await limits.hit('token:192.0.2.7', 60_000, Date.now())
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, Window>()
  readonly #maxKeys: number
  #nextSweepAt = 0

  constructor(maxKeys = MAX_RATE_LIMIT_KEYS) {
    this.#maxKeys = maxKeys
  }

  async hit(key: string, windowMs: number, now: number): Promise<Hit> {
    // A clock that is not a number cannot place a window: every hit is over any limit (fail closed).
    if (!Number.isFinite(now)) return { count: Number.MAX_SAFE_INTEGER, resetInMs: windowMs }
    this.#sweep(now)
    let window = this.#windows.get(key)
    if (window === undefined || now >= window.endsAt) {
      this.#windows.delete(key)
      window = { count: 0, endsAt: now + windowMs }
      this.#windows.set(key, window)
    }
    window.count++
    return { count: window.count, resetInMs: Math.max(1, window.endsAt - now) }
  }

  async reset(key: string): Promise<void> {
    this.#windows.delete(key)
  }

  /** How many keys are remembered (for tests of the bound). */
  get size(): number {
    return this.#windows.size
  }

  #sweep(now: number): void {
    if (now >= this.#nextSweepAt) {
      this.#nextSweepAt = now + 10_000
      for (const [key, window] of this.#windows) if (!(now < window.endsAt)) this.#windows.delete(key)
    }
    // Insertion order is window-start order: the oldest windows go first.
    for (const key of this.#windows.keys()) {
      if (this.#windows.size < this.#maxKeys) break
      this.#windows.delete(key)
    }
  }
}
