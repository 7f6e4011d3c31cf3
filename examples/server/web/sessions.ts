/**
 * Sign-in sessions of the pages. The cookie carries only a random 256-bit id, and a store keeps a
 * session under the SHA-256 of that id, never the id itself: whoever reads the store (a Redis
 * dump) cannot take over a session. A session holds who is signed in, the CSRF token of their
 * forms, its timestamps and at most a one-line notice for the next page — never a token value.
 * Sessions end after 30 minutes idle or 8 hours in all, whichever comes first. The store is the
 * server's (`--store`): in process memory here, on Redis in redis-sessions.ts, so that a session
 * started on one instance is valid on all and a sign-out on one ends it on all.
 */
import { createHash, randomBytes } from 'node:crypto'
import { isSecureTransport } from 'data-access-policy'
import { type CookieOptions, serializeCookie } from '../request/cookies.js'
import type { ApiRequest } from '../routes/route-set.js'

/** The session cookie's name. */
export const SESSION_COOKIE = 'dap_session'

/** A session ends this long after its last request. */
export const SESSION_IDLE_MS = 30 * 60_000

/** A session ends this long after sign-in, however active. */
export const SESSION_ABSOLUTE_MS = 8 * 60 * 60_000

/** A signed-in session. */
export interface Session {
  /** The cookie value: 32 random bytes, base64url. Stores keep only its hash ({@link sessionKey}). */
  readonly id: string
  /** The signed-in user's handle. */
  readonly handle: string
  /** The token every form of this session carries (csrf.ts). */
  readonly csrfToken: string
  readonly createdAt: number
  /** The last request that found the session; idle expiry counts from here. */
  readonly lastSeenAt: number
}

/**
 * Where sessions live. Every method is asynchronous, since a shared store answers over the network;
 * a store failure rejects (the page answers 503), and never yields a session.
 */
export interface SessionStore {
  /** Starts a session for a user who just signed in: fresh id, fresh CSRF token. */
  create(handle: string): Promise<Session>
  /** The live session with this id, its idle clock restarted; undefined when unknown or expired. */
  find(id: string | undefined): Promise<Session | undefined>
  /** Ends a session (sign-out); an unknown id is ignored. */
  destroy(id: string): Promise<void>
  /** Leaves a one-line message ("Revoked “ci”.") for the session's next page. Never a secret. */
  setNotice(id: string, notice: string): Promise<void>
  /** The message left for this page, removed as it is read. */
  takeNotice(id: string): Promise<string | undefined>
}

/**
 * The key a store keeps a session under: the SHA-256 of its id, hex.
 *
 * @example
 * sessionKey(session.id) // '9f86d0…' (64 hex digits)
 */
export function sessionKey(id: string): string {
  return createHash('sha256').update(id).digest('hex')
}

/**
 * Whether a session has ended at `now`: idle too long, or signed in too long ago. Written as "not
 * before" so that a NaN clock ends the session rather than keeping it.
 */
export function sessionExpired(session: Pick<Session, 'createdAt' | 'lastSeenAt'>, now: number): boolean {
  return !(now < session.lastSeenAt + SESSION_IDLE_MS && now < session.createdAt + SESSION_ABSOLUTE_MS)
}

/** A new session's fields: fresh id and CSRF token. */
export function newSession(handle: string, now: number): Session {
  return { id: randomToken(), handle, csrfToken: randomToken(), createdAt: now, lastSeenAt: now }
}

/**
 * 256 random bits, base64url: session ids and CSRF tokens.
 *
 * @example
 * randomToken() // 'n3Xq…' (43 characters)
 */
export function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * Whether cookies for this request go without `Secure`: only a loopback client over plain HTTP
 * (a developer's own machine), where a `Secure` cookie would never come back.
 */
export function isLoopbackHttp(request: Pick<ApiRequest, 'protocol' | 'clientAddress'>): boolean {
  // Plain HTTP that the transport rule still accepts: only loopback is.
  return request.protocol === 'http' && isSecureTransport(request)
}

/**
 * The attributes of the pages' cookies: `HttpOnly`, `SameSite=Lax`, `Path=` the pages' path prefix
 * (`/` without one: page-paths.ts), and `Secure` unless the client is on loopback over plain HTTP.
 */
export function cookieOptions(
  request: Pick<ApiRequest, 'protocol' | 'clientAddress'>,
  path: string,
  maxAge?: number,
): CookieOptions {
  return {
    path,
    httpOnly: true,
    sameSite: 'Lax',
    secure: !isLoopbackHttp(request),
    ...(maxAge === undefined ? {} : { maxAge }),
  }
}

/**
 * The `Set-Cookie` value that hands a session to the browser (a browser-session cookie), on the
 * pages' cookie path (page-paths.ts).
 */
export function sessionCookie(session: Session, request: ApiRequest, path: string): string {
  return serializeCookie(SESSION_COOKIE, session.id, cookieOptions(request, path))
}

/** The `Set-Cookie` value that removes the session cookie from `path`. */
export function clearedSessionCookie(request: ApiRequest, path: string): string {
  return serializeCookie(SESSION_COOKIE, '', cookieOptions(request, path, 0))
}

/** A session as the memory store holds it: without its id, under the id's hash. */
export type StoredSession = Omit<Session, 'id'> & { readonly notice?: string }

/**
 * The in-memory session store (one instance). Expired sessions are refused when looked up and
 * swept whenever a session is created, so the store holds no more than the sessions of the last
 * eight hours.
 *
 * @example
 * const sessions = new MemorySessionStore(Date.now)
 * const session = await sessions.create('alice')
 * await sessions.find(session.id) // the session, its idle clock restarted
 */
export class MemorySessionStore implements SessionStore {
  readonly #now: () => number
  readonly #sessions = new Map<string, StoredSession>()

  constructor(now: () => number) {
    this.#now = now
  }

  async create(handle: string): Promise<Session> {
    const now = this.#now()
    this.#sweep(now)
    const session = newSession(handle, now)
    const { id, ...stored } = session
    this.#sessions.set(sessionKey(id), stored)
    return session
  }

  async find(id: string | undefined): Promise<Session | undefined> {
    if (id === undefined) return undefined
    const key = sessionKey(id)
    const stored = this.#sessions.get(key)
    if (stored === undefined) return undefined
    const now = this.#now()
    if (sessionExpired(stored, now)) {
      this.#sessions.delete(key)
      return undefined
    }
    const seen = { ...stored, lastSeenAt: Math.max(stored.lastSeenAt, now) }
    this.#sessions.set(key, seen)
    const { notice: _, ...session } = seen
    return { id, ...session }
  }

  async destroy(id: string): Promise<void> {
    this.#sessions.delete(sessionKey(id))
  }

  async setNotice(id: string, notice: string): Promise<void> {
    const key = sessionKey(id)
    const stored = this.#sessions.get(key)
    if (stored !== undefined) this.#sessions.set(key, { ...stored, notice })
  }

  async takeNotice(id: string): Promise<string | undefined> {
    const key = sessionKey(id)
    const stored = this.#sessions.get(key)
    if (stored?.notice === undefined) return undefined
    const { notice, ...rest } = stored
    this.#sessions.set(key, rest)
    return notice
  }

  /** Every stored session, expired or not, as copies (no ids: only their hashes are kept). */
  snapshot(): readonly (StoredSession & { readonly key: string })[] {
    return [...this.#sessions].map(([key, session]) => ({ key, ...session }))
  }

  #sweep(now: number): void {
    for (const [key, session] of this.#sessions) if (sessionExpired(session, now)) this.#sessions.delete(key)
  }
}
