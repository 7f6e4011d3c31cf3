/**
 * The workspace settings pages for API tokens (docs/workspace-settings.md; lifetimes, rotation and
 * leak revocations in docs/tokens.md): the list with the create form
 * and the recently revoked tokens, the one-time value page, the edit page, and the revoke and
 * regenerate confirmations. Rendering only; token-settings.ts decides which to show. A token's
 * value appears on exactly one page, {@link createdTokenPage}, which nothing stores.
 */
import {
  isExpiringSoon,
  REVOKED_DISPLAY_MS,
  SCOPE_DESCRIPTIONS,
  SCOPES,
  type Scope,
  type TokenRecord,
} from 'data-access-policy'
import type { RouteResult } from '../routes/route-set.js'
import { csrfField } from './csrf.js'
import { DAY_MS } from './days.js'
import { escapeHtml } from './escape-html.js'
import { pageHref, renderPage } from './html.js'
import type { PagePaths } from './page-paths.js'
import type { Session } from './sessions.js'
import {
  defaultLifetime,
  expiryDateBounds,
  type FieldErrors,
  lifetimeChoices,
  type TokenField,
  type TokenFormValues,
} from './token-form.js'

/** Where the token pages live. */
export const TOKENS_PATH = '/settings/tokens'

/** The route path of a token's edit page (handed out with {@link PagePaths.to}). */
export function tokenPath(token: Pick<TokenRecord, 'id'>): string {
  return `${TOKENS_PATH}/${encodeURIComponent(token.id)}`
}

function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString()
  return `<time class="nowrap" datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`
}

function scopeList(scopes: readonly Scope[]): string {
  return scopes.map((scope) => `<code>${scope}</code>`).join(', ')
}

function expiryCell(token: TokenRecord, now: number): string {
  if (token.expiresAt === undefined) return 'Never'
  if (token.expiresAt <= now) return `<strong>Expired</strong> ${formatInstant(token.expiresAt)}`
  if (isExpiringSoon(token, now)) {
    return `<strong class="expiring">Expires soon</strong><br>${formatInstant(token.expiresAt)}`
  }
  return formatInstant(token.expiresAt)
}

function lastUsedCell(token: TokenRecord): string {
  if (token.lastUsedAt === undefined) return 'Never'
  const from =
    token.lastUsedFrom === undefined
      ? ''
      : `<br><span class="hint">from <code>${escapeHtml(token.lastUsedFrom)}</code></span>`
  return `${formatInstant(token.lastUsedAt)}${from}`
}

/** What the token pages offer besides the basics: the lifetime cap and regeneration. */
export interface TokenPageOptions {
  /** `--max-token-lifetime`, in days; absent: no cap. */
  readonly maxLifetimeDays?: number | undefined
  /** Whether the token store can rotate, so that "Regenerate" is offered. */
  readonly canRotate?: boolean
}

/** The overlaps "Regenerate" offers: how long the current value keeps working. */
export const OVERLAPS = [
  { value: 'none', label: 'None: the current value stops working now', ms: 0 },
  { value: '1h', label: '1 hour', ms: 3_600_000 },
  { value: '24h', label: '24 hours', ms: 86_400_000 },
  { value: '7d', label: '7 days', ms: 7 * 86_400_000 },
] as const

const LIFETIME_LABELS: Readonly<Record<string, string>> = {
  date: 'Custom date (below)',
  none: 'No expiry',
}

function lifetimeField(
  values: TokenFormValues,
  errors: FieldErrors,
  maxLifetimeDays: number | undefined,
  now: number,
): string {
  const bounds = expiryDateBounds(now, maxLifetimeDays)
  const range = ` min="${bounds.min}"${bounds.max === undefined ? '' : ` max="${bounds.max}"`}`
  const chosen = values.lifetime === '' ? defaultLifetime(maxLifetimeDays) : values.lifetime
  const options = lifetimeChoices(maxLifetimeDays)
    .map((choice) => {
      const label = LIFETIME_LABELS[choice] ?? `${choice} days`
      return `<option value="${choice}"${choice === chosen ? ' selected' : ''}>${label}</option>`
    })
    .join('')
  const cap =
    maxLifetimeDays === undefined
      ? 'Choose “No expiry” only for a token whose use you watch.'
      : `This server caps token lifetimes at ${maxLifetimeDays} days: every token must expire within that time.`
  return `<div class="field">
    <label for="new-lifetime">Expiration</label>
    ${fieldError(errors, 'lifetime')}
    <select id="new-lifetime" name="lifetime"${invalidAttributes(errors, 'lifetime', 'new-lifetime-hint')}>${options}</select>
    <p class="hint" id="new-lifetime-hint">A token lifetime counts from its creation and starts again each time it is regenerated. ${cap}</p>
  </div>
  <div class="field">
    <label for="new-expiresAt">Custom date</label>
    ${fieldError(errors, 'expiresAt')}
    <input type="date" id="new-expiresAt" name="expiresAt"${range} value="${escapeHtml(values.expiresAt)}"${invalidAttributes(errors, 'expiresAt', 'new-expiresAt-hint')}>
    <p class="hint" id="new-expiresAt-hint">With “Custom date”: the token stops working at 00:00 UTC on this date.</p>
  </div>`
}

