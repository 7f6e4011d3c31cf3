/**
 * A Fastify 5 plugin that turns the policy's decisions into HTTP answers.
 *
 * @packageDocumentation
 * @module data-access-policy/fastify
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify'
import { fastifyPlugin } from 'fastify-plugin'
import { strictProtocol } from '../../src/authentication/trusted-proxies.js'
import { ConfigError } from '../../src/errors.js'
import type {
  AccessPolicy,
  Allow,
  Deny,
  ForwardedOrigin,
  Operation,
  Principal,
  Resource,
} from '../../src/index.js'
import type { OpenApiOptions } from '../../src/openapi/index.js'
import { operationSecurity } from '../../src/openapi/index.js'
import { bodyHasAccessToken, queryHasAccessToken } from '../shared/access-token-parameter.js'
import {
  type Admission,
  type AdmissionRecords,
  type AdmissionRequest,
  Admissions,
  type Admitted,
  BODY_NOT_YET_PARSED,
  type Requirement,
} from '../shared/admission.js'
import { readAuthorizationValues, readDpopValues } from '../shared/authorization-header.js'
import type { DataChunk, DataResponse, StreamInit } from '../shared/data-response.js'
import { directOrigin } from '../shared/direct-origin.js'
import { isEncrypted, sentStatus, whenClosed } from '../shared/node-response.js'
import { decorateReplies } from './replies.js'
import { coverRoute, guardUncoveredRoutes } from './uncovered-routes.js'

export type { DataChunk, DataResponse, StreamInit } from '../shared/data-response.js'
export {
  type OpenApiTransform,
  type OpenApiTransformInput,
  type OpenApiTransformOptions,
  type OpenApiTransformResult,
  openApiTransform,
} from './openapi.js'

/**
 * A request whose caller is authenticated: what a resolver receives. Fastify types every request
 * alike, so a handler behind `config.access` still sees `request.principal` as optional (it is set).
 *
 * @typeParam P - the route's parameters, e.g. `{ owner: string; name: string }` for `/:owner/:name`.
 */
export type AuthenticatedRequest<P = unknown> = FastifyRequest<{ Params: P }> & { principal: Principal }

/**
 * Describes the route's resource to the policy, or `undefined` when there is no such resource (404).
 * It runs after authentication, so `request.principal` is set.
 *
 * @typeParam P - the route's parameters. Fastify does not type them from the path (they are `unknown`
 * unless the route says otherwise), so a resolver states them; declared as a method so that it fits
 * `config.access` of the route it is written for.
 */
export type FastifyResourceResolver<P = unknown> = {
  resolve(request: AuthenticatedRequest<P>): Resource | undefined | Promise<Resource | undefined>
}['resolve']

/**
 * A route's access requirement, in its `config.access`. `{}` authenticates only (listing routes);
 * with an operation, the resolver's resource is guarded too.
 *
 * @typeParam P - the route's parameters, as its resolver reads them.
 */
export interface FastifyRouteAccess<P = unknown> {
  readonly operation?: Operation
  readonly resource?: FastifyResourceResolver<P>
}

/** Options of the {@link accessControl} plugin. */
export interface FastifyAccessControlOptions {
  /** The policy built once with `createAccessPolicy`. */
  readonly policy: AccessPolicy
  /**
   * How every route with `config.access` is described for `@fastify/swagger`: its schema gets the
   * `security` requirement and `x-data-access` of `data-access-policy/openapi`, built with these
   * options (pass the document's: `issuer`, `openapi`, `anonymous`), where the host's schema sets
   * neither. Keys Fastify ignores at run time; the denial responses come from `openApiTransform`.
   * `false` leaves route schemas alone. Default `{}`: the bearer scheme, OpenAPI 3.1.
   */
  readonly openapi?: OpenApiOptions | false
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Opts the route in to authentication, and to a guard when an operation is named. */
    access?: FastifyRouteAccess
  }
  interface FastifyRequest {
    /** The authenticated caller, on routes with `config.access`. */
    principal?: Principal
    /** The route's allow decision; its `limits` bind the data response. */
    accessDecision?: Allow
  }
  interface FastifyReply {
    /** Sends a complete data body, or the 403 `export_restricted` denial when it exceeds a cap. */
    sendData(data: DataResponse): FastifyReply
    /** Streams data through the export meter; past a cap the socket is destroyed. */
    streamData(chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>, init?: StreamInit): FastifyReply
    /** Answers a denial with the policy's status, headers and body. */
    sendDenial(decision: Deny): FastifyReply
  }
}

