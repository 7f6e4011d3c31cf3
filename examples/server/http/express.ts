/**
 * The reference server on Express 5: each neutral route becomes an Express route guarded with the
 * Express adapter. Routing is case-sensitive and strict about trailing slashes, like Fastify's and
 * Hono's defaults; `trust proxy` is the `--trust-proxy` list.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { deny } from 'data-access-policy'
import { accessControl, requestOrigin } from 'data-access-policy/express'
import { mcpExpress } from 'data-access-policy/mcp'
import express, { type Request, type RequestHandler, type Response } from 'express'
import type { App } from '../app.js'
import { MCP_PATH, METHOD_NOT_ALLOWED, serveNode } from '../mcp/mcp-endpoint.js'
import { bodyLimits, bodyReader, largeBodyClaims, type ReadBody, readRequestBody } from '../request/body.js'
import { neutralRequest } from '../request/neutral.js'
import { INTERNAL_ERROR } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult } from '../routes/route-set.js'
import {
  type BindingOptions,
  createFrontDoorServer,
  listen,
  type RunningServer,
  writeJson,
} from './front-door.js'
import { bodyOf, headersOf } from './result-headers.js'
import { runRoute } from './run-route.js'
import { type TrustProxy, trustFunction } from './trust-proxy.js'

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete'

/**
 * Builds the Express application for an app's route sets.
 *
 * @example
 * const server = createServer(createExpressApp(app, false))
 */
export function createExpressApp(app: App, trustProxy: TrustProxy): express.Express {
  const web = express()
  web.set('case sensitive routing', true)
  web.set('strict routing', true)
  web.set('x-powered-by', false)
  web.set('etag', false)
  web.set('trust proxy', trustFunction(trustProxy))
  const access = accessControl({ policy: app.policy })

  // The app's body parser, as a host has one (`express.json()`, `express.urlencoded()`): it sets
  // `req.body`, which the adapter checks for an `access_token`, and keeps the bytes for the handlers.
  const bodies = new WeakMap<Request, ReadBody>()
  const limitOf = bodyLimits(app.routeSets)
  const claimOf = largeBodyClaims(app.routeSets, (address) => app.guard.network(address))
  web.use(async function parseBody(req: Request, _res: Response, next: express.NextFunction) {
    try {
      const contentType = req.headers['content-type']
      const { read, parameters } = await readRequestBody(req, contentType, limitOf(req.method, req.url), {
        claim: claimOf(req.method, req.url, req.headers, () => requestOrigin(req).clientAddress),
        pace: app.largeBodyPace,
      })
      bodies.set(req, read)
      req.body = parameters
      next()
    } catch (error) {
      next(error)
    }
  })

  // One neutral request per Express request, shared by the resolver and the handler.
  const requests = new WeakMap<Request, ApiRequest>()
  const neutral = (req: Request): ApiRequest => {
    let request = requests.get(req)
    if (request === undefined) {
      request = neutralRequest(req, {
        params: req.params as Record<string, string>,
        principal: () => req.principal,
        // The adapter's own reading of the client, so pages and the API agree on it.
        ...requestOrigin(req),
        target: req.originalUrl,
        body: bodyReader(bodies.get(req)),
      })
      requests.set(req, request)
    }
    return request
  }

  const send = (req: Request, res: Response, result: RouteResult): void => {
    switch (result.kind) {
      case 'json':
      case 'html':
      case 'asset':
      case 'redirect': {
        const body = bodyOf(result)
        res.statusCode = result.status
        for (const [name, value] of Object.entries(headersOf(result))) res.setHeader(name, value)
        res.setHeader('content-length', Buffer.byteLength(body))
        res.end(body)
        return
      }
      case 'data':
        access.sendData(req, res, {
          body: result.body,
          records: result.records,
          contentType: result.contentType,
          status: result.status,
        })
        return
      case 'denial':
        access.sendDenial(res, result.deny)
        return
    }
  }

  const mount = (route: Route): void => {
    const handlers: RequestHandler[] = []
    const guard = route.access
    if (guard?.operation !== undefined && guard.resource !== undefined) {
      const resolve = guard.resource
      handlers.push(access.require(guard.operation, (req) => resolve(neutral(req))))
    } else if (guard !== undefined) {
      handlers.push(access.authenticate)
    }
    handlers.push(async (req, res) => send(req, res, await runRoute(route, neutral(req), app.reportError)))
    web[route.method.toLowerCase() as Method](route.path, ...handlers)
  }

  for (const set of app.routeSets) for (const route of set.routes) mount(route)
  mountMcp(web, app)
  web.use((_req: Request, res: Response) => access.sendDenial(res, deny('not_found')))
  web.use((error: unknown, _req: Request, res: Response, _next: express.NextFunction) => {
    console.error('express:', error)
    if (res.headersSent) res.destroy()
    else writeJson(res, INTERNAL_ERROR.status, INTERNAL_ERROR.body)
  })
  return web
}

// `/mcp`: the library's guard, then the SDK's Node transport, on the body the app's parser read.
function mountMcp(web: express.Express, app: App): void {
  web.post(MCP_PATH, mcpExpress(app.mcp.gate), (req, res, next) => {
    serveNode(app.mcp, req, res, req.body).catch(next)
  })
  web.all(MCP_PATH, (_req, res) => {
    res.writeHead(METHOD_NOT_ALLOWED.status, METHOD_NOT_ALLOWED.headers).end(METHOD_NOT_ALLOWED.body)
  })
}

/**
 * Serves an app with Express.
 *
 * @example
 * const server = await startExpress(app, { host: '127.0.0.1', port: 0, trustProxy: false })
 */
export function startExpress(app: App, options: BindingOptions): Promise<RunningServer> {
  const web = createExpressApp(app, options.trustProxy)
  const server = createFrontDoorServer(app, (req: IncomingMessage, res: ServerResponse) => web(req, res))
  return listen(server, options)
}
