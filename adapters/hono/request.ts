/**
 * What the Hono adapter reads of a request, on any runtime: on Node, the raw message that
 * `@hono/node-server` passes as `c.env` where it spares building the Fetch `Request`; elsewhere, the
 * Fetch request itself.
 */
import type { Context } from 'hono'
import { bodyHasAccessToken } from '../shared/access-token-parameter.js'
import {
  type NodeHeaderSource,
  readAuthorizationValues,
  readDpopValues,
} from '../shared/authorization-header.js'
import { type ClosingResponse, whenClosed } from '../shared/node-response.js'

// What `@hono/node-server` passes as `c.env`; typed structurally so the package stays optional.
type NodeBindings = {
  readonly incoming?: NodeHeaderSource
  readonly outgoing?: { destroy(): unknown; readonly once?: unknown; readonly destroyed?: unknown }
}

/**
 * Calls `abandoned` when the client goes away (at once when it has): the Node response's `close`,
 * else the request signal's `abort`. Answers how to stop watching.
 *
 * @example
 * const stopWatching = watchAbandon(c, () => admissions.end(ending, undefined))
 */
export function watchAbandon(c: Context, abandoned: () => void): () => void {
  const outgoing = nodeBindings(c)?.outgoing
  if (typeof outgoing?.once === 'function' && typeof outgoing.destroyed === 'boolean') {
    // Told once however often it fires (`Admissions.end`): the listener may stay until the close.
    whenClosed(outgoing as ClosingResponse, abandoned)
    return NOTHING
  }
  const signal = c.req.raw.signal
  if (signal.aborted) {
    abandoned()
    return NOTHING
  }
  signal.addEventListener('abort', abandoned, { once: true })
  return () => signal.removeEventListener('abort', abandoned)
}

const NOTHING = (): void => {}

/**
 * What `@hono/node-server` passes as `c.env` (the raw request and response), or undefined elsewhere.
 *
 * @example
 * nodeBindings(c)?.outgoing?.destroy()
 */
export function nodeBindings(c: Context): NodeBindings | undefined {
  const env: unknown = c.env
  return typeof env === 'object' && env !== null ? (env as NodeBindings) : undefined
}

/**
 * A request header. On Node, read from the raw message, which spares @hono/node-server from
 * building the Fetch `Request` (and its `Headers`) that its lightweight request stands in for.
 *
 * @example
 * headerOf(c, 'x-forwarded-for') // '203.0.113.7, 10.0.0.1'
 */
export function headerOf(
  c: Context,
  name: 'content-type' | 'x-forwarded-for' | 'x-forwarded-proto',
): string | undefined {
  const headers = nodeBindings(c)?.incoming?.headers
  if (headers === undefined) return c.req.header(name)
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * The protocol of the connection itself. On Node it is the socket's: the URL @hono/node-server
 * builds copies an absolute-form request target (`GET https://host/… HTTP/1.1`) as sent, so a
 * plain-HTTP client could otherwise claim https. Other runtimes build the URL from the connection.
 *
 * @example
 * directProtocolOf(c) // 'http' on a plain socket
 */
export function directProtocolOf(c: Context): 'https' | 'http' {
  const incoming = nodeBindings(c)?.incoming as
    | { readonly socket?: { readonly encrypted?: unknown } }
    | undefined
  if (incoming !== undefined) return incoming.socket?.encrypted === true ? 'https' : 'http'
  return c.req.url.startsWith('https:') ? 'https' : 'http'
}

/**
 * Every `Authorization` header value of the request, in order.
 *
 * @example
 * authorizationValues(c) // ['Bearer dap_…']
 */
export function authorizationValues(c: Context): readonly string[] {
  const incoming = nodeBindings(c)?.incoming
  // On Node the raw request still tells repeated headers apart; Fetch `Headers` join them with
  // ', ', which the core's grammar rejects (400) anyway.
  if (Array.isArray(incoming?.rawHeaders)) return readAuthorizationValues(incoming)
  const value = c.req.header('authorization')
  return value === undefined ? [] : [value]
}

/**
 * Every `DPoP` header value of the request, in order. Fetch `Headers` join a repeated header with
 * `, `; a proof (a compact JWS) has no comma, so the parts are the proofs sent.
 *
 * @example
 * dpopValues(c) // ['eyJ0eXAiOiJkcG9wK2p3dCIs…']
 */
export function dpopValues(c: Context): readonly string[] {
  const incoming = nodeBindings(c)?.incoming
  if (Array.isArray(incoming?.rawHeaders)) return readDpopValues(incoming)
  const value = c.req.header('dpop')
  return value === undefined ? [] : value.split(',').map((part) => part.trim())
}

// The bodies that carry parameters (RFC 6750 §2.2): form-encoded, and JSON (`application/json` and
// `application/…+json`, as `express.json({ type: '*/*+json' })` would take them), parameters ignored.
function parameterBodyKind(c: Context): 'json' | 'form' | undefined {
  const contentType = headerOf(c, 'content-type')
  if (contentType === undefined) return undefined
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase()
  if (mediaType === 'application/x-www-form-urlencoded') return 'form'
  if (/^application\/(?:[!#$&^_.+\-0-9a-z]+\+)?json$/.test(mediaType)) return 'json'
  return undefined
}

// The body as text. Read through `c.req.text()`, which Hono caches, so the handler can still read
// the body (as text, JSON, form or bytes). On Node a GET or HEAD body never reaches the Fetch
// request (@hono/node-server drops it); where one was read ahead as `incoming.rawBody`, it is read
// there, so that a GET body cannot carry an `access_token` past the check.
async function bodyText(c: Context): Promise<string> {
  const method = c.req.method
  if (method !== 'GET' && method !== 'HEAD') return c.req.text()
  const rawBody = (nodeBindings(c)?.incoming as { readonly rawBody?: unknown } | undefined)?.rawBody
  return rawBody instanceof Uint8Array ? new TextDecoder().decode(rawBody) : ''
}

/**
 * Whether the body carries an `access_token` parameter. Synchronous for a request without a
 * parameter body (every GET of an API client), so that the admission needs no promise of its own.
 *
 * @example
 * const read = () => ({ …, bodyHasAccessToken: () => bodyCarriesAccessToken(c) })
 */
export function bodyCarriesAccessToken(c: Context): boolean | Promise<boolean> {
  const kind = parameterBodyKind(c)
  if (kind === undefined) return false
  return bodyText(c).then((text) => parsedBodyHasAccessToken(kind, text), NO_PARAMETER)
}

// An unreadable or unparsable body carries no parameter; the handler answers it as it would anyway.
const NO_PARAMETER = (): boolean => false

function parsedBodyHasAccessToken(kind: 'json' | 'form', text: string): boolean {
  try {
    return bodyHasAccessToken(kind === 'json' ? JSON.parse(text) : new URLSearchParams(text))
  } catch {
    return NO_PARAMETER()
  }
}
