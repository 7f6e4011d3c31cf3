/**
 * Pending consents on the server's Redis (`--store redis://…` or `redis-cluster://…`), so that a
 * consent page shown by one instance is answered by any other (no sticky routing). An entry is one
 * hash under `PREFIXconsent:SHA256(id)` holding its owner, the hash of the session it is bound to,
 * its expiry and its subject as JSON, expiring with the entry; each owner's open entries are one
 * list under `PREFIXconsents-of:SHA256(owner)`, trimmed to the owner's bound by one script as an
 * entry is added (constant time), with a TTL of its own. Claiming and taking are one script each
 * on the entry's key, so an answer is taken once even when two instances race. Every key is one
 * slot's; the scripts touch one key each, so a cluster serves them as one server would.
 */
import { createHash, randomBytes } from 'node:crypto'
import { parseScopes, TokenStoreError } from 'data-access-policy'
import {
  closeRedisConnection as closeConnection,
  openRedisConnection as openConnection,
  type RedisConnection,
  type RedisTarget,
  redisReady as whenReady,
} from 'data-access-policy/redis'
import { z } from 'zod'
import { redisCall, safeJson } from '../routes/redis-calls.js'
import { sessionKey } from '../web/sessions.js'
import {
  CONSENT_TTL_MS,
  type ConsentSubject,
  type ConsentsFull,
  isUserOwner,
  MAX_PENDING_CONSENTS_PER_OWNER,
  newConsent,
  ownerBound,
  type PendingConsent,
  type PendingConsentStore,
} from './pending-consents.js'

// Redis keeps an entry a little past its end, so an instance whose clock runs behind still finds
// it; expiry itself is decided by the timestamp, on the caller's clock.
const EXPIRY_GRACE_MS = 60_000

// KEYS: the owner's list. ARGV: the entry's key, the bound, the list's TTL in ms, and `refuse` for
// an owner whose entries stay (a device grant). Adds the entry and answers the keys of the owner's
// oldest entries trimmed to keep the bound; for a grant at its bound, adds nothing and answers the
// list's remaining life in ms (a number, not a list).
const ADD = `
if ARGV[4] == 'refuse' and redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then
  return redis.call('PTTL', KEYS[1])
end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local evicted = {}
while redis.call('LLEN', KEYS[1]) > tonumber(ARGV[2]) do
  table.insert(evicted, redis.call('LPOP', KEYS[1]))
end
return evicted
`

// KEYS: the entry. ARGV: the session's hash. Binds an unbound entry to the session; answers
// { expiry, subject } when the entry is (now) the session's.
const CLAIM = `
local f = redis.call('HMGET', KEYS[1], 'session', 'expires', 'subject')
if not f[3] then return false end
if f[1] == '' then
  redis.call('HSET', KEYS[1], 'session', ARGV[1])
  f[1] = ARGV[1]
end
if f[1] ~= ARGV[1] then return false end
return { f[2], f[3] }
`

// KEYS: the entry. ARGV: the session's hash. Removes the session's entry and answers it.
const TAKE = `
local f = redis.call('HMGET', KEYS[1], 'session', 'expires', 'subject')
if not f[3] or f[1] ~= ARGV[1] then return false end
redis.call('DEL', KEYS[1])
return { f[2], f[3] }
`

const clientShape = z
  .object({
    id: z.string(),
    name: z.string(),
    confidential: z.boolean(),
    offline: z.boolean(),
    origin: z.enum(['operator', 'metadata-document', 'registered']).optional(),
    host: z.string().optional(),
  })
  .optional()

const scopesShape = z.array(z.string()).transform((names, context) => {
  try {
    return parseScopes(names)
  } catch {
    context.addIssue({ code: 'custom', message: 'unknown scope' })
    return z.NEVER
  }
})

const subjectShape = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('code'),
    request: z.object({
      clientId: z.string().optional(),
      redirectUri: z.string(),
      scopes: scopesShape,
      state: z.string().optional(),
      codeChallenge: z.string(),
      audience: z.array(z.string()).optional(),
      dpopJkt: z.string().optional(),
    }),
    client: clientShape,
  }),
  z.object({
    kind: z.literal('device'),
    grant: z.object({
      grantId: z.string(),
      userCode: z.string(),
      clientId: z.string().optional(),
      scopes: scopesShape,
      audience: z.array(z.string()).optional(),
      expiresAt: z.number(),
    }),
    client: clientShape,
  }),
])

const storedShape = z.tuple([
  z
    .string()
    .regex(/^\d{1,16}$/)
    .transform(Number),
  z.string(),
])

