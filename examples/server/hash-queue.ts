/**
 * Password-hash checks are the server's most expensive unauthenticated work (scrypt: tens of
 * milliseconds of CPU each). They run at most `concurrency` at a time, and waiting checks are taken
 * in turn per client address: a flood from one address queues behind itself, while a check from
 * another address waits for one running check at most, whatever the flood's size.
 */

interface Task {
  readonly run: () => void
}

/**
 * A concurrency cap with one queue per client address, served round-robin.
 *
 * @example
 * const queue = new HashQueue(2)
 * const ok = await queue.run('192.0.2.7', () => verifyPassword(password, stored))
 */
export class HashQueue {
  readonly #concurrency: number
  // Addresses with waiting tasks, in turn order: the next task comes from the first address.
  readonly #waiting = new Map<string, Task[]>()
  #running = 0

  constructor(concurrency: number) {
    this.#concurrency = concurrency
  }

  /** Runs `work` once a slot is free and it is `address`'s turn. */
  run<T>(address: string | undefined, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const task: Task = {
        run: () => {
          work()
            .then(resolve, reject)
            .finally(() => {
              this.#running--
              this.#next()
            })
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
      const first = this.#waiting.entries().next()
      if (first.done === true) return
      const [address, queue] = first.value
      const task = queue.shift()!
      // The address goes to the back of the turn order, or away once it has nothing waiting.
      this.#waiting.delete(address)
      if (queue.length > 0) this.#waiting.set(address, queue)
      this.#running++
      task.run()
    }
  }
}