function errorSummary(errors: FieldErrors): string {
  const messages = Object.values(errors)
  if (messages.length === 0) return ''
  return `<div class="error" role="alert" id="form-errors">
  <p><strong>The token was not saved.</strong></p>
  <ul>${messages.map((message) => `<li>${escapeHtml(message)}</li>`).join('')}</ul>
</div>`
}

function fieldError(errors: FieldErrors, field: TokenField): string {
  const message = errors[field]
  return message === undefined ? '' : `<p class="error-text" id="${field}-error">${escapeHtml(message)}</p>`
}

function invalidAttributes(errors: FieldErrors, field: TokenField, hint?: string): string {
  const described = [hint, errors[field] === undefined ? undefined : `${field}-error`].filter(Boolean)
  const invalid = errors[field] === undefined ? '' : ' aria-invalid="true"'
  return `${described.length === 0 ? '' : ` aria-describedby="${described.join(' ')}"`}${invalid}`
}

function nameField(prefix: string, value: string, errors: FieldErrors): string {
  return `<div class="field">
    <label for="${prefix}-name">Name</label>
    ${fieldError(errors, 'name')}
    <input type="text" id="${prefix}-name" name="name" required maxlength="100" autocomplete="off" value="${escapeHtml(value)}"${invalidAttributes(errors, 'name', `${prefix}-name-hint`)}>
    <p class="hint" id="${prefix}-name-hint">A name that says where the token is used, such as “nightly export”. At most 100 characters.</p>
  </div>`
}

function scopeFields(prefix: string, chosen: readonly Scope[], errors: FieldErrors): string {
  const boxes = SCOPES.map((scope) => {
    const id = `${prefix}-scope-${scope.replace('.', '-')}`
    const hint = `${id}-hint`
    const isPublic = scope === 'public'
    // `public` is always granted: shown checked and disabled, and sent by the hidden field below
    // (a disabled checkbox is never submitted).
    const state = isPublic ? ' checked disabled' : chosen.includes(scope) ? ' checked' : ''
    return `<div class="choice">
      <input type="checkbox" id="${id}" name="scopes" value="${scope}"${state} aria-describedby="${hint}">
      <label for="${id}"><code>${scope}</code>${isPublic ? ' (always included)' : ''}</label>
      <p class="hint" id="${hint}">${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</p>
    </div>`
  }).join('\n')
  return `<fieldset${errors.scopes === undefined ? '' : ' aria-describedby="scopes-error"'}>
    <legend>Scopes</legend>
    <p class="hint">Choose the fewest scopes the token needs.</p>
    ${fieldError(errors, 'scopes')}
    <input type="hidden" name="scopes" value="public">
    ${boxes}
  </fieldset>`
}

/** What the token list page shows. */
export interface TokenListOptions extends TokenPageOptions {
  /** The pages' addresses (page-paths.ts). */
  readonly paths: PagePaths
  readonly session: Session
  /** The user's unrevoked API tokens, oldest first. */
  readonly tokens: readonly TokenRecord[]
  /** The user's recently revoked API tokens, newest first, shown with the reason. */
  readonly revoked?: readonly TokenRecord[]
  readonly now: number
  /** A one-time notice ("Revoked “ci”."), plain text. */
  readonly notice?: string | undefined
  /** The create form's values and problems after a failed attempt (status 400). */
  readonly form?: { readonly values: TokenFormValues; readonly errors: FieldErrors }
}

