/**
 * The transport rule of everything a browser or an OAuth client sends credentials to outside the
 * API — the sign-in and token settings pages, the OAuth pages and the OAuth JSON endpoints: like
 * the API (docs/authentication.md), HTTPS, or plain HTTP from loopback only (a developer's own machine). Both
 * the protocol and the client address are the ones `--trust-proxy` resolved, so a trusted proxy
 * that terminates TLS is HTTPS and a remote client behind it is remote. Passwords, session cookies,
 * new token values, codes and secrets never cross a network in the clear (RFC 6749 §3.1, §3.2).
 *
 * The one place this rule lives: pages wrap their routes with {@link httpsOnly}; the OAuth JSON
 * endpoints, which answer in OAuth's own error shape, ask {@link isTransportAcceptable}.
 */
import { isSecureTransport } from 'data-access-policy'
import type { ApiRequest, Route, RouteResult } from '../routes/route-set.js'
import { messagePage, renderPage } from './html.js'
import type { PagePaths } from './page-paths.js'

/** Whether the request came over HTTPS, or from loopback. */
export function isTransportAcceptable(request: Pick<ApiRequest, 'protocol' | 'clientAddress'>): boolean {
  return isSecureTransport(request)
}

/** The 403 page of a page requested over plain HTTP from another machine. */
export function httpsRequiredPage(paths: PagePaths): RouteResult {
  return renderPage({
    paths,
    title: 'HTTPS required',
    status: 403,
    body: '<p>Sign-in, settings and authorization pages are served over HTTPS only. Use the <code>https://</code> address of this server.</p>',
  })
}

/**
 * The 503 page of a page whose store is away for a moment (a Redis failover, a stall): the user
 * tries again.
 *
 * @example
 * unavailablePage(web.paths).status // 503
 */
export function unavailablePage(paths: PagePaths): RouteResult {
  return messagePage(
    paths,
    503,
    'Temporarily unavailable',
    'The server cannot reach its store right now. Please try again in a moment.',
    undefined,
    { 'retry-after': '1' },
  )
}

/**
 * Makes routes pages: each answers {@link httpsRequiredPage} before anything else — before a form
 * is read, a session looked up or a password checked — unless {@link isTransportAcceptable}, and
 * {@link unavailablePage} when a store fails, unless it has a 503 of its own.
 *
 * @example
 * const routes = [{ method: 'GET', path: '/signin', handle: showForm }].map(httpsOnly(web.paths))
 */
export function httpsOnly(paths: PagePaths): (route: Route) => Route {
  return (route) => {
    const { handle } = route
    return {
      ...route,
      handle: async (request) =>
        isTransportAcceptable(request) ? handle(request) : httpsRequiredPage(paths),
      unavailable: route.unavailable ?? (() => unavailablePage(paths)),
    }
  }
}
