/**
 * Express 5 middleware that turns the policy's decisions into HTTP answers.
 *
 * @packageDocumentation
 * @module data-access-policy/express
 */
import type { IRouter, NextFunction, Request, RequestHandler, Response } from 'express'
import { createExportMeter } from '../../src/decisions/export-meter.js'
import type { AccessPolicy, Allow, Deny, Operation, Principal, Resource } from '../../src/index.js'
import { InvalidArgumentError } from '../../src/index.js'
import type { RouteDescription } from '../../src/openapi/index.js'
import { bodyHasAccessToken, queryHasAccessToken } from '../shared/access-token-parameter.js'
import {
  type Admission,
  type AdmissionRequest,
  type Admissions,
  type Admitted,
  admissionsOf,
  type Requirement,
} from '../shared/admission.js'
import { readAuthorizationValues, readDpopValues } from '../shared/authorization-header.js'
import {
  type DataChunk,
  type DataResponse,
  DEFAULT_STREAM_TYPE,
  prepareData,
  requireAllow,
  type StreamInit,
} from '../shared/data-response.js'
import { meterChunks } from '../shared/metered-chunks.js'
import {
  pipeToNodeResponse,
  sentStatus,
  whenClosed,
  writeBody,
  writeDenial,
} from '../shared/node-response.js'
import { checkRouteAccess } from '../shared/route-access.js'
import { requestOrigin } from './request-origin.js'
import { prepareRequest, storeAccess } from './request-properties.js'
import { type ExpressRoutesOptions, tagRequirement, walkRoutes } from './route-registry.js'

export type { DataChunk, DataResponse, StreamInit } from '../shared/data-response.js'
export { requestOrigin } from './request-origin.js'
export type { ExpressRoutesOptions, SkippedRoute } from './route-registry.js'

/** Express's default route parameters (`ParamsDictionary`). */
type ParamsDictionary = Request['params']

declare global {
  namespace Express {
    interface Request {
      /** The authenticated caller, set by `authenticate` (or by `require` when it authenticates). */
      principal?: Principal
      /** The route's allow decision, set by `require`; its `limits` bind the data response. */
      accessDecision?: Allow
    }
  }
}

/** Options of {@link accessControl}. */
export interface ExpressAccessControlOptions {
  /** The policy built once with `createAccessPolicy`. */
  readonly policy: AccessPolicy
}

/**
 * A request whose caller is authenticated: what a resolver receives. Express types every request
 * alike, so a handler behind `authenticate` still sees `req.principal` as optional (it is set there).
 *
 * @typeParam P - the route's parameters, e.g. `{ owner: string; name: string }` for `/:owner/:name`.
 */
export type AuthenticatedRequest<P = ParamsDictionary> = Request<P> & { principal: Principal }

/**
 * Describes the route's resource to the policy, or `undefined` when there is no such resource (404).
 * It runs after authentication, so `req.principal` is set.
 *
 * @typeParam P - the route's parameters (Express 5 types them `string | string[]` by default).
 */
export type ExpressResourceResolver<P = ParamsDictionary> = (
  req: AuthenticatedRequest<P>,
) => Resource | undefined | Promise<Resource | undefined>

/** The HTTP methods {@link ExpressAccessControl.route} registers routes for. */
export type ExpressRouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/**
 * A route for {@link ExpressAccessControl.route}: where it is and what it requires. Without an
 * operation it authenticates only (a listing route); with one, the resolver's resource is guarded.
 *
 * @typeParam P - the route's parameters, as its resolver and handlers read them.
 */
export interface ExpressRouteSpec<P = ParamsDictionary> {
  readonly method: ExpressRouteMethod
  /** The path on the router it is registered on, Express style: `/datasets/:owner/:name`. */
  readonly path: string
  readonly operation?: Operation
  readonly resource?: ExpressResourceResolver<P>
}

