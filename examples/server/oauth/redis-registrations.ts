/**
 * Dynamically registered clients on the server's Redis (`--store redis://…` or `redis-cluster://…`),
 * so that a client registered through one instance is known to all. Every key carries one hash tag,
 * so a cluster keeps them in one slot and each script runs there: a registration is a string under
 * `PREFIX{registrations}:client:ID` with its TTL, and two sorted sets (unused, used) hold the ids by
 * expiry, so that the bound is kept by one script (expired ids dropped, then the oldest unused one
 * past its grace pushed out; a used one never, the registration refused instead) and the sets
 * themselves expire when no registration is left.
 */
import { randomBytes } from 'node:crypto'
import { TokenStoreError } from 'data-access-policy'
import type { ClientRegistration } from 'data-access-policy/oauth'
import {
  closeRedisConnection as closeConnection,
  openRedisConnection as openConnection,
  type RedisConnection,
  type RedisTarget,
  redisReady as whenReady,
} from 'data-access-policy/redis'
import { z } from 'zod'
import { redisCall, safeJson } from '../routes/redis-calls.js'
import {
  type AddRegistration,
  DEFAULT_MAX_REGISTERED_CLIENTS,
  type RegistrationStore,
  type RegistrationStoreOptions,
  UNUSED_REGISTRATION_GRACE_MS,
  UNUSED_REGISTRATION_TTL_MS,
  USED_REGISTRATION_TTL_MS,
} from './registrations.js'

// KEYS: the new client's key, the unused set, the used set. ARGV: the id, the JSON, its TTL in ms,
// the bound, now, the key prefix of clients, the sets' TTL in ms, the grace in ms. An unused id's
// score is its expiry, so it was registered at score - TTL (every unused id has the same TTL).
// Answers 0 when kept, else the ms until a registration may be pushed out.
const ADD = `
local now = tonumber(ARGV[5])
local ttl = tonumber(ARGV[3])
local grace = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
while redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[4]) do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if #oldest == 0 then return grace end
  local safeUntil = tonumber(oldest[2]) - ttl + grace
  if now < safeUntil then return safeUntil - now end
  redis.call('ZREM', KEYS[2], oldest[1])
  redis.call('DEL', ARGV[6] .. oldest[1])
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
redis.call('PEXPIRE', KEYS[3], ARGV[7])
return 0
`

// KEYS: the client's key, the unused set, the used set. ARGV: the id, its TTL in ms, now, the sets'
// TTL in ms.
const MARK_USED = `
if redis.call('PEXPIRE', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], tonumber(ARGV[3]) + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1
`

const storedShape = z.object({
  redirectUris: z.array(z.string()),
  name: z.string().optional(),
  scope: z.string().optional(),
})

/**
 * Registrations on Redis.
 *
 * @example
 * const registrations = new RedisRegistrationStore('redis://127.0.0.1:6379')
 * await registrations.ready()
 */
export class RedisRegistrationStore implements RegistrationStore {
  readonly #client: RedisConnection
  readonly #prefix: string
  readonly #max: number
  readonly #now: () => number
  readonly #unusedTtlMs: number
  readonly #usedTtlMs: number
  readonly #graceMs: number

  constructor(target: RedisTarget, options: RegistrationStoreOptions & { readonly keyPrefix?: string } = {}) {
    this.#client = openConnection(target, 500, `dap-registrations-${randomBytes(8).toString('hex')}`)
    this.#client.on('error', () => {})
    this.#prefix = `${options.keyPrefix ?? 'dap:'}{registrations}:`
    this.#max = options.maxClients ?? DEFAULT_MAX_REGISTERED_CLIENTS
    this.#now = options.now ?? Date.now
    this.#unusedTtlMs = options.unusedTtlMs ?? UNUSED_REGISTRATION_TTL_MS
    this.#usedTtlMs = options.usedTtlMs ?? USED_REGISTRATION_TTL_MS
    this.#graceMs = options.graceMs ?? UNUSED_REGISTRATION_GRACE_MS
  }

  /** Resolves once connected; rejects with a `TokenStoreError` after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return whenReady(this.#client, timeoutMs)
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeConnection(this.#client)
  }

  async add(id: string, registration: ClientRegistration): Promise<AddRegistration> {
    const stored = JSON.stringify({
      redirectUris: registration.redirectUris,
      ...(registration.name !== undefined && { name: registration.name }),
      ...(registration.scope !== undefined && { scope: registration.scope }),
    })
    const wait = await redisCall('keep a registration', () =>
      this.#client.eval(
        ADD,
        3,
        this.#clientKey(id),
        `${this.#prefix}unused`,
        `${this.#prefix}used`,
        id,
        stored,
        this.#unusedTtlMs,
        this.#max,
        this.#now(),
        `${this.#prefix}client:`,
        Math.max(this.#unusedTtlMs, this.#usedTtlMs),
        this.#graceMs,
      ),
    )
    if (typeof wait !== 'number' || !Number.isFinite(wait) || wait < 0) {
      throw new TokenStoreError('Redis answered a malformed registration outcome')
    }
    return wait === 0 ? { added: true } : { added: false, retryAfterMs: wait }
  }

  async get(id: string): Promise<ClientRegistration | undefined> {
    const text = await redisCall('read a registration', () => this.#client.get(this.#clientKey(id)))
    if (text === null) return undefined
    const parsed = storedShape.safeParse(safeJson(text))
    if (!parsed.success) throw new TokenStoreError(`Redis holds an unreadable registration for ${id}`)
    return { redirectUris: parsed.data.redirectUris, name: parsed.data.name, scope: parsed.data.scope }
  }

  async markUsed(id: string): Promise<void> {
    await redisCall('renew a registration', () =>
      this.#client.eval(
        MARK_USED,
        3,
        this.#clientKey(id),
        `${this.#prefix}unused`,
        `${this.#prefix}used`,
        id,
        this.#usedTtlMs,
        this.#now(),
        Math.max(this.#unusedTtlMs, this.#usedTtlMs),
      ),
    )
  }

  async size(): Promise<number> {
    const [unused, used] = await redisCall('count registrations', () =>
      Promise.all([this.#client.zcard(`${this.#prefix}unused`), this.#client.zcard(`${this.#prefix}used`)]),
    )
    return unused + used
  }

  #clientKey(id: string): string {
    return `${this.#prefix}client:${id}`
  }
}