async function plugin(fastify: FastifyInstance, options: FastifyAccessControlOptions): Promise<void> {
  const { policy, openapi = {} } = options
  // Fastify's own refusal ("the decorator 'principal' has already been added") names neither the
  // cause nor the fix.
  if (fastify.hasRequestDecorator('principal')) {
    throw new ConfigError(
      ['accessControl'],
      'is registered inside the scope of another accessControl instance; register each instance in a scope of its own (sibling plugins), or once on the root',
    )
  }
  // Checked now, so that a bad option fails at registration rather than on the first route.
  if (openapi !== false) operationSecurity('authenticated', openapi)

  fastify.decorateRequest('principal', undefined)
  fastify.decorateRequest('accessDecision', undefined)
  fastify.decorateRequest(EARLIER, undefined)
  decorateReplies(fastify, policy)

  // Every route this plugin's hooks reach is marked as covered; the others are refused.
  fastify.addHook('onRoute', (route) => coverRoute(route, openapi))
  guardUncoveredRoutes(fastify, policy)

  const admissions = new Admissions(policy, RECORDS)
  fastify.addHook('onRequest', authenticateRequest(admissions))
  fastify.addHook('preHandler', guardRoute(admissions))
}

// Before the body is parsed: an unauthenticated request costs no parsing. Callback-style hooks: a
// request the policy answers synchronously costs no promise.
function authenticateRequest(admissions: Admissions<FastifyRequest>): onRequestHookHandler {
  return function authenticateRequest(request, reply, done) {
    const access = request.routeOptions.config.access
    if (access === undefined) return done()
    let earlier: EarlierRead | undefined
    const read = () => {
      const value = readRequest(request, BODY_NOT_YET_PARSED)
      earlier = earlierRead(access, value)
      ;(request as GuardedRequest)[EARLIER] = earlier
      return value
    }
    admissions.settle(
      request,
      admissions.begin(request, read, undefined, access.operation),
      (admission, ending) => {
        // Authenticated from the header here, the principal is a token's exactly when the header
        // carried one: the preHandler need not parse the header again.
        if (admission.ok && earlier !== undefined)
          earlier.tokenInHeader = admission.principal.kind === 'token'
        respond(admissions, request, reply, admission, ending)
        if (admission.ok) done()
      },
      (error) => done(error as Error),
    )
  }
}

// The body check (now that the body is parsed), then the route's operation, if it names one.
function guardRoute(admissions: Admissions<FastifyRequest>): preHandlerHookHandler {
  return function guardRoute(request, reply, done) {
    const earlier = (request as GuardedRequest)[EARLIER]
    // Read again only when `onRequest` left nothing: an unguarded route, or one it did not see.
    const access = earlier !== undefined ? earlier.access : request.routeOptions.config.access
    if (access === undefined) return done()
    const body = () => bodyHasAccessToken(request.body)
    const read = () => {
      if (earlier !== undefined) return again(earlier, body)
      const value = readRequest(request, body)
      ;(request as GuardedRequest)[EARLIER] = earlierRead(access, value)
      return value
    }
    admissions.settle(
      request,
      admissions.begin(request, read, routeRequirement(request, access)),
      (admission, ending) => {
        respond(admissions, request, reply, admission, ending)
        if (admission.ok) done()
      },
      (error) => done(error as Error),
    )
  }
}

// A half-declared requirement that escaped `onRoute` fails closed in the core: no operation is 403
// `invalid_input`, no resolver 503. The resolver reads `request.principal`: set before it runs.
function routeRequirement(request: FastifyRequest, access: FastifyRouteAccess): Requirement | undefined {
  const { operation, resource } = access
  if (operation === undefined && resource === undefined) return undefined
  const resolve = (principal: Principal) => {
    request.principal = principal
    return (resource as FastifyResourceResolver)(request as AuthenticatedRequest)
  }
  return { operation: operation as Operation, resolve }
}

// The event is told once when the response is done, whatever ends it: the route, a denial, the
// body parser (400, 413, 415), a schema, a hook's early reply, or a client that went away (`close`
// follows `finish`, and ends those too). A denial is answered here; an allow goes on.
function respond(
  admissions: Admissions<FastifyRequest>,
  request: FastifyRequest,
  reply: FastifyReply,
  admission: Admission,
  ending: Admitted | undefined,
): void {
  if (ending !== undefined) whenClosed(reply.raw, () => admissions.end(ending, sentStatus(reply.raw)))
  if (!admission.ok) return void reply.sendDenial(admission.decision)
  request.principal = admission.principal
  if (admission.allow !== undefined) request.accessDecision = admission.allow
}