/** Express middleware and response helpers bound to one policy. */
export interface ExpressAccessControl {
  /** Authenticates the request and sets `req.principal`; answers the denial itself on failure. */
  readonly authenticate: RequestHandler
  /**
   * Guards a route with an operation on the resource `resolve` describes; authenticates first when
   * `req.principal` is unset, and sets `req.accessDecision` on allow.
   */
  require<P = ParamsDictionary>(operation: Operation, resolve: ExpressResourceResolver<P>): RequestHandler<P>
  /** Sends a complete data body, or the 403 `export_restricted` denial when it exceeds a cap. */
  sendData(req: Request, res: Response, data: DataResponse): void
  /** Streams data through the export meter; past a cap the socket is destroyed. Never rejects. */
  streamData(
    req: Request,
    res: Response,
    chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>,
    init?: StreamInit,
  ): Promise<void>
  /** Answers a denial with the policy's status, headers and body. */
  sendDenial(res: Response, decision: Deny): void
  /**
   * Registers a guarded route on `router` (the app or a `Router`): `require` (or `authenticate`,
   * without an operation) and then `handlers`, and records its method, path and requirement for
   * {@link ExpressAccessControl.routes}. Express does not tell a middleware which path it was
   * mounted on, so the route is declared here once, for both the guard and the description.
   */
  route<P = ParamsDictionary>(
    router: IRouter,
    spec: ExpressRouteSpec<P>,
    ...handlers: readonly RequestHandler<P>[]
  ): void
  /**
   * The guarded routes, for `describeRoutes` of `data-access-policy/openapi`.
   *
   * With an app (or a `Router`): every route of it whose handlers or mounted middleware include
   * {@link ExpressAccessControl.require} (its operation) or {@link ExpressAccessControl.authenticate}
   * (`authenticated`), found by walking Express 5's router in registration order, mounted routers
   * included with their mount path; a route with both is described by its operation. Then the
   * routes of {@link ExpressAccessControl.route} the walk did not meet, as registered. A route whose
   * path (or mount path) is a RegExp, a wildcard or has optional parts, one on a method OpenAPI does
   * not have or on all methods (`app.all`), and routes of a mounted sub-app (`app.use(path, subApp)`:
   * walk `subApp` itself and prefix its paths) are left out; `options.onSkip` is told of each.
   *
   * Without an app: the routes registered through {@link ExpressAccessControl.route} only, in
   * registration order, with their paths as registered (without the prefix of the router's mount).
   *
   * @throws {InvalidArgumentError} when `app` is neither an Express 5 app nor a router.
   * @example
   * app.get('/api/v1/datasets/:owner/:name/metadata', access.require('dataset.metadata', resolve), handler)
   * describeRoutes(access.routes(app)) // GET /api/v1/datasets/{owner}/{name}/metadata: data.metadata
   */
  routes(app?: IRouter, options?: ExpressRoutesOptions): readonly RouteDescription[]
}

/**
 * Binds a policy to Express 5. The client address and protocol are `req.ip` and `req.protocol`,
 * i.e. the app's own `trust proxy` setting (a multi-hop `X-Forwarded-Proto` counts as `https` only
 * when every hop says so).
 *
 * @example
 * const access = accessControl({ policy })
 * app.get('/api/v1/datasets/:owner/:name/metadata',
 *   access.require('dataset.metadata', (req) => describe(req.params, req.principal)), handler)
 */
