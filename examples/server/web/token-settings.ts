/**
 * Workspace settings: the signed-in user's API tokens (design §9, issue 8), on the core's token
 * lifecycle (`createApiToken`, `renameToken`, `rescopeToken`, `revokeToken`) and the app's token
 * store, which the API reads on every request — so a revocation or a scope change applies to the
 * token's very next API call.
 *
 * | route | fields | answer |
 * | --- | --- | --- |
 * | `GET /settings/tokens` | | the list (name, scopes, hint, created, last used, expiry) and the create form |
 * | `POST /settings/tokens` | `name`, `scopes`…, `expiresAt` | 200: the value, once; 400: the form again |
 * | `GET /settings/tokens/:id` | | the edit form |
 * | `POST /settings/tokens/:id` | `name`, `scopes`… | 303 to the list; 400: the form again |
 * | `GET /settings/tokens/:id/revoke` | | the confirmation |
 * | `POST /settings/tokens/:id/revoke` | `confirm=yes` | 303 to the list; without `confirm`: the confirmation |
 *
 * Every POST carries `csrf_token` (else 403). Signed out: a 303 to sign-in. A token that is not the
 * user's own unrevoked API token — another user's, an OAuth token, a revoked or unknown id — is 404.
 * Over plain HTTP from another machine every route is the 403 page of https-only.ts, signed in or not.
 */
import {
  createApiToken,
  renameToken,
  rescopeToken,
  revokeToken,
  type TokenRecord,
  type TokenStore,
} from '../../../src/index.js'
import { readForm } from '../request/form.js'
import { redirect } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult, RouteSet } from '../routes/route-set.js'
import { messagePage } from './html.js'
import { httpsOnly } from './https-only.js'
import type { Session } from './sessions.js'
import { readNewToken, readTokenChanges } from './token-form.js'
import {
  createdTokenPage,
  editTokenPage,
  revokeConfirmPage,
  TOKENS_PATH,
  tokenListPage,
} from './token-settings-pages.js'
import type { WebContext } from './web-context.js'

/** What the token pages work on. */
export interface TokenSettingsContext {
  readonly web: WebContext
  readonly tokens: TokenStore
}

/** Unrevoked API tokens a user may hold at once; past it, creating one asks to revoke one first. */
export const MAX_TOKENS_PER_USER = 100

type Signed = (request: ApiRequest, session: Session) => Promise<RouteResult>

// A change that took effect but that the store's replicas have not confirmed yet (a Redis Cluster
// shard that lost its replica in a failover): done, and said to be pending, never a failure.
function pending(receipt: Awaited<ReturnType<TokenStore['update']>>): string {
  return receipt?.replicated === false ? ' (replication pending)' : ''
}

/**
 * Builds the token settings route set.
 *
 * @example
 * const routes = tokenSettingsRoutes({ web: app.web, tokens: app.tokens })
 */
