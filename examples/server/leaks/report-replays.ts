/**
 * Which leak reports the server has already acted on: a report seen again within the window (the
 * same body, whatever its signature: ECDSA signs the same body differently each time) is a replay
 * and refused. Kept in the configured store, so a report replayed to another instance is refused
 * too (redis-report-replays.ts).
 */

/** How long a report is remembered: a day. */
export const REPLAY_WINDOW_MS = 86_400_000

/** Where seen reports are remembered. */
export interface ReportReplayStore {
  /**
   * Records `key` for `windowMs`: true when it was not recorded yet (the report is new), false
   * when it was (a replay). Rejects when the store fails.
   */
  claim(key: string, windowMs: number, now: number): Promise<boolean>
  /** Forgets `key`, so that a report whose handling failed can be sent again. */
  release(key: string): Promise<void>
}

// Enough for every report a deployment receives in a day many times over; past it the oldest go.
const MAX_REMEMBERED = 100_000

/**
 * Seen reports in process memory (one instance, `--store memory`).
 *
 * @example
 * const replays = new MemoryReportReplayStore()
 * await replays.claim(digest, REPLAY_WINDOW_MS, Date.now()) // true, then false
 */
export class MemoryReportReplayStore implements ReportReplayStore {
  readonly #until = new Map<string, number>()

  async claim(key: string, windowMs: number, now: number): Promise<boolean> {
    const until = this.#until.get(key)
    if (until !== undefined && now < until) return false
    this.#until.delete(key)
    if (this.#until.size >= MAX_REMEMBERED) {
      for (const [seen, end] of this.#until) if (!(now < end)) this.#until.delete(seen)
      // Still full of live entries: the oldest claimed go first (a Map iterates in insertion order).
      for (const seen of this.#until.keys()) {
        if (this.#until.size < MAX_REMEMBERED) break
        this.#until.delete(seen)
      }
    }
    this.#until.set(key, now + windowMs)
    return true
  }

  async release(key: string): Promise<void> {
    this.#until.delete(key)
  }
}
