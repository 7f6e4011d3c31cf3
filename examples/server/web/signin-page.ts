/**
 * The sign-in page (fields `handle`, `password`, optional `next`): served by `GET /signin`,
 * re-rendered by `POST /signin` after a failure, and shown in place by pages that need a signed-in
 * user (`requireSignIn(…, 'page')`, the OAuth authorization page). It always posts to `/signin`
 * (under the path prefix of `--public-url`).
 */
import type { ResponseHeaders, RouteResult } from '../routes/route-set.js'
import type { SignInCsrf } from './csrf.js'
import { csrfInput } from './csrf.js'
import { escapeHtml } from './escape-html.js'
import { renderPage } from './html.js'
import type { PagePaths } from './page-paths.js'

/** What the sign-in page shows. */
export interface SignInPageOptions {
  /** The pages' addresses (page-paths.ts): the form posts to `/signin` under the prefix. */
  readonly paths: PagePaths
  /** The form's CSRF token and, when the browser needs a fresh one, its cookie. */
  readonly csrf: SignInCsrf
  /** A safe same-origin path to continue to (next-path.ts). */
  readonly next?: string | undefined
  /** The handle to fill in again after a failure. */
  readonly handle?: string | undefined
  /** A message above the form (wrong credentials, too many attempts). Plain text. */
  readonly error?: string | undefined
  /** A line saying why sign-in is needed ("Sign in to approve access for …"). Plain text. */
  readonly reason?: string | undefined
  /** Default 200. */
  readonly status?: number
  readonly headers?: ResponseHeaders
}

/**
 * The sign-in page as a result, setting the anonymous CSRF cookie when needed.
 *
 * @example
 * signInPage({ paths: web.paths, csrf: web.signInCsrf.issue(request), next: '/settings/tokens' })
 */
export function signInPage(options: SignInPageOptions): RouteResult {
  const error = options.error
  const described = error === undefined ? '' : ' aria-describedby="signin-error" aria-invalid="true"'
  const headers: Record<string, string | readonly string[]> = { ...options.headers }
  if (options.csrf.setCookie !== undefined) headers['set-cookie'] = options.csrf.setCookie
  const body = `${options.reason === undefined ? '' : `<p>${escapeHtml(options.reason)}</p>`}
${error === undefined ? '' : `<div class="error" role="alert" id="signin-error"><p>${escapeHtml(error)}</p></div>`}
<form method="post" action="${escapeHtml(options.paths.to('/signin'))}">
  ${csrfInput(options.csrf.token)}
  ${options.next === undefined ? '' : `<input type="hidden" name="next" value="${escapeHtml(options.next)}">`}
  <div class="field">
    <label for="handle">Handle</label>
    <input type="text" id="handle" name="handle" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" value="${escapeHtml(options.handle ?? '')}"${described}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1024"${described}>
  </div>
  <button type="submit">Sign in</button>
</form>`
  return renderPage({ paths: options.paths, title: 'Sign in', status: options.status ?? 200, headers, body })
}