export function tokenSettingsRoutes(context: TokenSettingsContext): RouteSet {
  const { web, tokens } = context

  // What the list shows and names are unique among: the user's API tokens that are not revoked
  // (OAuth tokens are sessions of applications, not managed here).
  const listed = async (handle: string): Promise<readonly TokenRecord[]> =>
    (await tokens.listByOwner(handle)).filter(
      (token) => token.kind === 'api' && token.revokedAt === undefined,
    )

  const ownToken = async (request: ApiRequest, session: Session): Promise<TokenRecord | undefined> => {
    const id = request.params.id
    const token = id === undefined ? undefined : await tokens.findById(id)
    if (token === undefined || token.userId !== session.handle) return undefined
    return token.kind === 'api' && token.revokedAt === undefined ? token : undefined
  }

  const notFound = (session: Session): RouteResult =>
    messagePage(404, 'Not found', 'There is no such token among yours.', session)

  // Signed-in pages: GETs come back here after sign-in; POSTs go to the list, since a form post
  // cannot be replayed.
  const page =
    (handler: Signed) =>
    async (request: ApiRequest): Promise<RouteResult> => {
      const check = await web.requireSignIn(request, request.method === 'GET' ? request.target : TOKENS_PATH)
      return check.ok ? handler(request, check.session) : check.result
    }

  // Signed-in forms: the CSRF token is checked before anything else is looked at.
  const form = (
    handler: (request: ApiRequest, session: Session, form: URLSearchParams) => Promise<RouteResult>,
  ) =>
    page(async (request) => {
      const fields = await readForm(request)
      const check = await web.checkCsrf(request, fields)
      return check.ok ? handler(request, check.session, fields) : check.result
    })

  const list: Signed = async (_request, session) =>
    tokenListPage({
      session,
      tokens: await listed(session.handle),
      now: web.now(),
      notice: await web.sessions.takeNotice(session.id),
    })

  const create = form(async (_request, session, fields) => {
    const now = web.now()
    const existing = await listed(session.handle)
    const read = readNewToken(fields, existing, now)
    if (!read.ok || existing.length >= MAX_TOKENS_PER_USER) {
      const errors = read.ok
        ? { name: `Name: you have ${MAX_TOKENS_PER_USER} tokens; revoke one before creating another.` }
        : read.errors
      const values = read.ok
        ? { name: read.value.name, scopes: read.value.scopes, expiresAt: fields.get('expiresAt') ?? '' }
        : read.values
      return tokenListPage({ session, tokens: existing, now, form: { values, errors } })
    }
    const { name, scopes, expiresAt } = read.value
    const { record, value } = createApiToken({
      userId: session.handle,
      name,
      scopes,
      now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    })
    await tokens.save(record)
    // The value goes into this one answer and nowhere else: not the session, not a log, not a redirect.
    return createdTokenPage(session, record, value)
  })

  const edit: Signed = async (request, session) => {
    const token = await ownToken(request, session)
    return token === undefined ? notFound(session) : editTokenPage(session, token)
  }

  const update = form(async (request, session, fields) => {
    const token = await ownToken(request, session)
    if (token === undefined) return notFound(session)
    const read = readTokenChanges(fields, token, await listed(session.handle))
    if (!read.ok) return editTokenPage(session, token, { values: read.values, errors: read.errors })
    let changed = token
    if (read.value.name !== undefined) changed = renameToken(changed, read.value.name)
    if (read.value.scopes !== undefined) changed = rescopeToken(changed, read.value.scopes)
    const receipt = await tokens.update(changed)
    await web.sessions.setNotice(
      session.id,
      `Saved “${changed.name}”: scopes ${changed.scopes.join(', ')}${pending(receipt)}.`,
    )
    return redirect(TOKENS_PATH)
  })

  const confirmRevoke: Signed = async (request, session) => {
    const token = await ownToken(request, session)
    return token === undefined ? notFound(session) : revokeConfirmPage(session, token)
  }

  const revoke = form(async (request, session, fields) => {
    const token = await ownToken(request, session)
    if (token === undefined) return notFound(session)
    if (fields.get('confirm') !== 'yes') return revokeConfirmPage(session, token)
    const receipt = await tokens.update(revokeToken(token, web.now()))
    await web.sessions.setNotice(
      session.id,
      `Revoked “${token.name}”${pending(receipt)}. Requests with it are refused from now on.`,
    )
    return redirect(TOKENS_PATH)
  })

  const routes: Route[] = [
    { method: 'GET', path: TOKENS_PATH, handle: page(list) },
    { method: 'POST', path: TOKENS_PATH, handle: create },
    { method: 'GET', path: `${TOKENS_PATH}/:id`, handle: page(edit) },
    { method: 'POST', path: `${TOKENS_PATH}/:id`, handle: update },
    { method: 'GET', path: `${TOKENS_PATH}/:id/revoke`, handle: page(confirmRevoke) },
    { method: 'POST', path: `${TOKENS_PATH}/:id/revoke`, handle: revoke },
  ]
  // New token values and session cookies never cross a network in the clear.
  return { name: 'token-settings', routes: routes.map(httpsOnly) }
}
