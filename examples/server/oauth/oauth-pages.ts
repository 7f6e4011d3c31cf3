/**
 * The OAuth pages, in the layout of the other pages (web/html.ts): the error page of a request
 * that cannot be sent back, the consent page both flows share, and the device verification pages.
 * Every outside string is escaped; every form carries a CSRF token.
 */
import { SCOPE_DESCRIPTIONS, type Scope } from 'data-access-policy'
import type { OAuthError } from 'data-access-policy/oauth'
import type { ResponseHeaders, RouteResult } from '../routes/route-set.js'
import { csrfField, csrfInput } from '../web/csrf.js'
import { escapeHtml, pageHref, renderPage, type SignedInHeader } from '../web/html.js'
import type { PagePaths } from '../web/page-paths.js'
import type { ClientIdentity } from './client-registry.js'
import type { PendingConsent } from './pending-consents.js'

/** The `decision` values of the consent form. */
export const DECISIONS = ['approve', 'deny'] as const

/** The consent form's answer to the consent page. */
export const CONSENT_PATH = '/oauth/consent'

/** The verification page of the device flow (RFC 8628 `verification_uri`). */
export const DEVICE_PATH = '/device'

/** What a session client is called on the consent page (it has no registered identity). */
export const SESSION_CLIENT_LABEL = 'this application on your computer (no client id)'

/** A session client on the device flow. */
export const SESSION_DEVICE_LABEL = 'an application on your device (no client id)'

/** The client as a consent page names it: `{ name, detail }` in plain text. */
export function describeClient(
  client: ClientIdentity | undefined,
  kind: 'code' | 'device',
): { readonly name: string; readonly detail: string | undefined } {
  if (client === undefined) {
    return { name: kind === 'code' ? SESSION_CLIENT_LABEL : SESSION_DEVICE_LABEL, detail: undefined }
  }
  if (client.origin === 'metadata-document') {
    return {
      name: client.name,
      detail: `described by a document on ${client.host ?? 'its site'}; not verified by this server`,
    }
  }
  if (client.origin === 'registered') {
    return { name: client.name, detail: 'registered itself; not verified by this server' }
  }
  return {
    name: client.name,
    detail: client.name === client.id ? 'a client registered with this server' : `client id ${client.id}`,
  }
}

// What the consent page adds for a client the operator did not register.
function unverifiedNote(client: ClientIdentity | undefined): string {
  if (client?.origin !== 'metadata-document' && client?.origin !== 'registered') return ''
  const who =
    client.origin === 'metadata-document'
      ? `Its name comes from a document on ${client.host ?? 'its site'}: anyone can publish one, so only continue if you started this from an application you trust on that site.`
      : 'It registered itself with this server: its name is whatever it chose.'
  return `<p id="client-unverified"><strong>Unverified application.</strong> ${escapeHtml(who)} It will not get offline access: it was not registered with the operator.</p>\n`
}

/** The host (and port) of a redirect URI, shown so the user can see where the answer goes. */
export function redirectHost(redirectUri: string): string {
  try {
    return new URL(redirectUri).host
  } catch {
    return redirectUri
  }
}

function scopeList(scopes: readonly Scope[]): string {
  const items = scopes.map(
    (scope) =>
      `<li><code>${escapeHtml(scope)}</code><p class="hint">${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</p></li>`,
  )
  return `<ul aria-labelledby="scopes-heading">\n${items.join('\n')}\n</ul>`
}

/**
 * The 400 page of an authorization request whose client or redirect URI could not be verified:
 * the browser stays here, and the page names the error code (RFC 6749 §4.1.2.1).
 */
export function authorizationErrorPage(
  paths: PagePaths,
  error: OAuthError,
  session: SignedInHeader | undefined,
): RouteResult {
  return renderPage({
    paths,
    title: 'Authorization request refused',
    status: error.status,
    session,
    body: `<div class="error" role="alert">
<p>The application sent an authorization request that this server cannot accept. Because the
application could not be verified, you are not being sent back to it.</p>
<p>Error: <code id="oauth-error">${escapeHtml(error.error)}</code> — ${escapeHtml(error.error_description)}</p>
</div>
<p>If you started this from an application, tell its developers about the error above.</p>`,
  })
}

/** What the consent page needs. */
export interface ConsentPageOptions {
  /** The pages' addresses: the form posts to {@link CONSENT_PATH} under the prefix. */
  readonly paths: PagePaths
  readonly pending: PendingConsent
  readonly session: SignedInHeader
  /** Whether the client receives refresh tokens (a registered client with offline access). */
  readonly offline: boolean
  /** How long an access token lasts, in words ("1 hour"). */
  readonly accessLifetime: string
  /** The names of the resources the token will be for (RFC 8707), plain text. */
  readonly resources: readonly string[]
}

function resourceList(names: readonly string[]): string {
  if (names.length === 0) return ''
  const items = names.map((name) => `<li>${escapeHtml(name)}</li>`)
  return `<h2 id="resources-heading">Where the access can be used</h2>
<ul aria-labelledby="resources-heading">\n${items.join('\n')}\n</ul>\n`
}

