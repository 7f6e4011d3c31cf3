/**
 * Workspace settings: the signed-in user's API tokens (docs/workspace-settings.md), on the core's token
 * lifecycle (`createApiToken`, `renameToken`, `rescopeToken`, `revokeToken`) and the app's token
 * store, which the API reads on every request — so a revocation or a scope change applies to the
 * token's very next API call.
 *
 * | route | fields | answer |
 * | --- | --- | --- |
 * | `GET /settings/tokens` | | the list (name, scopes, hint, created, last used and from where, expiry, expiring soon), recently revoked tokens with the reason, and the create form |
 * | `POST /settings/tokens` | `name`, `scopes`…, `lifetime`, `expiresAt` | 200: the value, once; 400: the form again |
 * | `GET /settings/tokens/:id` | | the edit form |
 * | `POST /settings/tokens/:id` | `name`, `scopes`… | 303 to the list; 400: the form again |
 * | `GET /settings/tokens/:id/revoke` | | the confirmation |
 * | `POST /settings/tokens/:id/revoke` | `confirm=yes` | 303 to the list; without `confirm`: the confirmation |
 * | `GET /settings/tokens/:id/regenerate` | | the confirmation, with the overlap to choose |
 * | `POST /settings/tokens/:id/regenerate` | `overlap` (`none`, `1h`, `24h`, `7d`) | 200: the new value, once; 400: the confirmation again |
 *
 * With `--max-token-lifetime DAYS` the create form offers no lifetime longer than the cap and no
 * "no expiry", and a longer request is refused with a message naming the cap. Regenerating keeps the
 * token's id, name, scopes and expiry policy (rotateToken); the previous value keeps working for the
 * chosen overlap, and revoking the token ends both. Regenerate is offered where the token store can
 * rotate (`TokenStore.rotate`); it is refused (409) for an expired token, and under the cap for one
 * whose new value would outlive the cap.
 *
 * Every change is limited per network and per signed-in user (limits/abuse-limits.ts:
 * `settingsWrites`, `settingsWritesPerUser`): past a limit the POST changes nothing and answers 429
 * with `Retry-After` and a page saying how long to wait. A user holds at most `--max-live-tokens`
 * live API tokens (100 by default); creating one more is refused with a message naming the bound.
 *
 * Every POST carries `csrf_token` (else 403). Signed out: a 303 to sign-in. A token that is not the
 * user's own unrevoked API token — another user's, an OAuth token, a revoked or unknown id — is 404.
 * Over plain HTTP from another machine every route is the 403 page of https-only.ts, signed in or not.
 */
import {
  checkTokenLifetime,
  createApiToken,
  InvalidArgumentError,
  isRecentlyRevoked,
  isTokenRetained,
  renameToken,
  rescopeToken,
  revokeToken,
  rotateToken,
  TokenLifetimeError,
  type TokenRecord,
  type TokenStore,
  TokenStoreError,
} from 'data-access-policy'
import { type AbuseGuard, DEFAULT_MAX_LIVE_TOKENS, waitInWords } from '../limits/abuse-limits.js'
import { readForm } from '../request/form.js'
import { redirect } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult, RouteSet } from '../routes/route-set.js'
import { messagePage } from './html.js'
import { httpsOnly } from './https-only.js'
import type { PagePaths } from './page-paths.js'
import type { Session } from './sessions.js'
import { type FieldErrors, readNewToken, readTokenChanges, type TokenFormValues } from './token-form.js'
import {
  createdTokenPage,
  editTokenPage,
  OVERLAPS,
  regenerateConfirmPage,
  revokeConfirmPage,
  TOKENS_PATH,
  tokenListPage,
} from './token-settings-pages.js'
import type { WebContext } from './web-context.js'

/** What the token pages work on. */
export interface TokenSettingsContext {
  readonly web: WebContext
  readonly tokens: TokenStore
  /** `--max-token-lifetime`, in days; absent: no cap. */
  readonly maxLifetimeDays?: number | undefined
  /** `--max-live-tokens`: live API tokens one user may hold; {@link DEFAULT_MAX_LIVE_TOKENS} by default. */
  readonly maxLiveTokens?: number | undefined
  /**
   * Counts every change (create, rename, rescope, regenerate, revoke) per network and per user;
   * absent: unlimited (tests of other things).
   */
  readonly guard?: AbuseGuard | undefined
}

/**
 * The 429 page of a change over a limit, or undefined to go on. The network's count comes first, so
 * that a network already refused creates no key for its users.
 */
