/**
 * Sign-in and sign-out pages (README.md, "Pages: sign-in and workspace settings"): `GET /signin`,
 * `POST /signin` (fields `handle`, `password`, `next`, `csrf_token`), `POST /signout` (field
 * `csrf_token`). Credentials are the seed's users, checked with scrypt; attempts are limited per
 * network, per (handle, network), and per handle from every network together — except from a
 * browser holding the handle's device cookie (device-cookies.ts), issued by each successful
 * sign-in, so that nobody can lock a user out of the browsers they use (limits/abuse-limits.ts). A
 * successful sign-in always starts a new session (a fixed id planted before sign-in is never
 * promoted). Over plain HTTP from another machine every route is the 403 page of https-only.ts.
 */

import { type AbuseGuard, type LimitCheck, waitInWords } from '../limits/abuse-limits.js'
import { readForm } from '../request/form.js'
import { redirect } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult, RouteSet } from '../routes/route-set.js'
import { httpsOnly } from './https-only.js'
import { DEFAULT_NEXT, safeNext } from './next-path.js'
import { clearedSessionCookie, SESSION_COOKIE, sessionCookie } from './sessions.js'
import { signInPage } from './signin-page.js'
import type { WebContext } from './web-context.js'

/** The one message for a wrong handle or password: it never says which was wrong. */
export const WRONG_CREDENTIALS = 'Incorrect handle or password.'

// Longer than any seed handle can be (seed/shapes.ts: 1–64 characters); such a handle is not
// counted against the limiter, so nobody can fill its memory with made-up names of any length.
const MAX_HANDLE_LENGTH = 64
const MAX_PASSWORD_LENGTH = 1024

function single(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name)
  return values.length === 1 ? values[0] : undefined
}

async function showForm(web: WebContext, request: ApiRequest): Promise<RouteResult> {
  return signInPage({
    paths: web.paths,
    csrf: web.signInCsrf.issue(request),
    next: safeNext(request.query.get('next'), web.paths),
  })
}

// An attempt counted against every sign-in limit: refused with the reason to show, or let through
// with its last count (given back on success).
type CountedAttempt =
  | { readonly refused: string; readonly retryAfter: number }
  | { readonly refused: undefined; readonly last: LimitCheck }

// Counted before the password is checked, so parallel guesses cannot slip past any limit, and
// the network's own count first: a network already refused creates no key for the handles it
// makes up. The handle's count per network never refuses the right password from another
// network. The account's count from every network refuses strangers' browsers, but not one the
// account signed in from before (its device cookie), which has a count of its own instead; a
// successful sign-in gives its hit back, so only failures add up against the account, and
// each lock within a day doubles the account's next window (backoff).
async function countAttempt(
  guard: AbuseGuard,
  address: string | undefined,
  handle: string,
  device: string | undefined,
): Promise<CountedAttempt> {
  const limits = [
    () => guard.hit('signIn', address),
    () => guard.hit('signInHandle', address, handle),
    device === undefined
      ? () => guard.hitWithBackoff('signInAccount', handle)
      : () => guard.hitShared('signInDevice', device),
  ]
  let last: LimitCheck | undefined
  for (const [i, limit] of limits.entries()) {
    last = await limit()
    if (!last.ok) {
      const why =
        i < 2
          ? 'Too many sign-in attempts from this network. Try again'
          : device === undefined
            ? 'Too many sign-in attempts for this account. Sign in from a browser you have used before, or try again'
            : 'Too many sign-in attempts from this browser. Try again'
      return { refused: why, retryAfter: last.retryAfter }
    }
  }
  return { refused: undefined, last: last! }
}

async function signIn(web: WebContext, guard: AbuseGuard, request: ApiRequest): Promise<RouteResult> {
  const form = await readForm(request)
  const next = safeNext(single(form, 'next'), web.paths)
  const handle = single(form, 'handle') ?? ''
  const password = single(form, 'password') ?? ''
  const again = (status: number, error: string, headers?: Record<string, string>) =>
    signInPage({
      paths: web.paths,
      csrf: web.signInCsrf.issue(request),
      next,
      handle: handle.slice(0, MAX_HANDLE_LENGTH),
      error,
      status,
      ...(headers === undefined ? {} : { headers }),
    })
  // A forged or stale form: 403, and a fresh form to try again (the password is never checked).
  if (!web.signInCsrf.check(request, form)) {
    return again(403, 'This sign-in form has expired or was not sent from this site. Please sign in again.')
  }
  if (handle === '' || password === '') return again(400, 'Enter your handle and your password.')
  if (handle.length > MAX_HANDLE_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    return again(401, WRONG_CREDENTIALS)
  }
  const address = request.clientAddress
  const device = web.deviceCookies.check(request, handle)
  const counted = await countAttempt(guard, address, handle, device)
  if (counted.refused !== undefined) {
    return again(429, `${counted.refused} in ${waitInWords(counted.retryAfter)}.`, {
      'retry-after': String(counted.retryAfter),
    })
  }
  if (!(await web.users.verify(handle, password, guard.network(address)))) {
    return again(401, WRONG_CREDENTIALS)
  }
  await guard.reset('signInHandle', address, handle)
  if (device === undefined) await guard.giveBack(counted.last)
  else await guard.resetShared('signInDevice', device)
  // Whatever session the browser had ends here; the new one gets a new id and CSRF token.
  const previous = request.cookies[SESSION_COOKIE]
  if (previous !== undefined) await web.sessions.destroy(previous)
  const session = await web.sessions.create(handle)
  return redirect(next ?? web.paths.to(DEFAULT_NEXT), 303, {
    'set-cookie': [
      sessionCookie(session, request, web.paths.cookiePath),
      web.signInCsrf.clearedCookie(request),
      web.deviceCookies.issue(request, handle),
    ],
  })
}

async function signOut(web: WebContext, request: ApiRequest): Promise<RouteResult> {
  const signedOut = () =>
    redirect(web.paths.to('/signin'), 303, {
      'set-cookie': clearedSessionCookie(request, web.paths.cookiePath),
    })
  const form = await readForm(request)
  const session = await web.currentSession(request)
  if (session === undefined) {
    // Nobody to sign out: the browser may still hold a stale cookie, which goes too.
    return signedOut()
  }
  const check = await web.checkCsrf(request, form)
  if (!check.ok) return check.result
  await web.sessions.destroy(session.id)
  return signedOut()
}

/**
 * Builds the sign-in route set.
 *
 * @example
 * const routes = signInRoutes(web, guard)
 */
export function signInRoutes(web: WebContext, guard: AbuseGuard): RouteSet {
  const routes: Route[] = [
    { method: 'GET', path: '/signin', handle: (request) => showForm(web, request) },
    { method: 'POST', path: '/signin', handle: (request) => signIn(web, guard, request) },
    { method: 'POST', path: '/signout', handle: (request) => signOut(web, request) },
  ]
  // A password and a session cookie never cross a network in the clear.
  return { name: 'signin', routes: routes.map(httpsOnly(web.paths)) }
}
