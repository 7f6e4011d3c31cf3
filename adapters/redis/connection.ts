/**
 * Opening the store's own Redis connections with fail-closed settings, on one Redis server or a
 * Redis Cluster. A store never shares a host's client: its answers must fail fast when Redis is
 * away (no offline queue that would hold a request until a reconnect), and it defines its Lua
 * scripts on the connection it owns.
 */
import {
  Cluster,
  type ClusterNode,
  type ClusterOptions,
  type Command,
  Redis,
  type RedisOptions,
} from 'ioredis'
import { z } from 'zod'
import { ConfigError, TokenStoreError } from '../../src/errors.js'
import { parseClusterUrl } from './cluster-url.js'
import { keySlot } from './key-slot.js'

/**
 * A Redis Cluster: its seed nodes (any reachable subset; the rest is discovered) and ioredis
 * cluster options (TLS and passwords go in `redisOptions`). The store overrides the options that
 * decide how failures surface.
 */
export interface RedisClusterTarget {
  readonly cluster: readonly ClusterNode[]
  readonly options?: ClusterOptions
}

/**
 * Where Redis is: a `redis://` or `rediss://` URL, or ioredis options (host and port, TLS,
 * Sentinel) for one server; a `redis-cluster://HOST:PORT[,HOST:PORT…]` URL or a
 * {@link RedisClusterTarget} for a Redis Cluster. The store overrides the options that decide how
 * failures surface.
 */
export type RedisTarget = string | RedisOptions | RedisClusterTarget

/** The store's command connection: one server, or a cluster that routes each key to its master. */
export type RedisConnection = Redis | Cluster

/** The connection options every Redis store shares, validated once in its constructor. */
export const connectionOptionsShape = {
  redis: z.custom<RedisTarget>(
    (value) => typeof value === 'string' || (typeof value === 'object' && value !== null),
    { message: 'must be a redis:// or redis-cluster:// URL, or ioredis (cluster) options' },
  ),
  keyPrefix: z
    .string()
    // Braces would make a hash tag of the prefix and put every key of a cluster in one slot.
    .regex(/^[\x21-\x7a|~]{0,64}$/, 'must be at most 64 visible ASCII characters other than { and }')
    .default('dap:'),
  commandTimeoutMs: z.int().min(1).max(60_000).default(500),
}

/** A Lua script run on the server, atomically: its keys, then its arguments. */
export type LuaScript = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>

// Reconnect quickly and keep trying for ever: recovery after an outage needs no restart, and an
// attempt every half second brings the store back within about a second of Redis returning.
function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 50, 500)
}

const TARGET_MESSAGE = 'must be a redis://, rediss:// or redis-cluster:// URL, or ioredis (cluster) options'

function failClosed(connectionName: string): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // The store resubscribes itself, so that it knows when the subscription is back.
    autoResubscribe: false,
    // Never ioredis's own timer (see armDeadline), not even one a host's options ask for.
    commandTimeout: undefined,
    connectionName,
  }
}

// Each command gets one deadline, however many connections it passes through (a cluster hands the
// command to a node's connection, and sends it again after a redirection).
const armed = new WeakSet<Command>()

/*
 * ioredis's `commandTimeout` rejects a command when its timer fires. After the event loop was held
 * up (a long synchronous task, a burst of requests handled in one turn, a paused process), Node runs
 * the expired timers before it reads the sockets: that timer rejected commands whose replies were
 * already waiting to be read, so an answer that had arrived was thrown away and the request failed.
 * This deadline, when its timer fires, first lets the loop read the sockets (`setImmediate` runs
 * after the I/O phase of the same turn), so a reply that has arrived is delivered; only a command
 * still unanswered then fails. `WAIT` blocks on the server for its own timeout, which is added.
 */
function armDeadline(command: Command, deadlineMs: number): void {
  if (armed.has(command)) return
  armed.add(command)
  const blockingMs = command.name === 'wait' ? Number(command.args[1]) || 0 : 0
  let settled = false
  const timer = setTimeout(
    () =>
      setImmediate(() => {
        // Settled by the reply the I/O phase just read (its reaction ran before this immediate).
        if (settled) return
        command.reject(new Error(`Redis did not answer within ${deadlineMs} ms`))
      }),
    deadlineMs + blockingMs,
  )
  const settle = () => {
    settled = true
    clearTimeout(timer)
  }
  command.promise.then(settle, settle)
}