function revokedRows(revoked: readonly TokenRecord[]): string {
  if (revoked.length === 0) return ''
  const rows = revoked.map(
    (token) => `<tr>
      <th scope="row"><s>${escapeHtml(token.name)}</s></th>
      <td data-label="Hint"><code class="nowrap">${escapeHtml(token.hint)}</code></td>
      <td data-label="Revoked">${formatInstant(token.revokedAt!)}</td>
      <td data-label="Reason">${token.revokedReason === undefined ? 'revoked' : `revoked: ${escapeHtml(token.revokedReason)}`}</td>
    </tr>`,
  )
  return `<h2 id="revoked">Recently revoked</h2>
<table class="stack">
  <caption>Tokens revoked in the last ${REVOKED_DISPLAY_MS / DAY_MS} days, and why. Requests with them are refused.</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Hint</th><th scope="col">Revoked</th><th scope="col">Reason</th></tr></thead>
  <tbody>${rows.join('\n')}</tbody>
</table>`
}

// A token found in public is news the owner must not miss: said at the top, not only in the table.
function leakAlert(revoked: readonly TokenRecord[]): string {
  const leaked = revoked.filter((token) => token.revokedReason?.startsWith('found public') === true)
  if (leaked.length === 0) return ''
  const names = leaked.map((token) => `“${escapeHtml(token.name)}”`).join(', ')
  return `<div class="warning" role="alert"><p><strong>Revoked because found in public:</strong> ${names}. Create a new token for each, and remove the old value from where it was published.</p></div>`
}

// An expired token cannot be regenerated (rotateToken refuses it): no control for it.
function regenerateLink(paths: PagePaths, token: TokenRecord, name: string, now: number): string {
  if (token.expiresAt !== undefined && token.expiresAt <= now) return ''
  return `<a href="${pageHref(paths, `${tokenPath(token)}/regenerate`)}">Regenerate<span class="visually-hidden"> ${name}</span></a>`
}

function tokenRows(
  paths: PagePaths,
  tokens: readonly TokenRecord[],
  session: Session,
  now: number,
  canRotate: boolean,
): string {
  if (tokens.length === 0) return '<p>You have no API tokens yet. Create one below.</p>'
  const rows = tokens.map((token) => {
    const name = escapeHtml(token.name)
    return `<tr>
      <th scope="row">${name}</th>
      <td data-label="Scopes">${scopeList(token.scopes)}</td>
      <td data-label="Hint"><code class="nowrap">${escapeHtml(token.hint)}</code></td>
      <td data-label="Created">${formatInstant(token.createdAt)}</td>
      <td data-label="Last used">${lastUsedCell(token)}</td>
      <td data-label="Expires">${expiryCell(token, now)}</td>
      <td><div class="actions">
        <a href="${pageHref(paths, tokenPath(token))}">Edit<span class="visually-hidden"> ${name}</span></a>
        ${canRotate ? regenerateLink(paths, token, name, now) : ''}
        <form method="post" action="${pageHref(paths, `${tokenPath(token)}/revoke`)}">${csrfField(session)}
          <button type="submit" class="danger">Revoke<span class="visually-hidden"> ${name}</span></button>
        </form>
      </div></td>
    </tr>`
  })
  return `<table class="stack">
    <caption>Your API tokens. Values are never shown again after creation; the hint is the prefix and the last four characters.</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Hint</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
    <tbody>${rows.join('\n')}</tbody>
  </table>`
}

/**
 * The token list with the create form; status 400 when it shows the create form's problems.
 *
 * @example
 * tokenListPage({ paths: web.paths, session, tokens, now: Date.now() })
 */
export function tokenListPage(options: TokenListOptions): RouteResult {
  const { paths, session, form } = options
  const errors = form?.errors ?? {}
  const values = form?.values ?? { name: '', scopes: ['public'], lifetime: '', expiresAt: '' }
  const revoked = options.revoked ?? []
  const body = `${options.notice === undefined ? '' : `<div class="notice" role="status"><p>${escapeHtml(options.notice)}</p></div>`}
${leakAlert(revoked)}
<p>API tokens let programs and services call the data-access API as you, without a browser. Treat each token like a password.</p>
${tokenRows(paths, options.tokens, session, options.now, options.canRotate === true)}
${revokedRows(revoked)}
<h2 id="create">Create a token</h2>
${errorSummary(errors)}
<form method="post" action="${pageHref(paths, TOKENS_PATH)}" novalidate>
  ${csrfField(session)}
  ${nameField('new', values.name, errors)}
  ${scopeFields('new', values.scopes, errors)}
  ${lifetimeField(values, errors, options.maxLifetimeDays, options.now)}
  <button type="submit">Create token</button>
</form>`
  return renderPage({
    paths,
    title: 'API tokens',
    session,
    status: form === undefined ? 200 : 400,
    body,
  })
}