async function overLimit(
  paths: PagePaths,
  guard: AbuseGuard | undefined,
  request: ApiRequest,
  session: Session,
): Promise<RouteResult | undefined> {
  if (guard === undefined) return undefined
  const network = await guard.hit('settingsWrites', request.clientAddress)
  const user = network.ok ? await guard.hitShared('settingsWritesPerUser', session.handle) : network
  if (user.ok) return undefined
  const who = network.ok ? 'by your account' : 'from your network'
  return messagePage(
    paths,
    429,
    'Too many changes',
    `Too many changes to API tokens were made ${who} in the last minutes. Nothing was changed. Try again in ${waitInWords(user.retryAfter)}.`,
    session,
    { 'retry-after': String(user.retryAfter) },
  )
}

// A change that took effect but that the store's replicas have not confirmed yet (a Redis Cluster
// shard that lost its replica in a failover): done, and said to be pending, never a failure.
function pending(receipt: Awaited<ReturnType<TokenStore['update']>>): string {
  return receipt?.replicated === false ? ' (replication pending)' : ''
}

// The context with its defaults applied, as every handler below reads it.
interface Settings {
  readonly web: WebContext
  readonly paths: PagePaths
  readonly tokens: TokenStore
  readonly maxLifetimeDays: number | undefined
  readonly maxLive: number
  readonly guard: AbuseGuard | undefined
  readonly canRotate: boolean
  readonly pageOptions: { readonly maxLifetimeDays: number | undefined; readonly canRotate: boolean }
}

type SignedHandler = (settings: Settings, request: ApiRequest, session: Session) => Promise<RouteResult>
type FormHandler = (
  settings: Settings,
  request: ApiRequest,
  session: Session,
  form: URLSearchParams,
) => Promise<RouteResult>

function settingsOf(context: TokenSettingsContext): Settings {
  const { web, tokens, maxLifetimeDays, guard } = context
  const canRotate = typeof tokens.rotate === 'function'
  return {
    web,
    paths: web.paths,
    tokens,
    maxLifetimeDays,
    maxLive: context.maxLiveTokens ?? DEFAULT_MAX_LIVE_TOKENS,
    guard,
    canRotate,
    pageOptions: { maxLifetimeDays, canRotate },
  }
}

// What the list shows and names are unique among: the user's API tokens that are not revoked
// (OAuth tokens are sessions of applications, not managed here).
// An expired token is listed (as expired) until its end, as long as the store keeps it.
// Tokens that still authenticate: `listed` has left out the revoked ones.
function liveCount(tokens: readonly TokenRecord[], now: number): number {
  return tokens.filter((token) => token.expiresAt === undefined || now < token.expiresAt).length
}

async function listed(settings: Settings, handle: string): Promise<readonly TokenRecord[]> {
  const now = settings.web.now()
  return (await settings.tokens.listByOwner(handle)).filter(
    (token) => token.kind === 'api' && token.revokedAt === undefined && isTokenRetained(token, now),
  )
}

async function ownToken(
  settings: Settings,
  request: ApiRequest,
  session: Session,
): Promise<TokenRecord | undefined> {
  const id = request.params.id
  const token = id === undefined ? undefined : await settings.tokens.findById(id)
  if (token === undefined || token.userId !== session.handle) return undefined
  return token.kind === 'api' && token.revokedAt === undefined ? token : undefined
}

function notFound(settings: Settings, session: Session): RouteResult {
  return messagePage(settings.paths, 404, 'Not found', 'There is no such token among yours.', session)
}

// Signed-in pages: GETs come back here after sign-in; POSTs go to the list, since a form post
// cannot be replayed.
function page(settings: Settings, handler: SignedHandler): Route['handle'] {
  return async (request: ApiRequest): Promise<RouteResult> => {
    const target = request.method === 'GET' ? request.target : TOKENS_PATH
    const check = await settings.web.requireSignIn(request, target)
    return check.ok ? handler(settings, request, check.session) : check.result
  }
}

// Signed-in forms: the CSRF token is checked before anything else is looked at, then the limits
// on changes, before the store is read or written.
function form(settings: Settings, handler: FormHandler): Route['handle'] {
  return page(settings, async (_settings, request) => {
    const fields = await readForm(request)
    const check = await settings.web.checkCsrf(request, fields)
    if (!check.ok) return check.result
    const limited = await overLimit(settings.paths, settings.guard, request, check.session)
    return limited ?? handler(settings, request, check.session, fields)
  })
}

// API tokens revoked in the last 30 days (the library's rule: the stores keep them that long),
// newest first, for the list to say why.
async function recentlyRevoked(
  settings: Settings,
  handle: string,
  now: number,
): Promise<readonly TokenRecord[]> {
  return (await settings.tokens.listByOwner(handle))
    .filter((token) => token.kind === 'api' && isRecentlyRevoked(token, now))
    .sort((a, b) => b.revokedAt! - a.revokedAt!)
}

