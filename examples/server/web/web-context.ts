/**
 * What every page route set shares: the session store, the users who can sign in, the sign-in
 * form's CSRF tokens, and the three checks a page makes — who is signed in, send them to sign in,
 * is this form genuine. One context per app (app.ts); its sessions live in the server's store
 * (memory, or the Redis that several instances share). README.md in this folder documents it.
 */

import { randomBytes } from 'node:crypto'
import { redirect } from '../routes/http-result.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import type { SeedUser } from '../seed/load.js'
import { checkSessionCsrf, SignInCsrfTokens } from './csrf.js'
import { DeviceCookies } from './device-cookies.js'
import { messagePage } from './html.js'
import { DEFAULT_NEXT, safeNext } from './next-path.js'
import { PagePaths } from './page-paths.js'
import { MemorySessionStore, SESSION_COOKIE, type Session, type SessionStore } from './sessions.js'
import { signInPage } from './signin-page.js'
import { UserDirectory } from './users.js'

/** A check that either lets the page go on with the session, or gives the answer to send instead. */
export type SessionCheck =
  | { readonly ok: true; readonly session: Session }
  | { readonly ok: false; readonly result: RouteResult }

/** How {@link WebContext.requireSignIn} sends a signed-out visitor to sign in. */
export type SignInPrompt = 'redirect' | 'page'

/** The pages' shared state and checks. */
export interface WebContext {
  /** The clock, epoch ms. */
  readonly now: () => number
  readonly sessions: SessionStore
  readonly users: UserDirectory
  readonly signInCsrf: SignInCsrfTokens
  /** The device cookies of browsers that signed in before (device-cookies.ts). */
  readonly deviceCookies: DeviceCookies
  /** The addresses the pages hand out, under `--public-url`'s path (page-paths.ts). */
  readonly paths: PagePaths
  /**
   * The live session whose id the `dap_session` cookie carries, its idle clock restarted; undefined
   * when signed out or expired.
   */
  currentSession(request: ApiRequest): Promise<Session | undefined>
  /**
   * The session, or the way to sign in: a 303 to `/signin?next=…` (`'redirect'`, the default), or
   * the sign-in form itself, posting to `/signin` with `next` (`'page'`), both under the path
   * prefix. `next` is a route target (`/device?consent=…`), handed to the browser under the prefix;
   * by default it is the request's own target for a GET, the token list otherwise (a POST cannot
   * be replayed after sign-in).
   */
  requireSignIn(request: ApiRequest, next?: string, prompt?: SignInPrompt): Promise<SessionCheck>
  /**
   * Checks the CSRF token of a signed-in form: the session, or a 403 page when the token is
   * missing, repeated or wrong, or when nobody is signed in.
   */
  checkCsrf(request: ApiRequest, form: URLSearchParams): Promise<SessionCheck>
}

/** Options of {@link createWebContext}. */
export interface WebContextOptions {
  readonly users: readonly SeedUser[]
  /** The clock, epoch ms; `Date.now` by default. */
  readonly now?: () => number
  /** Where sessions live; in this process's memory by default, on Redis with `--store redis…`. */
  readonly sessions?: SessionStore
  /** The sign-in form's CSRF key, the same on every instance; a fresh one by default. */
  readonly signInKey?: Uint8Array
  /** The pages' addresses, from `--public-url`; without a path prefix by default. */
  readonly paths?: PagePaths
}

/**
 * The address of the sign-in page that continues to `next` (a path the browser was given, prefix
 * included), its slashes left readable.
 *
 * @example
 * signInLocation(new PagePaths('/dap'), '/dap/settings/tokens') // '/dap/signin?next=/dap/settings/tokens'
 */
export function signInLocation(paths: PagePaths, next: string | undefined): string {
  return paths.to('/signin', next === undefined ? undefined : { next })
}

/** The 403 page of a form whose CSRF token is missing or wrong. */
export function csrfFailure(paths: PagePaths, session?: Session): RouteResult {
  return messagePage(
    paths,
    403,
    'Form not accepted',
    'This form could not be accepted: it was not sent from this site, or it has expired. Go back, reload the page and try again.',
    session,
  )
}

/**
 * Builds the context of an app's pages.
 *
 * @example
 * const web = await createWebContext({ users: seed.users })
 * const check = await web.requireSignIn(request)
 * if (!check.ok) return check.result
 */
export async function createWebContext(options: WebContextOptions): Promise<WebContext> {
  const now = options.now ?? Date.now
  const sessions = options.sessions ?? new MemorySessionStore(now)
  const users = await UserDirectory.create(options.users)
  const signInKey = options.signInKey ?? randomBytes(32)
  const paths = options.paths ?? new PagePaths()
  const signInCsrf = new SignInCsrfTokens(now, signInKey, paths.cookiePath)
  const deviceCookies = new DeviceCookies(now, signInKey, paths.cookiePath)

  const currentSession = (request: ApiRequest): Promise<Session | undefined> =>
    sessions.find(request.cookies[SESSION_COOKIE])

  return {
    now,
    sessions,
    users,
    signInCsrf,
    deviceCookies,
    paths,
    currentSession,
    async requireSignIn(request, next, prompt = 'redirect') {
      const session = await currentSession(request)
      if (session !== undefined) return { ok: true, session }
      const route = next ?? (request.method === 'GET' ? request.target : DEFAULT_NEXT)
      const target = safeNext(paths.to(route), paths)
      if (prompt === 'page') {
        return { ok: false, result: signInPage({ paths, csrf: signInCsrf.issue(request), next: target }) }
      }
      return { ok: false, result: redirect(signInLocation(paths, target)) }
    },
    async checkCsrf(request, form) {
      const session = await currentSession(request)
      if (session === undefined || !checkSessionCsrf(session, form)) {
        return { ok: false, result: csrfFailure(paths, session) }
      }
      return { ok: true, session }
    },
  }
}
