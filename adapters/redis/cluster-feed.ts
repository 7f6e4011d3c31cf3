/**
 * Cache invalidation on a Redis Cluster. A token's invalidation is published by the script that
 * writes it, on the master that owns the token's slot. Redis delivers a message to the subscribers
 * connected to that master at once, in order with everything that master does; copies that reach
 * other nodes over the cluster bus carry no such order (and a broken bus link drops them). So the
 * instance subscribes on every master directly, one {@link InvalidationFeed} per master, and sends
 * each master's heartbeat to that master itself, as a script whose key lies in one of its slots: a
 * node that no longer owns the slot (demoted by a failover) answers MOVED instead of a heartbeat.
 *
 * The cache is fresh only while every current master's feed is subscribed, and only as fresh as the
 * least recently confirmed of them. The set of masters follows the client's slot table (refreshed
 * every second and on every redirection); a master that joins starts unconfirmed and drops the
 * cache, since it may hold writes published before this instance listened to it.
 */
import type { Cluster, Redis } from 'ioredis'
import { closeConnection, openNodeConnection } from './connection.js'
import { type Freshness, InvalidationFeed } from './invalidation-feed.js'
import { keySlot } from './key-slot.js'

/** Options of {@link ClusterInvalidationFeed}. */
export interface ClusterInvalidationFeedOptions {
  readonly cluster: Cluster
  readonly channel: string
  /** This instance's heartbeat channels are this followed by the master's address. */
  readonly heartbeatChannel: string
  /** Prefix of the (never written) keys that route a heartbeat to its master's slots. */
  readonly keyPrefix: string
  readonly heartbeatMs: number
  readonly commandTimeoutMs: number
  readonly connectionName: string
  readonly onChange: (message: string) => void
  readonly onLost: () => void
}

// Publishes only: the key decides which master must run it, and a master that does not own that
// slot any more answers MOVED.
const HEARTBEAT = `redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1`

interface Shard {
  readonly feed: InvalidationFeed
  readonly subscriber: Redis
}

function ignore(): void {}

/** The invalidation feeds of every master of a cluster, as one {@link Freshness}. */
export class ClusterInvalidationFeed implements Freshness {
  readonly #options: ClusterInvalidationFeedOptions
  readonly #shards = new Map<string, Shard>()
  readonly #waiters = new Set<() => void>()
  // The heartbeat key of each master, found once per slot table.
  readonly #beatKeys = new Map<string, string | undefined>()
  readonly #onTopology = () => this.#reconcile()
  #stopped = false
  // The slot table names a master this feed has no shard for (set by #reconcile).
  #stale = true

  constructor(options: ClusterInvalidationFeedOptions) {
    this.#options = options
    options.cluster.on('ready', this.#onTopology)
    options.cluster.on('refresh', this.#onTopology)
    if (options.cluster.status === 'ready') this.#reconcile()
  }

  // Read on every lookup: answers from the shards that #reconcile keeps equal to the slot table's
  // masters (scanning the 16384 slots here would cost a millisecond per request).
  get subscribed(): boolean {
    if (this.#shards.size === 0 || this.#stale) return false
    for (const shard of this.#shards.values()) if (!shard.feed.subscribed) return false
    return true
  }

  get confirmedAt(): number {
    if (this.#shards.size === 0) return Number.NEGATIVE_INFINITY
    let oldest = Number.POSITIVE_INFINITY
    for (const shard of this.#shards.values()) oldest = Math.min(oldest, shard.feed.confirmedAt)
    return oldest
  }

  whenSubscribed(): Promise<void> {
    if (this.subscribed) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.add(resolve))
  }

  stop(): void {
    this.#stopped = true
    this.#options.cluster.off('ready', this.#onTopology)
    this.#options.cluster.off('refresh', this.#onTopology)
    for (const address of [...this.#shards.keys()]) this.#remove(address)
    this.#waiters.clear()
  }

  /** The current masters, by `host:port`, from the client's slot table. */
  #masters(): Set<string> {
    const masters = new Set<string>()
    for (const owners of this.#options.cluster.slots) if (owners?.[0] !== undefined) masters.add(owners[0])
    return masters
  }

  #reconcile(): void {
    if (this.#stopped) return
    const masters = this.#masters()
    this.#beatKeys.clear()
    for (const address of [...this.#shards.keys()]) if (!masters.has(address)) this.#remove(address)
    for (const address of masters) if (!this.#shards.has(address)) this.#add(address)
    this.#stale = masters.size === 0
    this.#notify()
  }

  #add(address: string): void {
    const { cluster, commandTimeoutMs, connectionName } = this.#options
    const separator = address.lastIndexOf(':')
    const host = address.slice(0, separator)
    const port = Number(address.slice(separator + 1))
    const subscriber = openNodeConnection(cluster, host, port, commandTimeoutMs, `${connectionName}-${port}`)
    const feed = new InvalidationFeed({
      publish: (channel, message) => this.#beat(address, channel, message),
      subscriber,
      channel: this.#options.channel,
      heartbeatChannel: `${this.#options.heartbeatChannel}:${address}`,
      heartbeatMs: this.#options.heartbeatMs,
      onChange: this.#options.onChange,
      onLost: this.#options.onLost,
    })
    subscriber.on('ready', () => setImmediate(() => this.#notify()))
    this.#shards.set(address, { feed, subscriber })
    // It may hold writes published before this instance listened to it.
    this.#options.onLost()
    void feed.whenSubscribed().then(() => this.#notify())
  }

  #remove(address: string): void {
    const shard = this.#shards.get(address)
    if (shard === undefined) return
    this.#shards.delete(address)
    shard.feed.stop()
    void closeConnection(shard.subscriber).catch(ignore)
    this.#options.onLost()
  }

  #notify(): void {
    if (!this.subscribed) return
    for (const resolve of this.#waiters) resolve()
    this.#waiters.clear()
  }

  // Runs the heartbeat on the master's own connection (not routed: a redirection must fail it).
  async #beat(address: string, channel: string, message: string): Promise<unknown> {
    const { cluster, keyPrefix } = this.#options
    const node = cluster
      .nodes('master')
      .find((redis) => `${redis.options.host}:${redis.options.port}` === address)
    const key = this.#keyOwnedBy(address)
    if (node === undefined || key === undefined) throw new Error(`no connection to master ${address}`)
    return node.eval(HEARTBEAT, 1, `${keyPrefix}${key}`, channel, message)
  }

  // A key whose slot the master owns: `heartbeat-slot:{N}` for the first N that lands there.
  #keyOwnedBy(address: string): string | undefined {
    if (this.#beatKeys.has(address)) return this.#beatKeys.get(address)
    const key = this.#findKeyOwnedBy(address)
    this.#beatKeys.set(address, key)
    return key
  }

  #findKeyOwnedBy(address: string): string | undefined {
    const slots = this.#options.cluster.slots
    for (let n = 0; n < 100_000; n++) {
      const key = `heartbeat-slot:{${n}}`
      if (slots[keySlot(key)]?.[0] === address) return key
    }
    return undefined
  }
}
