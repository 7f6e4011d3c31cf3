/**
 * The subscriber side of cache invalidation. Two facts decide whether an instance may answer from
 * its cache, and this module keeps both:
 *
 * - `subscribed`: the subscriber connection is up and subscribed. It turns false the moment the
 *   connection closes (and the owner drops its whole cache); true again only once the SUBSCRIBE on
 *   a new connection has been confirmed.
 * - `confirmedAt`: when the latest heartbeat that made the round trip was sent. Each heartbeat is
 *   published on the command connection to a channel only this instance listens to. Redis delivers
 *   a subscriber's messages in publish order, so receiving a heartbeat sent at `t` proves that every
 *   invalidation published before `t` has been processed here. A cached record is therefore at most
 *   `now - confirmedAt` out of date, whatever happened to the network: no heartbeat, no trust.
 */
import type { Redis } from 'ioredis'

/**
 * What the token store asks of its feed, whether it follows one server or every master of a
 * cluster (cluster-feed.ts).
 */
export interface Freshness {
  /** True while every subscription it needs is confirmed on a live connection. */
  readonly subscribed: boolean
  /** `performance.now()` before which every published invalidation has been processed here. */
  readonly confirmedAt: number
  whenSubscribed(): Promise<void>
  stop(): void
}

/** Options of {@link InvalidationFeed}. */
export interface InvalidationFeedOptions {
  /**
   * Publishes a heartbeat through the node the invalidations come from, on the command connection,
   * so that a heartbeat also proves that connection answers.
   */
  readonly publish: (channel: string, message: string) => Promise<unknown>
  /** A connection of its own, in subscriber mode. */
  readonly subscriber: Redis
  /** Where changed token hashes are published. */
  readonly channel: string
  /** This instance's heartbeat channel (unique per instance). */
  readonly heartbeatChannel: string
  readonly heartbeatMs: number
  /** A record changed somewhere: drop it. */
  readonly onChange: (message: string) => void
  /** The subscription is gone: drop everything. */
  readonly onLost: () => void
}

function ignore(): void {}

/** Follows the invalidation channel and measures how fresh the instance's view of it is. */
export class InvalidationFeed implements Freshness {
  readonly #options: InvalidationFeedOptions
  readonly #timer: ReturnType<typeof setInterval>
  readonly #waiters = new Set<() => void>()
  #subscribed = false
  #confirmedAt = Number.NEGATIVE_INFINITY

  constructor(options: InvalidationFeedOptions) {
    this.#options = options
    const { subscriber } = options
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === options.channel) options.onChange(message)
      else if (channel === options.heartbeatChannel) this.#confirm(message)
    })
    subscriber.on('ready', () => void this.#subscribe())
    subscriber.on('close', () => this.#lose())
    // Connection errors surface as 'close' and are retried by ioredis; they must not crash the host.
    subscriber.on('error', ignore)
    if (subscriber.status === 'ready') void this.#subscribe()
    this.#timer = setInterval(() => this.#beat(), options.heartbeatMs)
    this.#timer.unref?.()
  }

  /** True while the subscription is confirmed on a live connection. */
  get subscribed(): boolean {
    return this.#subscribed
  }

  /** `performance.now()` at which the latest heartbeat that came back was sent. */
  get confirmedAt(): number {
    return this.#confirmedAt
  }

  /** Resolves once subscribed (at once if already). */
  whenSubscribed(): Promise<void> {
    if (this.#subscribed) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.add(resolve))
  }

  /** Stops the heartbeat; the owner closes the connections. */
  stop(): void {
    clearInterval(this.#timer)
    this.#waiters.clear()
  }

  async #subscribe(): Promise<void> {
    const { subscriber, channel, heartbeatChannel } = this.#options
    try {
      await subscriber.subscribe(channel, heartbeatChannel)
    } catch {
      // The connection dropped while subscribing; its next 'ready' tries again.
      return
    }
    if (subscriber.status !== 'ready') return
    this.#subscribed = true
    for (const resolve of this.#waiters) resolve()
    this.#waiters.clear()
    this.#beat()
  }

  #lose(): void {
    this.#subscribed = false
    this.#options.onLost()
  }

  #beat(): void {
    if (!this.#subscribed) return
    const sentAt = performance.now()
    this.#options.publish(this.#options.heartbeatChannel, String(sentAt)).catch(ignore)
  }

  #confirm(message: string): void {
    const sentAt = Number(message)
    // Only this instance publishes here; anything else (a stray publish) is ignored, never trusted.
    if (Number.isFinite(sentAt) && sentAt <= performance.now() && sentAt > this.#confirmedAt) {
      this.#confirmedAt = sentAt
    }
  }
}