// What `onRequest` read of a guarded request and its route's requirement, for the `preHandler`: the
// headers, address and protocol cannot change in between, and reading them again (`request.ip` runs
// proxy-addr under a `trustProxy`, `routeOptions` builds an object) is work for nothing. With them,
// the request's admission record ({@link Admitted}). A decorated symbol, not a WeakMap: Fastify
// builds every request with the field, so the store is a plain write.
const EARLIER = Symbol('data-access-policy.onRequest')

interface EarlierRead extends Admitted {
  readonly access: FastifyRouteAccess
  readonly read: AdmissionRequest
  /** Whether the header carried a token, once `onRequest` authenticated from it. */
  tokenInHeader: boolean | undefined
}

// A new record, every field present from the start: one object shape for every request.
function earlierRead(access: FastifyRouteAccess, read: AdmissionRequest): EarlierRead {
  return {
    access,
    read,
    principal: undefined,
    event: undefined,
    telling: undefined,
    tokenInHeader: undefined,
  }
}

// The records are the requests' own field, made by the read; a read that threw made none (a 503,
// told once at the end all the same) and leaves none.
const RECORDS: AdmissionRecords<FastifyRequest> = {
  get: (request) => (request as GuardedRequest)[EARLIER],
  set: () => {},
}

type GuardedRequest = FastifyRequest & { [EARLIER]?: EarlierRead }

function readRequest(
  request: FastifyRequest,
  body: AdmissionRequest['bodyHasAccessToken'],
): AdmissionRequest {
  return {
    authorization: readAuthorizationValues(request.raw),
    queryHasAccessToken: queryHasAccessToken(request.url),
    bodyHasAccessToken: body,
    origin: requestOrigin(request),
    // Nothing authenticated by this plugin yet: whatever `request.principal` holds is not its own.
    principal: undefined,
    dpop: readDpopValues(request.raw),
    method: request.method,
    host: request.headers.host,
    target: request.url,
  }
}

// The `onRequest` read with the parsed body's check and the principal `onRequest` authenticated:
// never its DPoP proof, which a second authentication would find used.
function again(earlier: EarlierRead, body: AdmissionRequest['bodyHasAccessToken']): AdmissionRequest {
  const read = earlier.read
  return {
    authorization: read.authorization,
    queryHasAccessToken: read.queryHasAccessToken,
    bodyHasAccessToken: body,
    origin: read.origin,
    principal: earlier.principal,
    tokenInHeader: earlier.tokenInHeader,
  }
}

/**
 * The client address and protocol the policy sees for a request: `request.ip` and
 * `request.protocol` under the instance's `trustProxy`, with a multi-hop `X-Forwarded-Proto`
 * counting as `https` only when every hop says so. Pages of the host's own that must agree with the
 * API (an HTTPS-only sign-in page, say) read it here.
 *
 * @example
 * if (!isSecureTransport(requestOrigin(request))) return reply.code(403).send('HTTPS required')
 */
export function requestOrigin(request: FastifyRequest): ForwardedOrigin {
  const direct = directOrigin({ headers: request.headers, socket: request.raw.socket })
  if (direct !== undefined) return direct
  return {
    clientAddress: request.ip,
    protocol: strictProtocol(
      request.protocol,
      isEncrypted(request.raw.socket),
      request.headers['x-forwarded-proto'],
    ),
  }
}

/**
 * The Fastify 5 plugin: authenticates routes whose options carry `config.access` (in `onRequest`),
 * then guards them (in `preHandler`). Address and protocol are `request.ip` / `request.protocol`,
 * i.e. the instance's own `trustProxy` option (a multi-hop `X-Forwarded-Proto` counts as `https`
 * only when every hop says so).
 *
 * @example
 * await app.register(accessControl, { policy })
 * app.get('/api/v1/datasets/:owner/:name/metadata',
 *   { config: { access: { operation: 'dataset.metadata', resource: (req) => describe(req.params, req.principal) } } },
 *   handler)
 */
export const accessControl = fastifyPlugin(plugin, { fastify: '5.x', name: 'data-access-policy' })
