/**
 * The device flow's verification pages (RFC 8628 §3.3): `GET /device` shows the `user_code` field
 * (filled in from `verification_uri_complete`), `POST /device` checks the code with the core, then
 * the user signs in if needed and sees the consent page, whose answer (`POST /oauth/consent`) ends
 * on a done page.
 *
 * Wrong codes are counted by the core per browser (the anonymous sign-in cookie) or, once signed
 * in, per user, and lock after 5 within 15 minutes. Since new browsers are cheap, every entry, right
 * or wrong, is also counted per client network (limits/abuse-limits.ts: 50 in 15 minutes) — atomically and
 * before the code is looked up, so that a parallel burst cannot have more codes checked than that.
 */
// The core's failure window: the lock's Retry-After is at most that long.
import { USER_CODE_FAILURE_WINDOW_MS, verifyUserCode } from 'data-access-policy/oauth'
import { waitInWords } from '../limits/abuse-limits.js'
import { readForm } from '../request/form.js'
import type { ApiRequest, RouteResult } from '../routes/route-set.js'
import { checkSessionCsrf } from '../web/csrf.js'
import type { Session } from '../web/sessions.js'
import { signInPage } from '../web/signin-page.js'
import { consentOwner, consentsFullPage, showConsent } from './authorization-pages.js'
import type { OAuthContext } from './oauth-context.js'
import { DEVICE_PATH, describeClient, devicePage } from './oauth-pages.js'
import { grantOwner } from './pending-consents.js'

const MAX_USER_CODE_INPUT = 64

function single(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name)
  return values.length === 1 ? values[0] : undefined
}

/** The verification page, with a form token for whoever is (or is not) signed in. */
function entryPage(
  context: OAuthContext,
  request: ApiRequest,
  session: Session | undefined,
  options: {
    readonly userCode?: string | undefined
    readonly error?: string
    readonly status?: number
    readonly retryAfter?: number
  } = {},
): RouteResult {
  const common = {
    paths: context.web.paths,
    session,
    userCode: options.userCode?.slice(0, MAX_USER_CODE_INPUT),
    ...(options.error === undefined ? {} : { error: options.error }),
    ...(options.status === undefined ? {} : { status: options.status }),
  }
  const retry = options.retryAfter === undefined ? {} : { 'retry-after': String(options.retryAfter) }
  if (session !== undefined) return devicePage({ ...common, csrfToken: session.csrfToken, headers: retry })
  const csrf = context.web.signInCsrf.issue(request)
  return devicePage({
    ...common,
    csrfToken: csrf.token,
    headers: { ...retry, ...(csrf.setCookie === undefined ? {} : { 'set-cookie': csrf.setCookie }) },
  })
}

/**
 * `GET /device`: the verification page; `?user_code=` fills the field in, `?consent=` resumes a
 * verified code after sign-in.
 *
 * @example
 * { method: 'GET', path: '/device', handle: (request) => showDevicePage(context, request) }
 */
export async function showDevicePage(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const session = await context.web.currentSession(request)
  const consent = request.query.get('consent')
  if (consent !== null) {
    if (session === undefined) {
      const check = await context.web.requireSignIn(request, request.target, 'page')
      if (!check.ok) return check.result
    }
    const pending = session === undefined ? undefined : await context.consents.claim(consent, session.id)
    if (pending === undefined || pending.kind !== 'device') {
      return entryPage(context, request, session, {
        error: 'That request has expired. Enter the code from your device again.',
        status: 400,
      })
    }
    return showConsent(context, pending, session!)
  }
  return entryPage(context, request, session, { userCode: request.query.get('user_code') ?? undefined })
}

/**
 * `POST /device` (fields `csrf_token`, `user_code`): checks the code, then shows the consent page,
 * or the sign-in form that leads to it.
 *
 * @example
 * { method: 'POST', path: '/device', handle: (request) => enterUserCode(context, request) }
 */
export async function enterUserCode(context: OAuthContext, request: ApiRequest): Promise<RouteResult> {
  const { web, state } = context
  const form = await readForm(request)
  const session = await web.currentSession(request)
  const userCode = single(form, 'user_code') ?? ''
  // Either token is genuine: the page may have been loaded before or after signing in elsewhere.
  const genuine =
    (session !== undefined && checkSessionCsrf(session, form)) || web.signInCsrf.check(request, form)
  if (!genuine) {
    return entryPage(context, request, session, {
      userCode,
      error: 'This form has expired or was not sent from this site. Please enter the code again.',
      status: 403,
    })
  }
  const limit = await context.guard.hit('userCodeEntry', request.clientAddress)
  if (!limit.ok) {
    return entryPage(context, request, session, {
      error: `Too many codes were entered from this network. Try again in ${waitInWords(limit.retryAfter)}.`,
      status: 429,
      retryAfter: limit.retryAfter,
    })
  }
  const now = context.now()
  const result = await verifyUserCode({
    userCode,
    attemptKey: consentOwner(session, request),
    now,
    store: state,
  })
  if (!result.ok) {
    const messages = {
      invalid_code: `That code is not valid. Check the code on your device and try again (${result.attemptsLeft} ${result.attemptsLeft === 1 ? 'try' : 'tries'} left).`,
      locked: 'Too many wrong codes. Try again in 15 minutes.',
      expired: 'This code has expired. Start again on your device to get a new code.',
      already_decided: 'This code has already been used.',
    } as const
    return entryPage(context, request, session, {
      userCode: result.reason === 'invalid_code' ? userCode : undefined,
      error: messages[result.reason],
      status: result.reason === 'locked' ? 429 : 400,
      // The core does not say when the lock ends: at the latest one failure window after now.
      ...(result.reason === 'locked' && { retryAfter: USER_CODE_FAILURE_WINDOW_MS / 1000 }),
    })
  }
  const { grant } = result
  const client = grant.clientId === undefined ? undefined : context.clients.identify(grant.clientId)
  const pending = await context.consents.create(
    { kind: 'device', grant, client },
    // Signed out, the grant owns it, not the browser: browsers cost an attacker nothing, grants are capped.
    session === undefined ? grantOwner(grant.grantId) : consentOwner(session),
    session?.id,
    grant.expiresAt,
  )
  if ('full' in pending) return consentsFullPage(web.paths, pending, session)
  if (session !== undefined) return showConsent(context, pending, session)
  return signInPage({
    paths: web.paths,
    csrf: web.signInCsrf.issue(request),
    next: web.paths.to(DEVICE_PATH, { consent: pending.id }),
    reason: `Sign in to decide whether ${describeClient(client, 'device').name} may access your account.`,
  })
}
