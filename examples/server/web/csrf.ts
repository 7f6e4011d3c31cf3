/**
 * CSRF protection of the pages' forms. Signed in, every form carries the session's own random
 * token (sessions.ts). Before sign-in there is no session, yet the sign-in form needs protection
 * too (login CSRF: a forged sign-in would put the victim in the attacker's account), so it carries
 * a token bound to a short-lived anonymous cookie: the cookie holds a random nonce and its issue
 * time, the form holds an HMAC of that cookie under a key that never leaves the server (shared by
 * every instance through the store when there are several, so a form from one is accepted by
 * another). All
 * comparisons are constant-time; a missing or wrong token is a 403 page (signin.ts, settings).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { serializeCookie } from '../request/cookies.js'
import type { ApiRequest } from '../routes/route-set.js'
import { escapeHtml } from './escape-html.js'
import { cookieOptions, randomToken } from './sessions.js'

/** The form field that carries the CSRF token, in every form. */
export const CSRF_FIELD = 'csrf_token'

/** The anonymous cookie of the sign-in form. */
export const SIGNIN_CSRF_COOKIE = 'dap_signin'

/** How long a sign-in form stays valid. */
export const SIGNIN_CSRF_TTL_MS = 60 * 60_000

/** The hidden input that carries a CSRF token, for a form's markup. */
export function csrfInput(token: string): string {
  return `<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(token)}">`
}

/**
 * The hidden CSRF input of a signed-in session's form.
 *
 * @example
 * `<form method="post" action="/signout">${csrfField(session)}<button>Sign out</button></form>`
 */
export function csrfField(session: { readonly csrfToken: string }): string {
  return csrfInput(session.csrfToken)
}

/**
 * Constant-time equality of two strings; different lengths are unequal without revealing where
 * they differ.
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  // Compare equal-length buffers either way, so the time does not depend on the content.
  if (left.length !== right.length) {
    timingSafeEqual(left, left)
    return false
  }
  return timingSafeEqual(left, right)
}

/** The one CSRF token a form carries; none or several are no token. */
function submittedToken(form: URLSearchParams): string | undefined {
  const values = form.getAll(CSRF_FIELD)
  return values.length === 1 ? values[0] : undefined
}

/**
 * Whether a form carries the session's CSRF token.
 *
 * @example
 * if (!checkSessionCsrf(session, form)) return forbidden
 */
export function checkSessionCsrf(session: { readonly csrfToken: string }, form: URLSearchParams): boolean {
  const token = submittedToken(form)
  return token !== undefined && safeEqual(token, session.csrfToken)
}

/** A sign-in form's token, and the cookie to set when the browser did not have a valid one. */
export interface SignInCsrf {
  readonly token: string
  /** A `Set-Cookie` value, or undefined when the browser's cookie is still good. */
  readonly setCookie: string | undefined
}

const COOKIE_PATTERN = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/

/**
 * The sign-in form's CSRF tokens: issued against an anonymous cookie, checked against it.
 *
 * @example
 * const csrf = new SignInCsrfTokens(Date.now)
 * const { token, setCookie } = csrf.issue(request)
 * csrf.check(request, form) // later, on POST /signin
 */
export class SignInCsrfTokens {
  readonly #key: Uint8Array
  readonly #now: () => number
  readonly #cookiePath: string

  /**
   * `key`: the HMAC key, 32 random bytes; a fresh one of this process's own by default.
   * `cookiePath`: the cookie's `Path`, the pages' path prefix (page-paths.ts); `/` by default.
   */
  constructor(now: () => number, key: Uint8Array = randomBytes(32), cookiePath = '/') {
    this.#now = now
    this.#key = key
    this.#cookiePath = cookiePath
  }

  /** A token for a sign-in form, reusing the browser's cookie while it has time left. */
  issue(request: ApiRequest): SignInCsrf {
    const current = request.cookies[SIGNIN_CSRF_COOKIE]
    // Reuse a cookie with at least half its life left, so two open sign-in tabs both still work.
    const issuedAt = current === undefined ? undefined : this.#issuedAt(current)
    if (current !== undefined && issuedAt !== undefined && this.#now() - issuedAt < SIGNIN_CSRF_TTL_MS / 2) {
      return { token: this.#sign(current), setCookie: undefined }
    }
    const value = `${this.#now().toString(36)}.${randomToken()}`
    const setCookie = serializeCookie(
      SIGNIN_CSRF_COOKIE,
      value,
      cookieOptions(request, this.#cookiePath, SIGNIN_CSRF_TTL_MS / 1000),
    )
    return { token: this.#sign(value), setCookie }
  }

  /** Whether the form's token matches the browser's unexpired anonymous cookie. */
  check(request: ApiRequest, form: URLSearchParams): boolean {
    const cookie = request.cookies[SIGNIN_CSRF_COOKIE]
    const token = submittedToken(form)
    if (cookie === undefined || token === undefined || this.#issuedAt(cookie) === undefined) return false
    return safeEqual(token, this.#sign(cookie))
  }

  /** The `Set-Cookie` value that removes the anonymous cookie once signed in. */
  clearedCookie(request: ApiRequest): string {
    return serializeCookie(SIGNIN_CSRF_COOKIE, '', cookieOptions(request, this.#cookiePath, 0))
  }

  #issuedAt(cookie: string): number | undefined {
    const match = COOKIE_PATTERN.exec(cookie)
    if (match === null) return undefined
    const issuedAt = Number.parseInt(match[1]!, 36)
    const age = this.#now() - issuedAt
    return age >= 0 && age < SIGNIN_CSRF_TTL_MS ? issuedAt : undefined
  }

  #sign(cookie: string): string {
    return createHmac('sha256', this.#key).update(`signin-csrf:${cookie}`).digest('base64url')
  }
}
