/**
 * Hono 4 middleware that turns the policy's decisions into HTTP answers.
 *
 * @packageDocumentation
 * @module data-access-policy/hono
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { ConnInfo } from 'hono/conninfo'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { compileTrustProxy, resolveForwarded } from '../../src/authentication/trusted-proxies.js'
import { createExportMeter } from '../../src/decisions/export-meter.js'
import type {
  AccessPolicy,
  Allow,
  Deny,
  ForwardedOrigin,
  Operation,
  Principal,
  Resource,
  TrustProxy,
} from '../../src/index.js'
import { bodyHasAccessToken, queryHasAccessToken } from '../shared/access-token-parameter.js'
import {
  type Admission,
  type AdmissionRequest,
  admit,
  admittedRequests,
  decidingOn,
  keepAdmission,
  tellAtEnd,
} from '../shared/admission.js'
import { type NodeHeaderSource, readAuthorizationValues } from '../shared/authorization-header.js'
import {
  type DataChunk,
  type DataResponse,
  DEFAULT_STREAM_TYPE,
  prepareData,
  requireAllow,
  type StreamInit,
} from '../shared/data-response.js'
import { meterChunks } from '../shared/metered-chunks.js'
import { type ClosingResponse, whenClosed } from '../shared/node-response.js'
import { checkRouteAccess } from '../shared/route-access.js'

export type { TrustProxy } from '../../src/index.js'
export type { DataChunk, DataResponse, StreamInit } from '../shared/data-response.js'

/** Options of {@link accessControl}. */
export interface HonoAccessControlOptions {
  /** The policy built once with `createAccessPolicy`. */
  readonly policy: AccessPolicy
  /** The runtime's connection info reader, e.g. `getConnInfo` from `@hono/node-server/conninfo`. */
  readonly getConnInfo: (c: Context) => ConnInfo
  /**
   * Which peers may set `X-Forwarded-For` / `X-Forwarded-Proto`, as Express's `trust proxy`:
   * `false` (default), `true`, `'loopback'`, or addresses and CIDRs (a list or comma-separated).
   */
  readonly trustProxy?: TrustProxy
}

/** The context variables the middleware sets. */
export type AccessVariables = { principal: Principal; accessDecision: Allow }

/** The Hono environment of routes behind the middleware. */
export type AccessEnv = { Variables: AccessVariables }

/**
 * Describes the route's resource to the policy, or `undefined` when there is no such resource (404).
 * It runs after authentication, so `c.get('principal')` is set.
 *
 * @typeParam P - a path as Hono types routes: with `'/:owner/:name'`, `c.req.param('owner')` is a
 * `string`, and the resolver fits every route whose path has those parameters. Hono does not pass
 * the route's path to a middleware written inline, so name it there: `require<'/:owner/:name'>(…)`.
 */
export type HonoResourceResolver<P extends string = string> = (
  c: Context<AccessEnv, P>,
) => Resource | undefined | Promise<Resource | undefined>

/** Hono middleware and response helpers bound to one policy. */
export interface HonoAccessControl {
  /** Authenticates the request and sets `principal`; answers the denial itself on failure. */
  readonly authenticate: MiddlewareHandler<AccessEnv>
  /** Guards a route with an operation; authenticates first when `principal` is unset; sets `accessDecision`. */
  require<P extends string = string>(
    operation: Operation,
    resolve: HonoResourceResolver<P>,
  ): MiddlewareHandler<AccessEnv, P>
  /** A complete data body, or the 403 `export_restricted` denial when it exceeds a cap. */
  sendData(c: Context, data: DataResponse): Response
  /** A body streamed through the export meter; past a cap the transfer breaks. */
  streamData(c: Context, chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>, init?: StreamInit): Response
  /** The policy's status, headers and body for a denial. */
  sendDenial(c: Context, decision: Deny): Response
  /**
   * The client address and protocol the policy sees for a request (the connection's, with the
   * forwarding headers of trusted proxies applied); pages of the host's own read it here.
   */
  requestOrigin(c: Context): ForwardedOrigin
}

// What `@hono/node-server` passes as `c.env`; typed structurally so the package stays optional.
type NodeBindings = {
  readonly incoming?: NodeHeaderSource
  readonly outgoing?: { destroy(): unknown; readonly once?: unknown; readonly destroyed?: unknown }
}