/**
 * The consent page of both flows: who asks (the client's identity, the redirect URI's host or the
 * device's user code), for whom, which scopes in the contract's words, at which resources (by
 * name), for how long; and the two
 * buttons of the `decision` field.
 */
export function consentPage(options: ConsentPageOptions): RouteResult {
  const { pending, session } = options
  const client = describeClient(pending.client, pending.kind)
  const scopes = pending.kind === 'code' ? pending.request.scopes.granted : pending.grant.scopes.granted
  const where =
    pending.kind === 'code'
      ? `<p>After you answer, you will be sent back to <strong>${escapeHtml(redirectHost(pending.request.redirectUri))}</strong>.</p>`
      : `<p>Code from the device: <strong><code>${escapeHtml(pending.grant.userCode)}</code></strong>. Only continue if your device shows this code.</p>`
  const lifetime = options.offline
    ? `It receives an access token that lasts ${options.accessLifetime}, and a refresh token: it can keep renewing access while you are away.`
    : `It receives an access token that lasts ${options.accessLifetime}; then access ends.`
  const detail = client.detail === undefined ? '' : ` (${escapeHtml(client.detail)})`
  // <bdi> isolates the client's name: a right-to-left name cannot reorder the words around it.
  return renderPage({
    paths: options.paths,
    title: 'Allow access?',
    session,
    body: `<div class="warning" role="region" aria-label="Application">
<p>Application: <strong><bdi>${escapeHtml(client.name)}</bdi></strong>${detail}</p>
${unverifiedNote(pending.client)}${where}
</div>
<p>It asks to act as <strong>${escapeHtml(session.handle)}</strong> with these scopes:</p>
<h2 id="scopes-heading">Requested scopes</h2>
${scopeList(scopes)}
${resourceList(options.resources)}<p>${escapeHtml(lifetime)}</p>
<form method="post" action="${pageHref(options.paths, CONSENT_PATH)}" aria-label="Your decision">
  ${csrfField(session)}
  <input type="hidden" name="consent" value="${escapeHtml(pending.id)}">
  <div class="row">
    <button type="submit" name="decision" value="approve">Allow access</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </div>
</form>`,
  })
}

/** What the device verification page needs. */
export interface DevicePageOptions {
  /** The pages' addresses: the form posts to {@link DEVICE_PATH} under the prefix. */
  readonly paths: PagePaths
  /** The CSRF token of the form: the session's, or the anonymous sign-in token. */
  readonly csrfToken: string
  readonly session: SignedInHeader | undefined
  /** The code to fill in (from `verification_uri_complete` or the previous entry). */
  readonly userCode?: string | undefined
  /** A message about the previous entry. Plain text. */
  readonly error?: string | undefined
  readonly status?: number
  readonly headers?: ResponseHeaders
}

/** The device verification page: one field, `user_code`. */
export function devicePage(options: DevicePageOptions): RouteResult {
  const error = options.error
  const described = error === undefined ? '' : ' aria-describedby="user-code-error" aria-invalid="true"'
  return renderPage({
    paths: options.paths,
    title: 'Connect a device',
    status: options.status ?? 200,
    session: options.session,
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    body: `${error === undefined ? '' : `<div class="error" role="alert" id="user-code-error"><p>${escapeHtml(error)}</p></div>`}
<p>Enter the code shown on your device. Capitals, spaces and dashes do not matter.</p>
<form method="post" action="${pageHref(options.paths, DEVICE_PATH)}">
  ${csrfInput(options.csrfToken)}
  <div class="field">
    <label for="user_code">Code from the device</label>
    <input type="text" id="user_code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required maxlength="64" placeholder="WDJB-MJHT" value="${escapeHtml(options.userCode ?? '')}"${described}>
  </div>
  <button type="submit">Continue</button>
</form>`,
  })
}

/** The last page of the device flow: the decision is recorded, the device will hear it. */
export function deviceDonePage(
  paths: PagePaths,
  decision: 'approved' | 'denied',
  session: SignedInHeader,
): RouteResult {
  const approved = decision === 'approved'
  return renderPage({
    paths,
    title: approved ? 'Device connected' : 'Access denied',
    session,
    body: `<div class="notice" role="status"><p>${
      approved
        ? 'You allowed the device to access your account. It will continue on its own in a few seconds.'
        : 'You denied access. The device was not given access to your account.'
    }</p></div>
<p>You can close this window.</p>`,
  })
}

/**
 * A consent that can no longer be answered (expired, answered already, or not this session's), or
 * a device grant that was decided or expired in the meantime.
 */
export function consentGonePage(
  paths: PagePaths,
  session: SignedInHeader | undefined,
  message: string,
  status = 400,
): RouteResult {
  return renderPage({
    paths,
    title: 'This request is no longer valid',
    status,
    session,
    body: `<div class="error" role="alert"><p>${escapeHtml(message)}</p></div>
<p>Start again from the application or device.</p>`,
  })
}
