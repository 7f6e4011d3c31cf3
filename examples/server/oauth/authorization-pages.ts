/**
 * The authorization-code flow's pages: `GET /oauth/authorize` (validate, sign in, consent) and the
 * consent answer both flows share, `POST /oauth/consent`.
 *
 * Order of `GET /oauth/authorize` (docs/oauth.md, RFC 6749 §4.1.2.1): the request is validated by the
 * core before anything else — an unverifiable client or redirect URI is a 400 page naming the
 * error, any other error a redirect to the verified redirect URI with `error` and `state` — and only
 * a valid request reaches sign-in and then the consent page.
 */
import { createHash } from 'node:crypto'
import {
  buildRedirectUrl,
  DEFAULT_OAUTH_TOKEN_TTL_MS,
  decideDeviceAuthorization,
  issueAuthorizationCode,
  OAuthError,
  validateAuthorizationRequest,
} from 'data-access-policy/oauth'
import { waitInWords } from '../limits/abuse-limits.js'
import { readForm } from '../request/form.js'
import { redirect } from '../routes/http-result.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import { SIGNIN_CSRF_COOKIE } from '../web/csrf.js'
import { messagePage } from '../web/html.js'
import { safeNext } from '../web/next-path.js'
import type { PagePaths } from '../web/page-paths.js'
import type { Session } from '../web/sessions.js'
import { signInPage } from '../web/signin-page.js'
import { MetadataLookupRefused } from './metadata-clients.js'
import { paramsOf } from './oauth-body.js'
import type { OAuthContext } from './oauth-context.js'
import {
  authorizationErrorPage,
  consentGonePage,
  consentPage,
  DECISIONS,
  describeClient,
  deviceDonePage,
} from './oauth-pages.js'
import { type ConsentsFull, MAX_PENDING_CONSENTS_PER_GRANT, type PendingConsent } from './pending-consents.js'

function single(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name)
  return values.length === 1 ? values[0] : undefined
}

function lifetimeInWords(ms: number): string {
  const minutes = Math.round(ms / 60_000)
  if (minutes % 60 === 0) return minutes === 60 ? '1 hour' : `${minutes / 60} hours`
  return minutes === 1 ? '1 minute' : `${minutes} minutes`
}

/**
 * Who a request is, for the counts kept per person: the signed-in user, else the browser (its
 * anonymous sign-in cookie, which a form's CSRF check has verified, hashed so that no key holds a
 * cookie's value). Wrong user codes count against it (device-pages.ts), and a signed-in user's open
 * consent pages (oauth/pending-consents.ts); signed out, a consent is owned by its device grant
 * (`grantOwner`), since a new browser costs an attacker nothing.
 */
export function consentOwner(session: Session | undefined, request?: ApiRequest): string {
  if (session !== undefined) return `user:${session.handle}`
  const cookie = request?.cookies[SIGNIN_CSRF_COOKIE] ?? ''
  return `browser:${createHash('sha256').update(cookie).digest('hex')}`
}

/**
 * The page when no consent page can be opened: 429 when the device grant already has its
 * {@link MAX_PENDING_CONSENTS_PER_GRANT} pages open, 503 when the server holds as many as it can.
 */
export function consentsFullPage(paths: PagePaths, full: ConsentsFull, session?: Session): RouteResult {
  const retry = { 'retry-after': String(full.retryAfter) }
  if (full.reason === 'grant') {
    return messagePage(
      paths,
      429,
      'Code already in use',
      `This code was already entered in ${MAX_PENDING_CONSENTS_PER_GRANT} other browsers, which are waiting for an answer. ` +
        `Finish in one of them, or try again in ${waitInWords(full.retryAfter)}. If you did not enter it there, ` +
        'deny the request on your device and start again.',
      session,
      retry,
    )
  }
  return messagePage(
    paths,
    503,
    'Try again later',
    `Too many consent requests are open on this server. Try again in ${waitInWords(full.retryAfter)}.`,
    session,
    retry,
  )
}

/**
 * The page when the client's metadata document cannot be fetched now: 429 when this network
 * fetched too many documents lately, 503 when too many fetches are in flight; `Retry-After` either
 * way. Never a redirect: the client is not verified yet.
 */
export function documentsBusyPage(
  paths: PagePaths,
  refused: MetadataLookupRefused,
  session?: Session,
): RouteResult {
  const limited = refused.reason === 'rate-limited'
  return messagePage(
    paths,
    limited ? 429 : 503,
    'Try again later',
    limited
      ? `Too many applications were looked up from your network. Try again in ${waitInWords(refused.retryAfter)}.`
      : `This server is busy looking up applications. Try again in ${waitInWords(refused.retryAfter)}.`,
    session,
    { 'retry-after': String(refused.retryAfter) },
  )
}