function hashed(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

/**
 * Pending consents on Redis.
 *
 * @example
 * const consents = new RedisPendingConsents('redis://127.0.0.1:6379', Date.now)
 * await consents.ready()
 * const pending = await consents.create({ kind: 'code', request, client }, 'user:alice', session.id)
 */
export class RedisPendingConsents implements PendingConsentStore {
  readonly #client: RedisConnection
  readonly #now: () => number
  readonly #prefix: string
  readonly #maxPerOwner: number

  /** Connects to a `redis://` URL or a `redis-cluster://` list, as the token store takes them. */
  constructor(
    target: RedisTarget,
    now: () => number,
    options: { readonly keyPrefix?: string; readonly maxPerOwner?: number } = {},
  ) {
    this.#client = openConnection(target, 500, `dap-consents-${randomBytes(8).toString('hex')}`)
    this.#client.on('error', () => {})
    this.#now = now
    this.#prefix = options.keyPrefix ?? 'dap:'
    this.#maxPerOwner = options.maxPerOwner ?? MAX_PENDING_CONSENTS_PER_OWNER
  }

  /** Resolves once connected; rejects with a `TokenStoreError` after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return whenReady(this.#client, timeoutMs)
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeConnection(this.#client)
  }

  async create(
    subject: ConsentSubject,
    owner: string,
    sessionId: string | undefined,
    expiresAt?: number,
  ): Promise<PendingConsent | ConsentsFull> {
    const now = this.#now()
    const consent = newConsent(subject, sessionId, now, expiresAt)
    const key = this.#key(consent.id)
    const { id: _id, expiresAt: expires, sessionId: _session, ...stored } = consent
    // A grant's list lives as long as its newest entry, and counts every entry made within that
    // time (answered ones too: the grant is decided then, and more pages would only be refused).
    const grant = !isUserOwner(owner)
    const listTtl = grant ? Math.max(1, expires - now) + EXPIRY_GRACE_MS : CONSENT_TTL_MS + EXPIRY_GRACE_MS
    // The owner's list first: an entry is never written without being counted against its owner.
    const evicted = await redisCall('count a consent request', () =>
      this.#client.eval(
        ADD,
        1,
        `${this.#prefix}consents-of:${hashed(owner)}`,
        key,
        ownerBound(owner, this.#maxPerOwner),
        listTtl,
        grant ? 'refuse' : 'evict',
      ),
    )
    if (typeof evicted === 'number') {
      const retryAfter = Math.max(1, Math.ceil((evicted - EXPIRY_GRACE_MS) / 1000))
      return { full: true, retryAfter, reason: 'grant' }
    }
    await redisCall('store a consent request', async () => {
      const answers = await this.#client
        .multi()
        .hset(key, {
          session: sessionId === undefined ? '' : sessionKey(sessionId),
          expires: expires,
          subject: JSON.stringify(stored),
        })
        .pexpire(key, Math.max(1, expires - now) + EXPIRY_GRACE_MS)
        .exec()
      const failed = answers?.find(([error]) => error !== null)
      if (answers === null || failed !== undefined) throw failed?.[0] ?? new Error('transaction aborted')
    })
    // One key per command: in a cluster the owner's oldest entries may lie in other slots.
    for (const old of Array.isArray(evicted) ? evicted : []) {
      if (typeof old === 'string') await redisCall('forget a consent request', () => this.#client.del(old))
    }
    return consent
  }

  async claim(id: string | undefined, sessionId: string): Promise<PendingConsent | undefined> {
    if (id === undefined) return undefined
    const answer = await redisCall('claim a consent request', () =>
      this.#client.eval(CLAIM, 1, this.#key(id), sessionKey(sessionId)),
    )
    return this.#parse(answer, id, sessionId)
  }

  async take(id: string | undefined, sessionId: string): Promise<PendingConsent | undefined> {
    if (id === undefined) return undefined
    const answer = await redisCall('take a consent request', () =>
      this.#client.eval(TAKE, 1, this.#key(id), sessionKey(sessionId)),
    )
    return this.#parse(answer, id, sessionId)
  }

  #parse(answer: unknown, id: string, sessionId: string): PendingConsent | undefined {
    if (answer === null) return undefined
    const stored = storedShape.safeParse(answer)
    const subject = stored.success ? subjectShape.safeParse(safeJson(stored.data[1])) : undefined
    if (!stored.success || subject === undefined || !subject.success) {
      throw new TokenStoreError('Redis answered a malformed consent request')
    }
    const expiresAt = stored.data[0]
    // Written as "not before" so that a NaN clock expires the entry rather than keeping it.
    if (!(this.#now() < expiresAt)) return undefined
    return { ...(subject.data as ConsentSubject), id, expiresAt, sessionId }
  }

  #key(id: string): string {
    return `${this.#prefix}consent:${hashed(id)}`
  }
}
