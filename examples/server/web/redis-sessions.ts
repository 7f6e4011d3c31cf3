/**
 * Sign-in sessions on the server's Redis (`--store redis://…` or `redis-cluster://…`), so that
 * every instance sees the same sessions: signed in on one, signed in on all; signed out on one,
 * signed out on all. A session is one Redis hash under `PREFIXsession:SHA256(id)` (one key, so
 * it lives in one cluster slot) that expires with the session; the sign-in form's CSRF key is one
 * more key, created once by whichever instance starts first.
 */
import { randomBytes } from 'node:crypto'
import { TokenStoreError } from 'data-access-policy'
import {
  closeRedisConnection as closeConnection,
  openRedisConnection as openConnection,
  type RedisConnection,
  type RedisTarget,
  redisReady as whenReady,
} from 'data-access-policy/redis'
import { z } from 'zod'
import { redisCall, redisFailure } from '../routes/redis-calls.js'
import {
  newSession,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  type Session,
  type SessionStore,
  sessionExpired,
  sessionKey,
} from './sessions.js'

// Redis keeps a session a little past its end, so an instance whose clock runs behind still finds
// it; expiry itself is decided by the timestamps, on the caller's clock.
const EXPIRY_GRACE_MS = 60_000

// KEYS: session. ARGV: field, value, new expiry (0: keep). Writes only to a session that exists.
const TOUCH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`

const storedSchema = z.object({
  handle: z.string().min(1),
  csrf: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  created: z
    .string()
    .regex(/^\d{1,16}$/)
    .transform(Number),
  seen: z
    .string()
    .regex(/^\d{1,16}$/)
    .transform(Number),
})

/**
 * Sessions on Redis, one hash per session keyed by the SHA-256 of its id.
 *
 * @example
 * const sessions = new RedisSessionStore('redis://127.0.0.1:6379', Date.now)
 * await sessions.ready()
 * const session = await sessions.create('alice')
 * await sessions.close()
 */
export class RedisSessionStore implements SessionStore {
  readonly #client: RedisConnection
  readonly #now: () => number
  readonly #prefix: string

  /** Connects to a `redis://` URL or a `redis-cluster://` list, as the token store takes them. */
  constructor(target: RedisTarget, now: () => number, options: { readonly keyPrefix?: string } = {}) {
    this.#client = openConnection(target, 500, `dap-sessions-${randomBytes(8).toString('hex')}`)
    this.#client.on('error', () => {})
    this.#now = now
    this.#prefix = options.keyPrefix ?? 'dap:'
  }

  /** Resolves once connected; rejects with a `TokenStoreError` after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return whenReady(this.#client, timeoutMs)
  }

  /**
   * The key every instance signs the sign-in form's CSRF tokens with (csrf.ts): created by the
   * first instance, read by the others, so a form shown by one is accepted by another.
   */
  async signInKey(): Promise<Uint8Array> {
    const key = `${this.#prefix}signin-csrf-key`
    try {
      await this.#client.set(key, randomBytes(32).toString('hex'), 'NX')
      const shared = await this.#client.get(key)
      if (shared === null || !/^[0-9a-f]{64}$/.test(shared)) {
        throw new TokenStoreError('Redis answered a malformed sign-in key')
      }
      return Buffer.from(shared, 'hex')
    } catch (error) {
      throw redisFailure('read the sign-in key', error)
    }
  }

  async create(handle: string): Promise<Session> {
    const session = newSession(handle, this.#now())
    const key = this.#key(session.id)
    await redisCall('start a session', async () => {
      await this.#client
        .multi()
        .hset(key, {
          handle,
          csrf: session.csrfToken,
          created: session.createdAt,
          seen: session.lastSeenAt,
        })
        .pexpire(key, this.#ttl(session))
        .exec()
    })
    return session
  }

  async find(id: string | undefined): Promise<Session | undefined> {
    if (id === undefined) return undefined
    const key = this.#key(id)
    const fields = await redisCall('find a session', () => this.#client.hgetall(key))
    if (Object.keys(fields).length === 0) return undefined
    const parsed = storedSchema.safeParse(fields)
    if (!parsed.success) throw new TokenStoreError('Redis answered a malformed session')
    const { handle, csrf, created, seen } = parsed.data
    const now = this.#now()
    if (sessionExpired({ createdAt: created, lastSeenAt: seen }, now)) {
      await redisCall('end a session', () => this.#client.del(key))
      return undefined
    }
    const session: Session = {
      id,
      handle,
      csrfToken: csrf,
      createdAt: created,
      lastSeenAt: Math.max(seen, now),
    }
    // Only an existing session is touched: a sign-out on another instance meanwhile wins.
    await redisCall('refresh a session', () =>
      this.#client.eval(TOUCH, 1, key, 'seen', session.lastSeenAt, this.#ttl(session)),
    )
    return session
  }

  async destroy(id: string): Promise<void> {
    await redisCall('end a session', () => this.#client.del(this.#key(id)))
  }

  async setNotice(id: string, notice: string): Promise<void> {
    // Only on a session that still exists: a notice must not bring back a signed-out one.
    await redisCall('leave a notice', () => this.#client.eval(TOUCH, 1, this.#key(id), 'notice', notice, 0))
  }

  async takeNotice(id: string): Promise<string | undefined> {
    const key = this.#key(id)
    const answers = await redisCall('read a notice', () =>
      this.#client.multi().hget(key, 'notice').hdel(key, 'notice').exec(),
    )
    const notice = answers?.[0]?.[1]
    return typeof notice === 'string' ? notice : undefined
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeConnection(this.#client)
  }

  #key(id: string): string {
    return `${this.#prefix}session:${sessionKey(id)}`
  }

  #ttl(session: Session): number {
    const end = Math.min(session.lastSeenAt + SESSION_IDLE_MS, session.createdAt + SESSION_ABSOLUTE_MS)
    return Math.max(1, end - session.lastSeenAt) + EXPIRY_GRACE_MS
  }
}
