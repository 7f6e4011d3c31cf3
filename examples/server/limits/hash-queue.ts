/**
 * Password-hash checks are the server's most expensive unauthenticated work (scrypt: tens of
 * milliseconds of CPU each). They run at most `concurrency` at a time, and the next check to run
 * comes from the waiting client network with the fewest checks running (the longest-waiting one
 * among equals): a flood from one network queues behind itself, while a check from another network
 * waits for one running check at most, whatever the flood's size. The callers queue by network
 * (limits/networks.ts: IPv4 per address, IPv6 per /64), so rotating through the addresses of one
 * IPv6 network is still one queue.
 */

interface Task {
  readonly run: (done: () => void) => void
}

/**
 * A concurrency cap with one queue per client network, served fairly.
 *
 * @example
 * const queue = new HashQueue(2)
 * const ok = await queue.run('192.0.2.7', () => verifyPassword(password, stored))
 */
export class HashQueue {
  readonly #concurrency: number
  // Networks with waiting tasks, longest waiting first.
  readonly #waiting = new Map<string, Task[]>()
  // Checks running per network.
  readonly #runningBy = new Map<string, number>()
  #running = 0

  constructor(concurrency: number) {
    this.#concurrency = concurrency
  }

  /** Runs `work` once a slot is free and it is the turn of `network` (limits/networks.ts). */
  run<T>(network: string | undefined, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const task: Task = {
        run: (done) => {
          work().then(resolve, reject).finally(done)
        },
      }
      const key = network ?? 'unknown'
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
      for (const network of this.#waiting.keys()) {
        const running = this.#runningBy.get(network) ?? 0
        if (running < fewest) {
          chosen = network
          fewest = running
          if (running === 0) break
        }
      }
      if (chosen === undefined) return
      const network = chosen
      const queue = this.#waiting.get(network)!
      const task = queue.shift()!
      // The network goes to the back of the line, or away once it has nothing waiting.
      this.#waiting.delete(network)
      if (queue.length > 0) this.#waiting.set(network, queue)
      this.#running++
      this.#runningBy.set(network, fewest + 1)
      task.run(() => {
        this.#running--
        const left = (this.#runningBy.get(network) ?? 1) - 1
        if (left === 0) this.#runningBy.delete(network)
        else this.#runningBy.set(network, left)
        this.#next()
      })
    }
  }
}