/** The consent page of a pending consent, for its signed-in session. */
export function showConsent(context: OAuthContext, pending: PendingConsent, session: Session): RouteResult {
  const audience = pending.kind === 'code' ? pending.request.audience : pending.grant.audience
  const resources = context.resources()
  return consentPage({
    paths: context.web.paths,
    pending,
    session,
    resources: (audience ?? []).map(resources.nameOf),
    offline: pending.client?.offline ?? false,
    accessLifetime: lifetimeInWords(context.accessTokenTtlMs ?? DEFAULT_OAUTH_TOKEN_TTL_MS),
  })
}

/**
 * `GET /oauth/authorize`.
 *
 * @example
 * { method: 'GET', path: '/oauth/authorize', handle: (request) => authorize(context, request) }
 */
export async function authorize(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const { web } = context
  const session = await web.currentSession(request)
  // RFC 9207: every redirect to the client names this issuer, so that a client talking to several
  // cannot be led to send a code to the wrong one.
  const issuer = context.origin.url
  // A client's metadata document is fetched before anyone signs in: counted per network.
  const network = context.guard.network(request.clientAddress)
  const result = await validateAuthorizationRequest(
    paramsOf(request.query),
    context.clients.lookupFrom(network),
    { resources: context.resources().known, issuer },
  )
  if (!result.ok && result.respond === 'page') {
    if (result.error.cause instanceof MetadataLookupRefused) {
      return documentsBusyPage(web.paths, result.error.cause, session)
    }
    if (result.error.error === 'server_error')
      console.error('GET /oauth/authorize failed:', result.error.cause)
    return authorizationErrorPage(web.paths, result.error, session)
  }
  if (!result.ok) return redirect(result.location, 302)

  const { request: authorization } = result
  let client: Awaited<ReturnType<typeof context.clients.describe>>
  try {
    client =
      authorization.clientId === undefined
        ? undefined
        : await context.clients.describe(authorization.clientId, network)
  } catch (error) {
    // The document was fetched a moment ago; it may have left the cache since, and the fetch again
    // be refused for now.
    if (error instanceof MetadataLookupRefused) return documentsBusyPage(web.paths, error, session)
    throw error
  }
  if (session === undefined) {
    const next = safeNext(web.paths.to(request.target), web.paths)
    if (next === undefined) {
      // Sign-in could not come back here: say so to the client rather than lose the request.
      const error = new OAuthError('invalid_request', 'the authorization request is too long')
      return redirect(
        buildRedirectUrl(authorization.redirectUri, {
          error: error.error,
          error_description: error.error_description,
          state: authorization.state,
          iss: issuer,
        }),
        302,
      )
    }
    return signInPage({
      paths: web.paths,
      csrf: web.signInCsrf.issue(request),
      next,
      reason: `Sign in to decide whether ${describeClient(client, 'code').name} may access your account.`,
    })
  }
  const pending = await context.consents.create(
    { kind: 'code', request: authorization, client },
    consentOwner(session),
    session.id,
  )
  if ('full' in pending) return consentsFullPage(web.paths, pending, session)
  return showConsent(context, pending, session)
}

/**
 * `POST /oauth/consent` (fields `csrf_token`, `consent`, `decision`): the answer to a consent page
 * of either flow. The signed-in session's CSRF token is checked first; the consent is then taken
 * from the server's store, once, for that session only.
 *
 * @example
 * { method: 'POST', path: '/oauth/consent', handle: (request) => answerConsent(context, request) }
 */
export async function answerConsent(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const form = await readForm(request)
  const check = await context.web.checkCsrf(request, form)
  if (!check.ok) return check.result
  const { session } = check
  const { paths } = context.web
  const decision = single(form, 'decision')
  if (decision !== DECISIONS[0] && decision !== DECISIONS[1]) {
    return consentGonePage(paths, session, 'Choose “Allow access” or “Deny” on the consent page.')
  }
  const pending = await context.consents.take(single(form, 'consent'), session.id)
  if (pending === undefined) {
    return consentGonePage(paths, session, 'This consent page has expired or was already answered.')
  }
  const now = context.now()
  if (pending.kind === 'code') {
    const { request: authorization } = pending
    if (decision === 'deny') {
      return redirect(
        buildRedirectUrl(authorization.redirectUri, {
          error: 'access_denied',
          error_description: 'the user denied the request',
          state: authorization.state,
          iss: context.origin.url,
        }),
        303,
      )
    }
    const { location } = await issueAuthorizationCode({
      request: authorization,
      userId: session.handle,
      now,
      store: context.state,
      issuer: context.origin.url,
    })
    return redirect(location, 303)
  }
  const outcome = await decideDeviceAuthorization({
    grantId: pending.grant.grantId,
    userId: session.handle,
    decision,
    now,
    store: context.state,
  })
  if (!outcome.ok) {
    return consentGonePage(
      paths,
      session,
      outcome.reason === 'already_decided'
        ? 'This device code has already been approved or denied.'
        : 'This device code has expired.',
    )
  }
  return deviceDonePage(paths, outcome.status, session)
}