async function showList(settings: Settings, _request: ApiRequest, session: Session): Promise<RouteResult> {
  const { web } = settings
  const now = web.now()
  return tokenListPage({
    paths: settings.paths,
    session,
    tokens: await listed(settings, session.handle),
    revoked: await recentlyRevoked(settings, session.handle, now),
    now,
    notice: await web.sessions.takeNotice(session.id),
    ...settings.pageOptions,
  })
}

async function createToken(
  settings: Settings,
  _request: ApiRequest,
  session: Session,
  fields: URLSearchParams,
): Promise<RouteResult> {
  const { maxLifetimeDays, maxLive } = settings
  const now = settings.web.now()
  const existing = await listed(settings, session.handle)
  const read = readNewToken(fields, existing, now, maxLifetimeDays)
  // The list again, with the form's problems (400).
  const again = async (form: { readonly values: TokenFormValues; readonly errors: FieldErrors }) =>
    tokenListPage({
      paths: settings.paths,
      session,
      tokens: existing,
      revoked: await recentlyRevoked(settings, session.handle, now),
      now,
      form,
      ...settings.pageOptions,
    })
  const typed = {
    name: fields.get('name') ?? '',
    lifetime: fields.get('lifetime') ?? '',
    expiresAt: fields.get('expiresAt') ?? '',
  }
  const overBound = (live: number) => ({
    name: `Name: you have ${live} live tokens, and one account may hold at most ${maxLive}; revoke one before creating another.`,
  })
  const live = liveCount(existing, now)
  if (!read.ok || live >= maxLive) {
    const errors = read.ok ? overBound(live) : read.errors
    const values = read.ok ? { ...typed, name: read.value.name, scopes: read.value.scopes } : read.values
    return again({ values, errors })
  }
  const { name, scopes, expiresAt, lifetimeDays } = read.value
  let created: ReturnType<typeof createApiToken>
  try {
    created = createApiToken({
      userId: session.handle,
      name,
      scopes,
      now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
      ...(lifetimeDays === undefined ? {} : { lifetimeDays }),
      ...(maxLifetimeDays === undefined ? {} : { maxLifetimeDays }),
    })
  } catch (error) {
    // The form already applies the cap; the library's check is the one that cannot be skipped.
    if (!(error instanceof TokenLifetimeError)) throw error
    return again({ values: { ...typed, scopes }, errors: { lifetime: `Expiration: ${error.message}.` } })
  }
  const { record, value } = created
  await settings.tokens.save(record)
  // Creates running side by side each saw room for one more: one that finds the bound passed once
  // its token is saved takes that token back. Two racing may both step back (a refusal to retry),
  // never leave the user over the bound.
  const after = liveCount(await listed(settings, session.handle), now)
  if (after > maxLive) {
    await settings.tokens.update(revokeToken(record, now, 'created past the live-token bound'))
    return again({ values: { ...typed, scopes }, errors: overBound(after - 1) })
  }
  // The value goes into this one answer and nowhere else: not the session, not a log, not a redirect.
  return createdTokenPage(settings.paths, session, record, value)
}

async function showEditForm(settings: Settings, request: ApiRequest, session: Session): Promise<RouteResult> {
  const token = await ownToken(settings, request, session)
  return token === undefined
    ? notFound(settings, session)
    : editTokenPage(settings.paths, session, token, undefined, settings.pageOptions)
}

async function saveChanges(
  settings: Settings,
  request: ApiRequest,
  session: Session,
  fields: URLSearchParams,
): Promise<RouteResult> {
  const { paths, pageOptions } = settings
  const token = await ownToken(settings, request, session)
  if (token === undefined) return notFound(settings, session)
  const read = readTokenChanges(fields, token, await listed(settings, session.handle))
  if (!read.ok) {
    return editTokenPage(paths, session, token, { values: read.values, errors: read.errors }, pageOptions)
  }
  let changed = token
  if (read.value.name !== undefined) changed = renameToken(changed, read.value.name)
  if (read.value.scopes !== undefined) changed = rescopeToken(changed, read.value.scopes)
  const receipt = await settings.tokens.update(changed)
  await settings.web.sessions.setNotice(
    session.id,
    `Saved “${changed.name}”: scopes ${changed.scopes.join(', ')}${pending(receipt)}.`,
  )
  return redirect(paths.to(TOKENS_PATH))
}

async function showRevokeConfirmation(
  settings: Settings,
  request: ApiRequest,
  session: Session,
): Promise<RouteResult> {
  const token = await ownToken(settings, request, session)
  return token === undefined ? notFound(settings, session) : revokeConfirmPage(settings.paths, session, token)
}

