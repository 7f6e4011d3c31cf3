/**
 * Opening the store's own Redis connections with fail-closed settings. A store never shares a
 * host's client: its answers must fail fast when Redis is away (no offline queue that would hold a
 * request until a reconnect), and it defines its Lua scripts on the connection it owns.
 */
import { Redis, type RedisOptions } from 'ioredis'
import { z } from 'zod'
import { ConfigError, TokenStoreError } from '../../src/errors.js'

/**
 * Where the Redis server is: a `redis://` or `rediss://` URL, or ioredis options (host and port,
 * TLS, Sentinel). The store overrides the options that decide how failures surface.
 */
export type RedisTarget = string | RedisOptions

/** The connection options every Redis store shares, validated once in its constructor. */
export const connectionOptionsShape = {
  redis: z.custom<RedisTarget>(
    (value) => typeof value === 'string' || (typeof value === 'object' && value !== null),
    { message: 'must be a redis:// URL or ioredis options' },
  ),
  keyPrefix: z
    .string()
    .regex(/^[\x21-\x7e]{0,64}$/, 'must be at most 64 visible ASCII characters')
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

/**
 * Opens a connection that fails a command at once while disconnected (no offline queue, no retry
 * of a command caught by a disconnect) and after `commandTimeoutMs` when Redis is slow.
 *
 * @throws {ConfigError} naming `options.redis` for a string that is not a Redis URL.
 */
export function openConnection(target: RedisTarget, commandTimeoutMs: number, connectionName: string): Redis {
  const failClosed: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // The store resubscribes itself, so that it knows when the subscription is back.
    autoResubscribe: false,
    commandTimeout: commandTimeoutMs,
    connectionName,
  }
  if (typeof target === 'string') {
    if (!/^rediss?:\/\//.test(target) || !URL.canParse(target)) {
      throw new ConfigError(['options', 'redis'], 'must be a redis:// or rediss:// URL, or ioredis options')
    }
    return new Redis(target, { retryStrategy: reconnectDelay, ...failClosed })
  }
  if (typeof target !== 'object' || target === null) {
    throw new ConfigError(['options', 'redis'], 'must be a redis:// or rediss:// URL, or ioredis options')
  }
  return new Redis({ retryStrategy: reconnectDelay, ...target, ...failClosed })
}

/** Closes a connection: politely when it is up (pending replies arrive first), at once otherwise. */
export async function closeConnection(client: Redis): Promise<void> {
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
export function defineScript(client: Redis, name: string, lua: string): LuaScript {
  client.defineCommand(name, { lua })
  const command = (client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!
  return (keys, args) => command.call(client, keys.length, ...keys, ...args)
}

/** Resolves once the connection is ready, or rejects with a `TokenStoreError` after `timeoutMs`. */
export function whenReady(client: Redis, timeoutMs: number): Promise<void> {
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