type SendCommand = (command: Command, ...rest: unknown[]) => unknown

/**
 * Gives every command sent on `client` (on a cluster, on each of its node connections too) the
 * deadline of {@link armDeadline}, in place of ioredis's `commandTimeout`.
 */
function withDeadlines<C extends RedisConnection>(client: C, deadlineMs: number): C {
  const wrap = (connection: RedisConnection) => {
    const target = connection as unknown as { sendCommand: SendCommand }
    const send = target.sendCommand.bind(connection) as SendCommand
    target.sendCommand = (command, ...rest) => {
      armDeadline(command, deadlineMs)
      return send(command, ...rest)
    }
  }
  wrap(client)
  // The cluster's own commands to one node (WAIT, a heartbeat, its slot table) go to that node's
  // connection directly.
  if (client instanceof Cluster) {
    for (const node of client.nodes()) wrap(node)
    client.on('+node', (node: Redis) => wrap(node))
  }
  return client
}

function isClusterTarget(target: object): target is RedisClusterTarget {
  return 'cluster' in target
}

/** The target as a cluster's seed nodes and options, or `undefined` for one server. */
function clusterOf(target: RedisTarget): RedisClusterTarget | undefined {
  if (typeof target === 'string') {
    if (!target.startsWith('redis-cluster:')) return undefined
    const seeds = parseClusterUrl(target)
    if (seeds === undefined) throw new ConfigError(['options', 'redis'], TARGET_MESSAGE)
    return { cluster: seeds.map((seed) => ({ ...seed })) }
  }
  if (typeof target !== 'object' || target === null)
    throw new ConfigError(['options', 'redis'], TARGET_MESSAGE)
  if (!isClusterTarget(target)) return undefined
  if (!Array.isArray(target.cluster) || target.cluster.length === 0) {
    throw new ConfigError(['options', 'redis', 'cluster'], 'must list at least one seed node')
  }
  return target
}

/**
 * Opens a connection that fails a command at once while disconnected (no offline queue, no retry
 * of a command caught by a disconnect) and after `commandTimeoutMs` when Redis is slow — but never
 * while its answer is waiting to be read: after a stall of the event loop, the socket is read once
 * more before a command fails. On a cluster, a command is not retried while the cluster is down or
 * failing over either (the request gets 503 within the timeout), and the slot table is refreshed
 * every second, so that a promoted replica takes over without a restart.
 *
 * @throws {ConfigError} naming `options.redis` for a string that is not a Redis URL.
 *
 * @example
 * const client = openConnection('redis://127.0.0.1:6379', 500, 'my-sessions')
 */
export function openConnection(
  target: RedisTarget,
  commandTimeoutMs: number,
  connectionName: string,
): RedisConnection {
  const cluster = clusterOf(target)
  if (cluster !== undefined) {
    const { enableOfflineQueue: _, maxRetriesPerRequest: __, ...nodeOptions } = failClosed(connectionName)
    const client = new Cluster([...cluster.cluster], {
      ...cluster.options,
      redisOptions: { ...cluster.options?.redisOptions, ...nodeOptions, maxRetriesPerRequest: 0 },
      enableOfflineQueue: false,
      enableReadyCheck: true,
      scaleReads: 'master',
      clusterRetryStrategy: reconnectDelay,
      retryDelayOnClusterDown: 0,
      retryDelayOnFailover: 0,
      retryDelayOnTryAgain: 50,
      slotsRefreshInterval: 1000,
      slotsRefreshTimeout: commandTimeoutMs,
    })
    // ioredis connects to a node on its first command, and without an offline queue refuses the
    // commands that come while it connects: connect every node as soon as it is known.
    client.on('+node', (node: Redis) => {
      if (node.status === 'wait') node.connect().catch(() => {})
    })
    return withDeadlines(client, commandTimeoutMs)
  }
  if (typeof target === 'string') {
    if (!/^rediss?:\/\//.test(target) || !URL.canParse(target)) {
      throw new ConfigError(['options', 'redis'], TARGET_MESSAGE)
    }
    return withDeadlines(
      new Redis(target, { retryStrategy: reconnectDelay, ...failClosed(connectionName) }),
      commandTimeoutMs,
    )
  }
  return withDeadlines(
    new Redis({ retryStrategy: reconnectDelay, ...(target as RedisOptions), ...failClosed(connectionName) }),
    commandTimeoutMs,
  )
}