async function revokeChosenToken(
  settings: Settings,
  request: ApiRequest,
  session: Session,
  fields: URLSearchParams,
): Promise<RouteResult> {
  const { web, paths } = settings
  const token = await ownToken(settings, request, session)
  if (token === undefined) return notFound(settings, session)
  if (fields.get('confirm') !== 'yes') return revokeConfirmPage(paths, session, token)
  const receipt = await settings.tokens.update(revokeToken(token, web.now()))
  await web.sessions.setNotice(
    session.id,
    `Revoked “${token.name}”${pending(receipt)}. Requests with it are refused from now on.`,
  )
  return redirect(paths.to(TOKENS_PATH))
}

async function showRegenerateConfirmation(
  settings: Settings,
  request: ApiRequest,
  session: Session,
): Promise<RouteResult> {
  const token = await ownToken(settings, request, session)
  if (token === undefined || !settings.canRotate) return notFound(settings, session)
  return regenerateConfirmPage(settings.paths, session, token, settings.web.now())
}

async function regenerateToken(
  settings: Settings,
  request: ApiRequest,
  session: Session,
  fields: URLSearchParams,
): Promise<RouteResult> {
  const { paths, tokens } = settings
  const token = await ownToken(settings, request, session)
  if (token === undefined || tokens.rotate === undefined) return notFound(settings, session)
  const now = settings.web.now()
  const choice = fields.getAll('overlap')
  const overlap = choice.length === 1 ? OVERLAPS.find((each) => each.value === choice[0]) : undefined
  if (overlap === undefined) {
    return regenerateConfirmPage(
      paths,
      session,
      token,
      now,
      'Overlap: choose how long the current value keeps working.',
    )
  }
  let rotated: ReturnType<typeof rotateToken>
  try {
    rotated = rotateToken(token, { overlapMs: overlap.ms, now })
    // A token from before the cap (no expiry, or a later one) does not get a new value that
    // outlives it: the owner creates a token within the cap instead.
    checkTokenLifetime(rotated.record.expiresAt, now, settings.maxLifetimeDays)
    await tokens.rotate(rotated.record)
  } catch (error) {
    const refused = await regenerationRefusal(settings, session, token, error)
    if (refused !== undefined) return refused
    throw error
  }
  // As at creation: the value goes into this one answer and nowhere else.
  return createdTokenPage(paths, session, rotated.record, rotated.value, { regeneratedAt: now })
}

// The 409 page of a regeneration the user can act on, or undefined for the server's own failure.
async function regenerationRefusal(
  settings: Settings,
  session: Session,
  token: TokenRecord,
  error: unknown,
): Promise<RouteResult | undefined> {
  const refuse = (message: string): RouteResult =>
    messagePage(settings.paths, 409, 'Cannot regenerate', message, session)
  if (error instanceof TokenLifetimeError) {
    return refuse(`${error.message}. This token would outlive the cap: create a new token instead.`)
  }
  if (error instanceof InvalidArgumentError) {
    return refuse('This token has expired: create a new token instead.')
  }
  // A refusal because the token changed meanwhile (regenerated or revoked in another tab or
  // instance) is the user's news; any other store failure is the server's (503).
  if (error instanceof TokenStoreError) {
    const current = await settings.tokens.findById(token.id)
    if (current !== undefined && (current.hash !== token.hash || current.revokedAt !== undefined)) {
      return refuse('The token changed meanwhile. Reload the list and try again.')
    }
  }
  return undefined
}

/**
 * Builds the token settings route set.
 *
 * @example
 * const routes = tokenSettingsRoutes({ web: app.web, tokens: app.tokens })
 */
export function tokenSettingsRoutes(context: TokenSettingsContext): RouteSet {
  const settings = settingsOf(context)
  const routes: Route[] = [
    { method: 'GET', path: TOKENS_PATH, handle: page(settings, showList) },
    { method: 'POST', path: TOKENS_PATH, handle: form(settings, createToken) },
    { method: 'GET', path: `${TOKENS_PATH}/:id`, handle: page(settings, showEditForm) },
    { method: 'POST', path: `${TOKENS_PATH}/:id`, handle: form(settings, saveChanges) },
    { method: 'GET', path: `${TOKENS_PATH}/:id/revoke`, handle: page(settings, showRevokeConfirmation) },
    { method: 'POST', path: `${TOKENS_PATH}/:id/revoke`, handle: form(settings, revokeChosenToken) },
    {
      method: 'GET',
      path: `${TOKENS_PATH}/:id/regenerate`,
      handle: page(settings, showRegenerateConfirmation),
    },
    { method: 'POST', path: `${TOKENS_PATH}/:id/regenerate`, handle: form(settings, regenerateToken) },
  ]
  // New token values and session cookies never cross a network in the clear.
  return { name: 'token-settings', routes: routes.map(httpsOnly(settings.paths)) }
}