// Copies the value; where the clipboard is not available it leaves the text selected for Ctrl+C.
const COPY_SCRIPT = `(function () {
  var button = document.getElementById('copy-token');
  var field = document.getElementById('token-value');
  var status = document.getElementById('copy-status');
  function selected() { status.textContent = 'The value is selected: press Ctrl+C (Cmd+C on a Mac) to copy it.'; }
  function copied() { status.textContent = 'Copied to the clipboard.'; }
  button.addEventListener('click', function () {
    field.focus();
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(copied, function () { (document.execCommand && document.execCommand('copy')) ? copied() : selected(); });
    } else {
      (document.execCommand && document.execCommand('copy')) ? copied() : selected();
    }
  });
  field.addEventListener('focus', function () { field.select(); });
})();`

/**
 * The one page that shows a token's value, right after creation: a copy button and the warning
 * that it will not be shown again. Sent with `Cache-Control: no-store` like every page.
 *
 * @example
 * createdTokenPage(web.paths, session, record, value)
 */
export function createdTokenPage(
  paths: PagePaths,
  session: Session,
  token: TokenRecord,
  value: string,
  regenerated?: { readonly regeneratedAt: number },
): RouteResult {
  const previous =
    regenerated === undefined || token.previousHashExpiresAt === undefined
      ? ''
      : token.previousHashExpiresAt > regenerated.regeneratedAt
        ? `<p>The previous value keeps working until ${formatInstant(token.previousHashExpiresAt)}: deploy the new one before then. Revoking the token ends both at once.</p>`
        : '<p>The previous value no longer works.</p>'
  const body = `${previous}<div class="warning" role="alert">
  <p><strong>Copy this token now. It will not be shown again.</strong></p>
  <p>It works like a password: keep it in a secret manager or an environment variable such as <code>SERVICE_API_TOKEN</code>. Do not commit it to source control and do not share it. If it is lost or exposed, revoke it and create a new one.</p>
</div>
<div class="field">
  <label for="token-value">Token value</label>
  <div class="secret">
    <input type="text" id="token-value" readonly value="${escapeHtml(value)}" autocomplete="off" spellcheck="false" aria-describedby="copy-hint">
    <button type="button" id="copy-token">Copy</button>
  </div>
  <p class="hint" id="copy-hint">The button copies the value; you can also select the text and copy it yourself.</p>
  <p class="hint" id="copy-status" role="status" aria-live="polite"></p>
</div>
<table>
  <caption>The new token</caption>
  <tbody>
    <tr><th scope="row">Name</th><td>${escapeHtml(token.name)}</td></tr>
    <tr><th scope="row">Scopes</th><td>${scopeList(token.scopes)}</td></tr>
    <tr><th scope="row">Hint</th><td><code>${escapeHtml(token.hint)}</code></td></tr>
    <tr><th scope="row">Expires</th><td>${token.expiresAt === undefined ? 'Never' : formatInstant(token.expiresAt)}</td></tr>
  </tbody>
</table>
<p><a href="${pageHref(paths, TOKENS_PATH)}">I have copied it — back to API tokens</a></p>`
  return renderPage({
    paths,
    title: regenerated === undefined ? 'Your new API token' : 'Your regenerated API token',
    heading: `Token “${token.name}” ${regenerated === undefined ? 'created' : 'regenerated'}`,
    session,
    body,
    scripts: [COPY_SCRIPT],
  })
}

/**
 * The edit page of a token: name and scopes; status 400 when it shows problems.
 *
 * @example
 * editTokenPage(web.paths, session, token)
 */
