/**
 * A min-heap of (end, key) entries: what a store holds in order of when it must go, so that each
 * operation can remove the few records whose end has come without scanning the store. Entries are
 * never updated in place: a record whose end moves gets a new entry, and the caller skips an entry
 * that no longer matches its record when it comes out.
 */
export class EndQueue {
  readonly #ends: number[] = []
  readonly #keys: string[] = []

  /** The number of entries, stale ones included. */
  get size(): number {
    return this.#ends.length
  }

  /** Adds `key`, due at `end`. */
  push(end: number, key: string): void {
    let index = this.#ends.length
    this.#ends.push(end)
    this.#keys.push(key)
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (this.#ends[parent]! <= end) break
      this.#move(parent, index)
      index = parent
    }
    this.#ends[index] = end
    this.#keys[index] = key
  }

  /** Removes and answers the earliest entry if it is due (its end at or before `now`). */
  popDue(now: number): { readonly end: number; readonly key: string } | undefined {
    const ends = this.#ends
    if (ends.length === 0 || !(ends[0]! <= now)) return undefined
    const top = { end: ends[0]!, key: this.#keys[0]! }
    const lastEnd = ends.pop()!
    const lastKey = this.#keys.pop()!
    const size = ends.length
    if (size > 0) {
      let index = 0
      for (;;) {
        const left = 2 * index + 1
        if (left >= size) break
        const right = left + 1
        const child = right < size && ends[right]! < ends[left]! ? right : left
        if (ends[child]! >= lastEnd) break
        this.#move(child, index)
        index = child
      }
      ends[index] = lastEnd
      this.#keys[index] = lastKey
    }
    return top
  }

  #move(from: number, to: number): void {
    this.#ends[to] = this.#ends[from]!
    this.#keys[to] = this.#keys[from]!
  }
}