// What a middleware answers: Hono's own return type, a response or nothing once `next` has run.
type HandlerResult = ReturnType<MiddlewareHandler<AccessEnv>>

// Calls `abandoned` when the client goes away (at once when it has): the Node response's `close`,
// else the request signal's `abort`. Answers how to stop watching.
function watchAbandon(c: Context, abandoned: () => void): () => void {
  const outgoing = nodeBindings(c)?.outgoing
  if (typeof outgoing?.once === 'function' && typeof outgoing.destroyed === 'boolean') {
    // Told once however often it fires (tellAtEnd): the listener may stay until the close.
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

function nodeBindings(c: Context): NodeBindings | undefined {
  const env: unknown = c.env
  return typeof env === 'object' && env !== null ? (env as NodeBindings) : undefined
}

// On Node, reading the raw message's headers spares @hono/node-server from building the Fetch
// `Request` (and its `Headers`) that the lightweight request stands in for: several microseconds.
function headerOf(
  c: Context,
  name: 'content-type' | 'x-forwarded-for' | 'x-forwarded-proto',
): string | undefined {
  const headers = nodeBindings(c)?.incoming?.headers
  if (headers === undefined) return c.req.header(name)
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

// The protocol of the connection itself. On Node it is the socket's: the URL @hono/node-server
// builds copies an absolute-form request target (`GET https://host/… HTTP/1.1`) as sent, so a
// plain-HTTP client could otherwise claim https. Other runtimes build the URL from the connection.
function directProtocolOf(c: Context): 'https' | 'http' {
  const incoming = nodeBindings(c)?.incoming as
    | { readonly socket?: { readonly encrypted?: unknown } }
    | undefined
  if (incoming !== undefined) return incoming.socket?.encrypted === true ? 'https' : 'http'
  return c.req.url.startsWith('https:') ? 'https' : 'http'
}

function authorizationValues(c: Context): readonly string[] {
  const incoming = nodeBindings(c)?.incoming
  // On Node the raw request still tells repeated headers apart; Fetch `Headers` join them with
  // ', ', which the core's grammar rejects (400) anyway.
  if (Array.isArray(incoming?.rawHeaders)) return readAuthorizationValues(incoming)
  const value = c.req.header('authorization')
  return value === undefined ? [] : [value]
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

// Synchronous for a request without a parameter body (every GET of an API client), so that the
// admission needs no promise of its own: ~0.2 µs less per admission, measured in process.
function bodyCarriesAccessToken(c: Context): boolean | Promise<boolean> {
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

/**
 * Binds a policy to Hono 4. The client address is the connection's, with `X-Forwarded-For` and
 * `X-Forwarded-Proto` applied only as far as `trustProxy` trusts the peers that sent them.
 *
 * @throws {ConfigError} naming `trustProxy` when it lists something that is not an address or CIDR.
 * @example
 * const access = accessControl({ policy, getConnInfo, trustProxy: 'loopback' })
 * app.get('/api/v1/datasets/:owner/:name/metadata',
 *   access.require('dataset.metadata', (c) => describe(c.req.param(), c.get('principal'))), handler)
 */
export function accessControl(options: HonoAccessControlOptions): HonoAccessControl {
  const { policy, getConnInfo } = options
  const trust = compileTrustProxy(options.trustProxy)
  // What the policy admitted on each request, shared with every other instance of the same policy:
  // the principal its later steps trust (never `c.get('principal')`, which anyone may set), and the
  // one event told when the response is done.
  const admitted = admittedRequests(policy)

  function requestOrigin(c: Context): ForwardedOrigin {
    return resolveForwarded(trust, {
      peerAddress: getConnInfo(c).remote.address,
      directProtocol: directProtocolOf(c),
      forwardedFor: headerOf(c, 'x-forwarded-for'),
      forwardedProto: headerOf(c, 'x-forwarded-proto'),
    })
  }

  function sendDenial(c: Context, decision: Deny): Response {
    const rendered = policy.render(decision)
    return c.body(rendered.body, rendered.status as ContentfulStatusCode, { ...rendered.headers })
  }

  const reader = (c: Context<AccessEnv>) => (): AdmissionRequest => ({
    authorization: authorizationValues(c),
    queryHasAccessToken: queryHasAccessToken(c.req.url),
    bodyHasAccessToken: () => bodyCarriesAccessToken(c),
    origin: requestOrigin(c),
    principal: admitted.get(c)?.principal,
  })

  // The first step of the policy on a request tells its event once the rest of the chain is done
  // (or at once, when it answers the denial itself), with the status of the response then.
  const proceed = (
    c: Context<AccessEnv>,
    next: () => Promise<void>,
    admission: Admission,
    keepPrincipal: boolean,
  ): HandlerResult => {
    const fresh = keepAdmission(admitted, c, admission, keepPrincipal)
    if (!admission.ok) {
      const denial = sendDenial(c, admission.decision)
      if (fresh !== undefined) tellAtEnd(policy, fresh, denial.status)
      return Promise.resolve(denial)
    }
    c.set('principal', admission.principal)
    if (admission.allow !== undefined) c.set('accessDecision', admission.allow)
    if (fresh === undefined) return next()
    // A client that goes away while the rest of the chain works is told when the response closes
    // (on Node) or the request's signal aborts (Bun, Deno), with the status so far, as Express and
    // Fastify tell it on `close`; whichever comes first is told, once. On Node the signal is not
    // read: @hono/node-server builds the whole Fetch `Request` for it, on every request.
    const abandoned = () => tellAtEnd(policy, fresh, c.finalized ? c.res.status : undefined)
    const stopWatching = watchAbandon(c, abandoned)
    return next().then(
      () => {
        stopWatching()
        tellAtEnd(policy, fresh, c.res.status)
      },
      (error: unknown) => {
        stopWatching()
        // Hono answers an error its handler let escape with a 500.
        tellAtEnd(policy, fresh, 500)
        throw error
      },
    )
  }

  return Object.freeze({
    authenticate: function authenticate(c, next) {
      // Not `async`: a request the policy answers synchronously costs no promise of its own.
      const admission = decidingOn(admit(policy, reader(c), undefined), admitted, c)
      return admission instanceof Promise
        ? admission.then((settled) => proceed(c, next, settled, true))
        : proceed(c, next, admission, true)
    } satisfies MiddlewareHandler<AccessEnv>,

    require<P extends string = string>(
      operation: Operation,
      resolve: HonoResourceResolver<P>,
    ): MiddlewareHandler<AccessEnv, P> {
      checkRouteAccess(operation, resolve, `require(${JSON.stringify(operation)})`)
      return function requireAccess(c, next) {
        const requirement = {
          operation,
          resolve: (principal: Principal) => {
            c.set('principal', principal)
            return resolve(c)
          },
        }
        const admission = decidingOn(admit(policy, reader(c), requirement), admitted, c)
        return admission instanceof Promise
          ? admission.then((settled) => proceed(c, next, settled, false))
          : proceed(c, next, admission, false)
      }
    },

    sendData(c: Context, data: DataResponse): Response {
      const prepared = prepareData(policy, admitted.get(c)?.allow, data)
      if (!prepared.ok) return sendDenial(c, prepared.decision)
      return c.body(prepared.bytes as Uint8Array<ArrayBuffer>, prepared.status as ContentfulStatusCode, {
        'content-type': prepared.contentType,
      })
    },

    streamData(
      c: Context,
      chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>,
      init: StreamInit = {},
    ): Response {
      const meter = createExportMeter(requireAllow(admitted.get(c)?.allow, 'streamData'))
      const iterator = meterChunks(chunks, meter)
      const outgoing = nodeBindings(c)?.outgoing
      const body = new ReadableStream<Uint8Array<ArrayBuffer>>({
        async pull(controller) {
          try {
            const next = await iterator.next()
            if (next.done) controller.close()
            else controller.enqueue(next.value as Uint8Array<ArrayBuffer>)
          } catch (error) {
            if (typeof outgoing?.destroy === 'function') {
              // @hono/node-server frames a stream that errors within its first reads as a complete
              // body with a Content-Length; destroying the socket breaks the transfer regardless.
              outgoing.destroy()
              controller.close()
            } else {
              controller.error(error)
            }
          }
        },
        async cancel() {
          await iterator.return()
        },
      })
      return c.body(body, (init.status ?? 200) as ContentfulStatusCode, {
        'content-type': init.contentType ?? DEFAULT_STREAM_TYPE,
      })
    },

    sendDenial,
    requestOrigin,
  })
}
