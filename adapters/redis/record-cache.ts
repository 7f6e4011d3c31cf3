/** A cached value and when the read that produced it was sent (a `performance.now()` reading). */
export interface CacheEntry<T> {
  readonly value: T
  readonly fetchedAt: number
}

/**
 * A bounded least-recently-used map. A `Map` keeps insertion order, so re-inserting on every hit
 * keeps the least recently used entry first, where eviction takes it: O(1) per operation, no links.
 */
export class RecordCache<T> {
  readonly #entries = new Map<string, CacheEntry<T>>()
  readonly #capacity: number

  constructor(capacity: number) {
    this.#capacity = capacity
  }

  /** The number of entries held. */
  get size(): number {
    return this.#entries.size
  }

  /** The entry under `key`, which becomes the most recently used. */
  get(key: string): CacheEntry<T> | undefined {
    const entry = this.#entries.get(key)
    if (entry !== undefined) {
      this.#entries.delete(key)
      this.#entries.set(key, entry)
    }
    return entry
  }

  /** Stores an entry, evicting the least recently used one when full. A capacity of 0 stores nothing. */
  set(key: string, value: T, fetchedAt: number): void {
    if (this.#capacity === 0) return
    this.#entries.delete(key)
    if (this.#entries.size >= this.#capacity) {
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(key, { value, fetchedAt })
  }

  delete(key: string): void {
    this.#entries.delete(key)
  }

  clear(): void {
    this.#entries.clear()
  }
}
