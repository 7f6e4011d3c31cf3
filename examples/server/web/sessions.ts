/**
 * Sign-in sessions of the pages, in process memory. The cookie carries only a random 256-bit id;
 * the session holds who is signed in, the CSRF token of their forms, its timestamps and at most a
 * one-line notice for the next page — never a token value, so nothing secret but the id itself
 * ever sits here. Sessions end after 30 minutes idle or 8 hours in all, whichever comes first.
 */
import { randomBytes } from 'node:crypto'
import { isSecureTransport } from '../../../src/index.js'
import { type CookieOptions, serializeCookie } from '../cookies.js'
import type { ApiRequest } from '../route-set.js'

/** The session cookie's name. */
export const SESSION_COOKIE = 'dap_session'

/** A session ends this long after its last request. */
export const SESSION_IDLE_MS = 30 * 60_000

/** A session ends this long after sign-in, however active. */
export const SESSION_ABSOLUTE_MS = 8 * 60 * 60_000

/** A signed-in session. */
export interface Session {
  /** The cookie value: 32 random bytes, base64url. */
  readonly id: string
  /** The signed-in user's handle. */
  readonly handle: string
  /** The token every form of this session carries (csrf.ts). */
  readonly csrfToken: string
  readonly createdAt: number
  /** The last request that found the session; idle expiry counts from here. */
  lastSeenAt: number
  /** A one-line message for the next page ("Revoked “ci”."), shown once. Never a secret. */
  notice?: string
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
 * The attributes of the pages' cookies: `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure`
 * unless the client is on loopback over plain HTTP.
 */
export function cookieOptions(
  request: Pick<ApiRequest, 'protocol' | 'clientAddress'>,
  maxAge?: number,
): CookieOptions {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'Lax',
    secure: !isLoopbackHttp(request),
    ...(maxAge === undefined ? {} : { maxAge }),
  }
}

/** The `Set-Cookie` value that hands a session to the browser (a browser-session cookie). */
export function sessionCookie(session: Session, request: ApiRequest): string {
  return serializeCookie(SESSION_COOKIE, session.id, cookieOptions(request))
}

/** The `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(request: ApiRequest): string {
  return serializeCookie(SESSION_COOKIE, '', cookieOptions(request, 0))
}

/**
 * The in-memory session store. Expired sessions are refused when looked up and swept whenever a
 * session is created, so the store holds no more than the sessions of the last eight hours.
 *
 * @example
 * const sessions = new SessionStore(Date.now)
 * const session = sessions.create('alice')
 * sessions.find(session.id) // the session, its idle clock restarted
 */
export class SessionStore {
  readonly #now: () => number
  readonly #sessions = new Map<string, Session>()

  constructor(now: () => number) {
    this.#now = now
  }

  /** Starts a session for a user who just signed in: fresh id, fresh CSRF token. */
  create(handle: string): Session {
    const now = this.#now()
    this.#sweep(now)
    const session: Session = {
      id: randomToken(),
      handle,
      csrfToken: randomToken(),
      createdAt: now,
      lastSeenAt: now,
    }
    this.#sessions.set(session.id, session)
    return session
  }

  /** The live session with this id, its idle clock restarted; an expired one is removed. */
  find(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined
    const session = this.#sessions.get(id)
    if (session === undefined) return undefined
    const now = this.#now()
    if (this.#expired(session, now)) {
      this.#sessions.delete(id)
      return undefined
    }
    session.lastSeenAt = Math.max(session.lastSeenAt, now)
    return session
  }

  /** Ends a session (sign-out); an unknown id is ignored. */
  destroy(id: string): void {
    this.#sessions.delete(id)
  }

  /** Every stored session, expired or not, as copies: for tests and diagnostics. */
  snapshot(): readonly Readonly<Session>[] {
    return [...this.#sessions.values()].map((session) => ({ ...session }))
  }

  #expired(session: Session, now: number): boolean {
    // Written as "not before" so that a NaN clock ends the session rather than keeping it.
    return !(now < session.lastSeenAt + SESSION_IDLE_MS && now < session.createdAt + SESSION_ABSOLUTE_MS)
  }

  #sweep(now: number): void {
    for (const [id, session] of this.#sessions) if (this.#expired(session, now)) this.#sessions.delete(id)
  }
}
