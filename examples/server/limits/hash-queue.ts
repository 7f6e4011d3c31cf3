/**
 * Password-hash checks are the server's most expensive unauthenticated work (scrypt: tens of
 * milliseconds of CPU each). They run at most `concurrency` at a time, and the next check to run
 * comes from the waiting address with the fewest checks running (the longest-waiting one among
 * equals): a flood from one address queues behind itself, while a check from another address waits
 * for one running check at most, whatever the flood's size.
 */

interface Task {
  readonly run: (done: () => void) => void
}

/**
 * A concurrency cap with one queue per client address, served fairly.
 *
 * @example
 * const queue = new HashQueue(2)
 * const ok = await queue.run('192.0.2.7', () => verifyPassword(password, stored))
 */
export class HashQueue {
  readonly #concurrency: number
  // Addresses with waiting tasks, longest waiting first.
  readonly #waiting = new Map<string, Task[]>()
  // Checks running per address.
  readonly #runningBy = new Map<string, number>()
  #running = 0

  constructor(concurrency: number) {
    this.#concurrency = concurrency
  }

  /** Runs `work` once a slot is free and it is `address`'s turn. */
  run<T>(address: string | undefined, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const task: Task = {
        run: (done) => {
          work().then(resolve, reject).finally(done)
        },
      }
      const key = address ?? 'unknown'
      const queue = this.#waiting.get(key)
      if (queue === undefined) this.#waiting.set(key, [task])
      else queue.push(task)
      this.#next()
    })
  }

  /** Checks running or waiting (for tests). */
  get pending(): number {
    let waiting = 0
    for (const queue of this.#waiting.values()) waiting += queue.length
    return this.#running + waiting
  }

  #next(): void {
    while (this.#running < this.#concurrency) {
      let chosen: string | undefined
      let fewest = Number.POSITIVE_INFINITY
      for (const address of this.#waiting.keys()) {
        const running = this.#runningBy.get(address) ?? 0
        if (running < fewest) {
          chosen = address
          fewest = running
          if (running === 0) break
        }
      }
      if (chosen === undefined) return
      const address = chosen
      const queue = this.#waiting.get(address)!
      const task = queue.shift()!
      // The address goes to the back of the line, or away once it has nothing waiting.
      this.#waiting.delete(address)
      if (queue.length > 0) this.#waiting.set(address, queue)
      this.#running++
      this.#runningBy.set(address, fewest + 1)
      task.run(() => {
        this.#running--
        const left = (this.#runningBy.get(address) ?? 1) - 1
        if (left === 0) this.#runningBy.delete(address)
        else this.#runningBy.set(address, left)
        this.#next()
      })
    }
  }
}
