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
import { queryHasAccessToken } from '../shared/access-token-parameter.js'
import {
  type Admission,
  type AdmissionRequest,
  type Admissions,
  type Admitted,
  admissionsOf,
  type Requirement,
} from '../shared/admission.js'
import {
  type DataChunk,
  type DataResponse,
  DEFAULT_STREAM_TYPE,
  prepareData,
  requireAllow,
  type StreamInit,
} from '../shared/data-response.js'
import { meterChunks } from '../shared/metered-chunks.js'
import { checkRouteAccess } from '../shared/route-access.js'
import {
  authorizationValues,
  bodyCarriesAccessToken,
  directProtocolOf,
  dpopValues,
  headerOf,
  nodeBindings,
  watchAbandon,
} from './request.js'

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

// What a middleware answers: Hono's own return type, a response or nothing once `next` has run.
type HandlerResult = ReturnType<MiddlewareHandler<AccessEnv>>

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
  const admissions = admissionsOf(policy)

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

  // One step of the policy on a request: request → admission → response. Not `async`: a request
  // the policy answers synchronously costs no promise of its own.
  function admitStep(
    c: Context<AccessEnv>,
    next: () => Promise<void>,
    requirement: Requirement | undefined,
  ): HandlerResult {
    const read = (): AdmissionRequest => ({
      authorization: authorizationValues(c),
      queryHasAccessToken: queryHasAccessToken(c.req.url),
      bodyHasAccessToken: () => bodyCarriesAccessToken(c),
      origin: requestOrigin(c),
      principal: admissions.principalOf(c),
      dpop: dpopValues(c),
      method: c.req.method,
      target: c.req.url,
    })
    return admissions.settle(c, admissions.begin(c, read, requirement), (admission, ending) =>
      respond(admissions, c, next, admission, ending, sendDenial),
    )
  }

  return Object.freeze({
    authenticate: function authenticate(c, next) {
      return admitStep(c, next, undefined)
    } satisfies MiddlewareHandler<AccessEnv>,

    require<P extends string = string>(
      operation: Operation,
      resolve: HonoResourceResolver<P>,
    ): MiddlewareHandler<AccessEnv, P> {
      checkRouteAccess(operation, resolve, `require(${JSON.stringify(operation)})`)
      return function requireAccess(c, next) {
        // The resolver reads `c.get('principal')`: set before it runs.
        const resolveFor = (principal: Principal) => {
          c.set('principal', principal)
          return resolve(c)
        }
        return admitStep(c as Context<AccessEnv>, next, { operation, resolve: resolveFor })
      }
    },

    sendData(c: Context, data: DataResponse): Response {
      const prepared = prepareData(policy, admissions.allowOf(c), data)
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
      const meter = createExportMeter(requireAllow(admissions.allowOf(c), 'streamData'))
      return c.body(
        meteredStream(c, meterChunks(chunks, meter)),
        (init.status ?? 200) as ContentfulStatusCode,
        {
          'content-type': init.contentType ?? DEFAULT_STREAM_TYPE,
        },
      )
    },

    sendDenial,
    requestOrigin,
  })
}

// The step's response: a denial at once, told at once with its status; an allow goes on down the
// chain, and the first step of the policy on the request tells its event once the chain is done.
function respond(
  admissions: Admissions,
  c: Context<AccessEnv>,
  next: () => Promise<void>,
  admission: Admission,
  ending: Admitted | undefined,
  sendDenial: (c: Context, decision: Deny) => Response,
): HandlerResult {
  if (!admission.ok) {
    const denial = sendDenial(c, admission.decision)
    if (ending !== undefined) admissions.end(ending, denial.status)
    return Promise.resolve(denial)
  }
  c.set('principal', admission.principal)
  if (admission.allow !== undefined) c.set('accessDecision', admission.allow)
  if (ending === undefined) return next()
  // A client that goes away while the rest of the chain works is told when the response closes
  // (on Node) or the request's signal aborts (Bun, Deno), with the status so far, as Express and
  // Fastify tell it on `close`; whichever comes first is told, once. On Node the signal is not
  // read: @hono/node-server builds the whole Fetch `Request` for it, on every request.
  const stopWatching = watchAbandon(c, () => admissions.end(ending, c.finalized ? c.res.status : undefined))
  return next().then(
    () => {
      stopWatching()
      admissions.end(ending, c.res.status)
    },
    (error: unknown) => {
      stopWatching()
      // Hono answers an error its handler let escape with a 500.
      admissions.end(ending, 500)
      throw error
    },
  )
}

// The metered chunks as a body. Past a cap the transfer breaks: on Node by destroying the socket,
// since @hono/node-server frames a stream that errors within its first reads as a complete body
// with a Content-Length; elsewhere by erroring the stream.
function meteredStream(
  c: Context,
  iterator: AsyncGenerator<Uint8Array, void, undefined>,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  const outgoing = nodeBindings(c)?.outgoing
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(controller) {
      try {
        const next = await iterator.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value as Uint8Array<ArrayBuffer>)
      } catch (error) {
        if (typeof outgoing?.destroy === 'function') {
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
}