export function editTokenPage(
  paths: PagePaths,
  session: Session,
  token: TokenRecord,
  form?: { readonly values: TokenFormValues; readonly errors: FieldErrors },
  options: TokenPageOptions = {},
): RouteResult {
  const errors = form?.errors ?? {}
  const values = form?.values ?? { name: token.name, scopes: token.scopes, lifetime: '', expiresAt: '' }
  const regenerate =
    options.canRotate === true
      ? `<h2>Regenerate</h2>
<p>Issue a new value for this token (same name, scopes and expiry policy), and let the current one keep working for a while so that the services using it can switch without an outage.</p>
<p><a href="${pageHref(paths, `${tokenPath(token)}/regenerate`)}">Regenerate “${escapeHtml(token.name)}”…</a></p>`
      : ''
  const body = `${errorSummary(errors)}
<p>Token <code>${escapeHtml(token.hint)}</code>, created ${formatInstant(token.createdAt)}. Changes apply from the token's next request.</p>
<form method="post" action="${pageHref(paths, tokenPath(token))}" novalidate>
  ${csrfField(session)}
  ${nameField('edit', values.name, errors)}
  ${scopeFields('edit', values.scopes, errors)}
  <div class="row">
    <button type="submit">Save changes</button>
    <a href="${pageHref(paths, TOKENS_PATH)}">Cancel</a>
  </div>
</form>
${regenerate}
<h2>Revoke</h2>
<p>Revoke the token if it is lost, unused or compromised.</p>
<form method="post" action="${pageHref(paths, `${tokenPath(token)}/revoke`)}">${csrfField(session)}
  <button type="submit" class="danger">Revoke “${escapeHtml(token.name)}”…</button>
</form>`
  return renderPage({
    paths,
    title: 'Edit API token',
    heading: `Edit “${token.name}”`,
    session,
    status: form === undefined ? 200 : 400,
    body,
  })
}

/**
 * The revoke confirmation: its form posts `confirm=yes` to `/settings/tokens/:id/revoke`.
 *
 * @example
 * revokeConfirmPage(web.paths, session, token)
 */
export function revokeConfirmPage(paths: PagePaths, session: Session, token: TokenRecord): RouteResult {
  const name = escapeHtml(token.name)
  const body = `<p>Programs using <strong>${name}</strong> (<code>${escapeHtml(token.hint)}</code>) will be refused from their next request. This cannot be undone.</p>
<form method="post" action="${pageHref(paths, `${tokenPath(token)}/revoke`)}">
  ${csrfField(session)}
  <input type="hidden" name="confirm" value="yes">
  <div class="row">
    <button type="submit" class="danger">Revoke “${name}”</button>
    <a href="${pageHref(paths, TOKENS_PATH)}">Cancel</a>
  </div>
</form>`
  return renderPage({ paths, title: 'Revoke API token', heading: `Revoke “${token.name}”?`, session, body })
}

/**
 * The regenerate confirmation: the overlap to choose (none, 1 hour, 24 hours, 7 days; 24 hours
 * preselected), posted with `confirm=yes` to `/settings/tokens/:id/regenerate`; status 400 with
 * `problem` shown.
 *
 * @example
 * regenerateConfirmPage(web.paths, session, token, Date.now())
 */
export function regenerateConfirmPage(
  paths: PagePaths,
  session: Session,
  token: TokenRecord,
  now: number,
  problem?: string,
): RouteResult {
  const name = escapeHtml(token.name)
  const choices = OVERLAPS.map(
    (overlap) => `<div class="choice">
      <input type="radio" id="overlap-${overlap.value}" name="overlap" value="${overlap.value}"${overlap.value === '24h' ? ' checked' : ''}>
      <label for="overlap-${overlap.value}">${overlap.label}</label>
    </div>`,
  ).join('\n')
  const expiry =
    token.lifetimeDays !== undefined
      ? `The new value expires ${token.lifetimeDays} days from now, like the token's lifetime.`
      : token.expiresAt !== undefined
        ? `The token still expires ${formatInstant(token.expiresAt)}.`
        : 'The token still never expires.'
  const body = `${problem === undefined ? '' : `<div class="error" role="alert"><p>${escapeHtml(problem)}</p></div>`}
<p>A new value replaces <code>${escapeHtml(token.hint)}</code> for <strong>${name}</strong>: same name and scopes. ${expiry} The new value is shown once.${now < (token.previousHashExpiresAt ?? 0) ? ' The value replaced by the last regeneration stops working now.' : ''}</p>
<form method="post" action="${pageHref(paths, `${tokenPath(token)}/regenerate`)}">
  ${csrfField(session)}
  <fieldset>
    <legend>How long should the current value keep working?</legend>
    ${choices}
  </fieldset>
  <div class="row">
    <button type="submit">Regenerate “${name}”</button>
    <a href="${pageHref(paths, TOKENS_PATH)}">Cancel</a>
  </div>
</form>`
  return renderPage({
    paths,
    title: 'Regenerate API token',
    heading: `Regenerate “${token.name}”?`,
    session,
    status: problem === undefined ? 200 : 400,
    body,
  })
}