/**
 * A second connection to the same server with the same settings and deadline (a subscriber).
 *
 * @example
 * const subscriber = duplicateConnection(client, 500, 'my-subscriber')
 */
export function duplicateConnection(client: Redis, commandTimeoutMs: number, connectionName: string): Redis {
  return withDeadlines(client.duplicate({ connectionName }), commandTimeoutMs)
}

/**
 * Opens a connection of its own to one node (a cluster's master), with the cluster's node options
 * and the same fail-closed settings: the invalidation feed subscribes on every master this way.
 */
export function openNodeConnection(
  cluster: Cluster,
  host: string,
  port: number,
  commandTimeoutMs: number,
  connectionName: string,
): Redis {
  return withDeadlines(
    new Redis({
      retryStrategy: reconnectDelay,
      ...cluster.options.redisOptions,
      host,
      port,
      ...failClosed(connectionName),
    }),
    commandTimeoutMs,
  )
}

/**
 * Closes a connection: politely when it is up (pending replies arrive first), at once otherwise.
 *
 * @example
 * await closeConnection(client)
 */
export async function closeConnection(client: RedisConnection): Promise<void> {
  if (client.status === 'end') return
  if (client.status !== 'ready') {
    client.disconnect()
    return
  }
  try {
    await client.quit()
  } catch {
    client.disconnect()
  }
}

/**
 * Defines a Lua script on a connection the store owns; ioredis sends it by SHA (`EVALSHA`) and
 * loads it again after a Redis restart emptied the script cache.
 */
export function defineScript(client: RedisConnection, name: string, lua: string): LuaScript {
  client.defineCommand(name, { lua })
  const command = (client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!
  return (keys, args) => command.call(client, keys.length, ...keys, ...args)
}

/**
 * Waits until `count` replicas have every write made so far on the connection that wrote `key`
 * (on a cluster, the master that owns its slot), or `timeoutMs`; answers how many had it (at once,
 * and at most the number connected, when fewer than `count` replicas are connected).
 */
export async function replicasHaving(
  client: RedisConnection,
  key: string,
  count: number,
  timeoutMs: number,
): Promise<number> {
  let node: Redis | undefined
  if (client instanceof Cluster) {
    const owner = client.slots[keySlot(key)]?.[0]
    node = client.nodes('master').find((redis) => `${redis.options.host}:${redis.options.port}` === owner)
    if (node === undefined) throw new TokenStoreError('no connection to the master that owns the key')
  } else {
    node = client
  }
  // WAIT blocks the connection it runs on, and every lookup sent to that master queues behind it:
  // with too few replicas connected to ever confirm (a shard whose replica was promoted in a
  // failover), each write would hold the master's lookups for the whole timeout. ROLE says at once
  // how many replicas are connected (none, from a node that is no longer a master).
  const role: unknown = await node.role()
  const connected = Array.isArray(role) && role[0] === 'master' && Array.isArray(role[2]) ? role[2].length : 0
  if (connected < count) return connected
  return node.wait(count, timeoutMs)
}

/**
 * Resolves once the connection is ready (on a cluster, its connection to every master too), or
 * rejects with a `TokenStoreError` after `timeoutMs`.
 *
 * @example
 * await whenReady(client, 5000)
 */
export async function whenReady(client: RedisConnection, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  await whenOneReady(client, timeoutMs)
  if (!(client instanceof Cluster)) return
  const masters = client.nodes('master')
  await Promise.all(masters.map((node) => whenOneReady(node, Math.max(0, deadline - Date.now()))))
}

function whenOneReady(client: RedisConnection, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady)
      reject(new TokenStoreError(`Redis was not ready within ${timeoutMs} ms`))
    }, timeoutMs)
    const onReady = () => {
      clearTimeout(timer)
      resolve()
    }
    client.once('ready', onReady)
  })
}
