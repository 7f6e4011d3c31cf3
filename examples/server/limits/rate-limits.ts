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
  /**
   * Which window of the key was counted, for {@link RateLimitStore.giveBack}; absent when nothing
   * was counted (a full table, a clock that is not a number).
   */
  readonly window?: string
}

/** Where the counts live. Each call is atomic on its own: the count it answers includes this hit. */
export interface RateLimitStore {
  /**
   * Counts one hit against `key`: a new window of `windowMs` starts with the first hit after the
   * previous one ended.
   */
  hit(key: string, windowMs: number, now: number): Promise<Hit>
  /**
   * Takes back one hit of `window` (a {@link Hit}'s), when the work it was counted for did not
   * happen; nothing once that window has ended, so a later window's count is never lowered.
   */
  giveBack(key: string, window: string): Promise<void>
  /** The count of `key`'s running window, without counting a hit or creating the key; 0 if none. */
  peek(key: string, now: number): Promise<number>
  /** Forgets a key's count (a successful sign-in clears its own failures). */
  reset(key: string): Promise<void>
}

/** Keys a {@link MemoryRateLimitStore} remembers at most per limit by default. */
export const MAX_RATE_LIMIT_KEYS = 100_000

interface Window {
  count: number
  readonly endsAt: number
  readonly id: string
}

// How often a full table looks again for ended windows to forget: each look reads every key.
const FULL_SWEEP_INTERVAL_MS = 1000

/**
 * The in-memory counts of one server process. Memory stays bounded whatever the number of keys
 * (networks, handles): ended windows are swept, and once `maxKeys` windows of one limit are running
 * a hit that needs a new one of that limit is refused (counted as over any limit, with the time
 * until the first running window ends) rather than forgetting a running one — forgetting would
 * start someone's count afresh, and the keys a flood creates would push out the counts that limit
 * it. No key is created for a network already refused (limits/abuse-limits.ts checks the network
 * first), so one network holds at most a bounded share of the table. Each limit (a key's first line:
 * `signInHandle`, `token`, …) has its own `maxKeys`, so that a flood of keys a client names (made-up
 * handles) can fill only its own limit's share, never refuse another limit's new networks.
 *
 * @example
 * const limits = new MemoryRateLimitStore()
 * const { count, resetInMs } = await limits.hit('token:192.0.2.7', 60_000, Date.now())
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, Window>()
  // Running windows per limit: a key's first line names its limit.
  readonly #perLimit = new Map<string, number>()
  readonly #maxKeys: number
  #nextSweepAt = 0
  // No running window ends before this (it may lag behind a reset key: then a look finds nothing),
  // and when a full table may be read again.
  #firstEndAt = Number.POSITIVE_INFINITY
  #nextFullSweepAt = Number.NEGATIVE_INFINITY
  #windowsStarted = 0

  constructor(maxKeys = MAX_RATE_LIMIT_KEYS) {
    this.#maxKeys = maxKeys
  }

  async hit(key: string, windowMs: number, now: number): Promise<Hit> {
    // A clock that is not a number cannot place a window: every hit is over any limit (fail closed).
    if (!Number.isFinite(now)) return { count: Number.MAX_SAFE_INTEGER, resetInMs: windowMs }
    this.#sweep(now)
    let window = this.#windows.get(key)
    if (window !== undefined && !(now < window.endsAt)) {
      this.#forget(key)
      window = undefined
    }
    if (window === undefined) {
      const limit = limitOf(key)
      if (this.#running(limit) >= this.#maxKeys && !this.#makeRoom(limit, now)) {
        return { count: Number.MAX_SAFE_INTEGER, resetInMs: Math.max(1, this.#firstEndAt - now) }
      }
      window = { count: 0, endsAt: now + windowMs, id: String(++this.#windowsStarted) }
      this.#windows.set(key, window)
      this.#perLimit.set(limit, this.#running(limit) + 1)
      this.#firstEndAt = Math.min(this.#firstEndAt, window.endsAt)
    }
    window.count++
    return { count: window.count, resetInMs: Math.max(1, window.endsAt - now), window: window.id }
  }

  async giveBack(key: string, window: string): Promise<void> {
    const current = this.#windows.get(key)
    if (current !== undefined && current.id === window && current.count > 0) current.count--
  }

  async peek(key: string, now: number): Promise<number> {
    const window = this.#windows.get(key)
    return window !== undefined && now < window.endsAt ? window.count : 0
  }

  async reset(key: string): Promise<void> {
    this.#forget(key)
  }

  /** How many keys are remembered (for tests of the bound). */
  get size(): number {
    return this.#windows.size
  }

  /** How many keys of one limit are remembered (for tests of each limit's share). */
  sizeOf(limit: string): number {
    return this.#running(limit)
  }

  #sweep(now: number): void {
    if (now >= this.#nextSweepAt) {
      this.#nextSweepAt = now + 10_000
      this.#forgetEnded(now)
    }
  }

  #running(limit: string): number {
    return this.#perLimit.get(limit) ?? 0
  }

  #forget(key: string): void {
    if (!this.#windows.delete(key)) return
    const limit = limitOf(key)
    const left = this.#running(limit) - 1
    if (left === 0) this.#perLimit.delete(limit)
    else this.#perLimit.set(limit, left)
  }

  // Frees room for a full limit by forgetting ended windows only; false when none of its windows
  // has ended. The table is read at most once a second, and not before its first window can have ended.
  #makeRoom(limit: string, now: number): boolean {
    if (now < this.#firstEndAt || now < this.#nextFullSweepAt) return false
    this.#nextFullSweepAt = now + FULL_SWEEP_INTERVAL_MS
    this.#forgetEnded(now)
    return this.#running(limit) < this.#maxKeys
  }

  #forgetEnded(now: number): void {
    let firstEndAt = Number.POSITIVE_INFINITY
    for (const [key, window] of this.#windows) {
      if (!(now < window.endsAt)) this.#forget(key)
      else firstEndAt = Math.min(firstEndAt, window.endsAt)
    }
    this.#firstEndAt = firstEndAt
  }
}

// The limit a key counts for: its first line (`signInHandle\nNETWORK\nHANDLE` → `signInHandle`).
function limitOf(key: string): string {
  const end = key.indexOf('\n')
  return end === -1 ? key : key.slice(0, end)
}