export function accessControl(options: ExpressAccessControlOptions): ExpressAccessControl {
  const { policy } = options
  const sendDenial = (res: Response, decision: Deny): void => writeDenial(res, policy.render(decision))
  // What the policy admitted on each request, shared with every other instance of the same policy:
  // the principal its later steps trust (never `req.principal`, which anyone may set), and the one
  // event told when the response is done.
  const admissions = admissionsOf(policy)

  // One step of the policy on a request: request → admission → response. Callback-style, not
  // `async`: a request the policy answers synchronously costs no promise.
  function admitStep(
    req: Request<unknown>,
    res: Response,
    next: NextFunction,
    requirement: Requirement | undefined,
  ): void {
    const direct = prepareRequest(req)
    const admission = admissions.begin(req, readRequest(req, admissions), requirement)
    admissions.settle(
      req,
      admission,
      (settled: Admission, ending: Admitted | undefined) => {
        if (ending !== undefined) whenClosed(res, () => admissions.end(ending, sentStatus(res)))
        if (!settled.ok) return sendDenial(res, settled.decision)
        storeAccess(req, direct, settled.principal, settled.allow)
        next()
      },
      next,
    )
  }

  const authenticate: RequestHandler = function authenticate(req, res, next) {
    admitStep(req, res, next, undefined)
  }
  tagRequirement(authenticate, 'authenticated', policy)

  function guard<P = ParamsDictionary>(
    operation: Operation,
    resolve: ExpressResourceResolver<P>,
  ): RequestHandler<P> {
    checkRouteAccess(operation, resolve, `require(${JSON.stringify(operation)})`)
    const requireAccess: RequestHandler<P> = function requireAccess(req, res, next) {
      // The resolver reads `req.principal`: set before it runs.
      const direct = prepareRequest(req)
      const resolveFor = (principal: Principal) => {
        storeAccess(req, direct, principal)
        return resolve(req as AuthenticatedRequest<P>)
      }
      admitStep(req, res, next, { operation, resolve: resolveFor })
    }
    return tagRequirement(requireAccess, operation, policy)
  }

  // Each route of `route`, by its own guard: the walk of `routes(app)` knows it by that function.
  const registered = new Map<RequestHandler, RouteDescription>()

  return Object.freeze({
    authenticate,
    require: guard,
    route: <P = ParamsDictionary>(
      router: IRouter,
      spec: ExpressRouteSpec<P>,
      ...handlers: RequestHandler<P>[]
    ) => registerRoute(router, spec, handlers, { authenticate, guard, policy, registered }),
    routes: (app?: IRouter, options?: ExpressRoutesOptions) =>
      Object.freeze(
        app === undefined ? [...registered.values()] : walkRoutes(app, policy, registered, options),
      ),
    sendData(req: Request, res: Response, data: DataResponse): void {
      const prepared = prepareData(policy, admissions.allowOf(req), data)
      if (prepared.ok) writeBody(res, prepared)
      else sendDenial(res, prepared.decision)
    },
    streamData(
      req: Request,
      res: Response,
      chunks: AsyncIterable<DataChunk> | Iterable<DataChunk>,
      init: StreamInit = {},
    ): Promise<void> {
      // Checked before the promise exists, so a route without a decision throws into Express.
      const meter = createExportMeter(requireAllow(admissions.allowOf(req), 'streamData'))
      const source = meterChunks(chunks, meter)
      const status = init.status ?? 200
      return pipeToNodeResponse(res, status, init.contentType ?? DEFAULT_STREAM_TYPE, source).then(() => {})
    },
    sendDenial,
  })
}

// The body is whatever the app's parsers (`express.json`, `express.urlencoded`) made of it by now.
function readRequest(req: Request<unknown>, admissions: Admissions) {
  return (): AdmissionRequest => ({
    authorization: readAuthorizationValues(req),
    queryHasAccessToken: queryHasAccessToken(req.originalUrl),
    bodyHasAccessToken: () => bodyHasAccessToken(req.body),
    origin: requestOrigin(req),
    principal: admissions.principalOf(req),
    dpop: readDpopValues(req),
    method: req.method,
    host: req.headers.host,
    target: req.originalUrl,
  })
}

interface RouteBinding {
  readonly authenticate: RequestHandler
  readonly guard: (operation: Operation, resolve: ExpressResourceResolver) => RequestHandler
  readonly policy: AccessPolicy
  readonly registered: Map<RequestHandler, RouteDescription>
}

// Registers a route of `route`: its guard (one of its own, even to authenticate only, so that each
// route is known by its function), then the handlers; recorded only once Express took the path.
function registerRoute<P>(
  router: IRouter,
  spec: ExpressRouteSpec<P>,
  handlers: readonly RequestHandler<P>[],
  binding: RouteBinding,
): void {
  const { method, path, operation, resource } = spec
  const name = `${method} ${path}`
  if (!ROUTE_METHODS.includes(method)) {
    throw new InvalidArgumentError(`${name}: method must be one of ${ROUTE_METHODS.join(', ')}`)
  }
  const { authenticate, policy } = binding
  const check =
    operation === undefined && resource === undefined
      ? tagRequirement<RequestHandler>(
          (req, res, next) => authenticate(req, res, next),
          'authenticated',
          policy,
        )
      : binding.guard(checkRouteAccess(operation, resource, name), resource as ExpressResourceResolver)
  router.route(path)[LOWER[method]](check, ...(handlers as RequestHandler[]))
  binding.registered.set(check, { method, path, operation: operation ?? 'authenticated' })
}

const ROUTE_METHODS: readonly ExpressRouteMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
const LOWER = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'delete' } as const
