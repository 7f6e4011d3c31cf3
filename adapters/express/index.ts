/**
 * Express 5 middleware that turns the policy's decisions into HTTP answers.
 *
 * @packageDocumentation
 * @module data-access-policy/express
 */
import type { Request, RequestHandler, Response } from 'express'
import {
  type AccessPolicy,
  type Allow,
  createExportMeter,
  type Deny,
  deny,
  type Operation,
  type Principal,
  type Resource,
} from '../../src/index.js'
import {
  accessTokenParameterDenial,
  bodyHasAccessToken,
  queryHasAccessToken,
} from '../shared/access-token-parameter.js'
import { readAuthorizationValues } from '../shared/authorization-header.js'
import {
  type DataChunk,
  type DataResponse,
  DEFAULT_STREAM_TYPE,
  prepareData,
  requireAllow,
  type StreamInit,
} from '../shared/data-response.js'
import { meterChunks } from '../shared/metered-chunks.js'
import { pipeToNodeResponse, writeBody, writeDenial } from '../shared/node-response.js'
import { requestFacts } from '../shared/request-facts.js'
import { checkRouteAccess } from '../shared/route-access.js'
import { strictProtocol } from '../shared/trust-proxy.js'

export type { DataChunk, DataResponse, StreamInit } from '../shared/data-response.js'

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

  // Authentication reads the header and the query; an `access_token` in a body parsed by then (or
  // by the time `require` runs) is refused afterwards, in the same order as on Fastify and Hono.
  // Resolves undefined once a denial has been answered.
  async function principalOf(req: Request<unknown>, res: Response): Promise<Principal | undefined> {
    let principal = req.principal
    if (principal === undefined) {
      const result = await policy.authenticate({
        authorization: readAuthorizationValues(req),
        accessTokenParameter: queryHasAccessToken(req.originalUrl),
        protocol: strictProtocol(req.protocol, req.socket, req.headers['x-forwarded-proto']),
        clientAddress: req.ip,
      })
      if (!result.ok) {
        sendDenial(res, result.decision)
        return undefined
      }
      principal = result.principal
    }
    const bodyDenial = bodyHasAccessToken(req.body)
      ? accessTokenParameterDenial(readAuthorizationValues(req))
      : undefined
    if (bodyDenial !== undefined) {
      sendDenial(res, bodyDenial)
      return undefined
    }
    req.principal = principal
    return principal
  }

  const authenticate: RequestHandler = async function authenticate(req, res, next) {
    let principal: Principal | undefined
    try {
      principal = await principalOf(req, res)
    } catch {
      return sendDenial(res, deny('service_unavailable'))
    }
    if (principal !== undefined) next()
  }

  return Object.freeze({
    authenticate,
    require<P = ParamsDictionary>(
      operation: Operation,
      resolve: ExpressResourceResolver<P>,
    ): RequestHandler<P> {
      checkRouteAccess(operation, resolve, `require(${JSON.stringify(operation)})`)
      return async function requireAccess(req, res, next) {
        let decision: Allow | Deny
        try {
          const principal = await principalOf(req, res)
          if (principal === undefined) return
          decision = await policy.guard(
            principal,
            operation,
            () => resolve(Object.assign(req, { principal })),
            requestFacts(req.ip),
          )
        } catch {
          return sendDenial(res, deny('service_unavailable'))
        }
        if (!decision.allowed) return sendDenial(res, decision)
        req.accessDecision = decision
        next()
      }
    },
    sendData(req: Request, res: Response, data: DataResponse): void {
      const prepared = prepareData(policy, req.accessDecision, data)
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
      const meter = createExportMeter(requireAllow(req.accessDecision, 'streamData'))
      const source = meterChunks(chunks, meter)
      return pipeToNodeResponse(
        res,
        init.status ?? 200,
        init.contentType ?? DEFAULT_STREAM_TYPE,
        source,
      ).then(() => {})
    },
    sendDenial,
  })
}
