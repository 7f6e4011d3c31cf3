/**
 * The reference server on Hono 4 over `@hono/node-server`: each neutral route becomes a Hono route
 * behind the adapter's middleware. Hono's default router is case-sensitive and strict about
 * trailing slashes; the adapter applies `--trust-proxy` to the connection's address.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { getRequestListener, type HttpBindings } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import { deny } from 'data-access-policy'
import { type AccessEnv, accessControl } from 'data-access-policy/hono'
import { type McpEnv, type McpHonoOptions, mcpHono } from 'data-access-policy/mcp'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import type { App } from '../app.js'
import { MCP_PATH, METHOD_NOT_ALLOWED, serveWeb } from '../mcp/mcp-endpoint.js'
import { bodyLimits, bodyReader, largeBodyClaims, type ReadBody, readRequestBody } from '../request/body.js'
import { neutralRequest } from '../request/neutral.js'
import { INTERNAL_ERROR, JSON_CONTENT_TYPE } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult } from '../routes/route-set.js'
import { type BindingOptions, createFrontDoorServer, listen, type RunningServer } from './front-door.js'
import { bodyOf, headersOf } from './result-headers.js'
import { runRoute } from './run-route.js'

type Env = AccessEnv & { Bindings: HttpBindings }

const NO_BODY = Buffer.alloc(0)

const bodies = new WeakMap<IncomingMessage, ReadBody>()

/**
 * The body is read ahead with the cap every binding applies (`limitOf`: the route's), and handed
 * to `@hono/node-server` as `incoming.rawBody` (its hook for a body read ahead, as Cloud Functions
 * do), from which it builds the Fetch request's body: the adapter then parses `c.req` for an
 * `access_token` as on any Hono app, and the handlers read the same bytes. A body past the cap
 * reaches Hono empty (its handler answers 413).
 */
function readBodyAhead(
  app: App,
  clientAddress: (c: Context<Env>) => string | undefined,
): MiddlewareHandler<Env> {
  const limitOf = bodyLimits(app.routeSets)
  const claimOf = largeBodyClaims(app.routeSets, (address) => app.guard.network(address))
  return async function readBodyAhead(c, next) {
    const incoming = c.env.incoming as IncomingMessage & { rawBody?: Buffer }
    const { method, url, headers } = incoming
    const { read } = await readRequestBody(incoming, headers['content-type'], limitOf(method, url), {
      claim: claimOf(method, url, headers, () => clientAddress(c)),
      pace: app.largeBodyPace,
    })
    bodies.set(incoming, read)
    incoming.rawBody = read.ok ? read.bytes : NO_BODY
    await next()
  }
}

// The adapter's middleware is typed for its own variables only; on this app its context also
// carries the Node bindings, which is all these two casts assert.
function withNodeBindings(handler: MiddlewareHandler<AccessEnv>): MiddlewareHandler<Env> {
  return handler as unknown as MiddlewareHandler<Env>
}

function withBindings(c: Context<AccessEnv>): Context<Env> {
  return c as unknown as Context<Env>
}

/**
 * Builds the Hono application for an app's route sets.
 *
 * @example
 * const web = createHonoApp(app, false)
 */
export function createHonoApp(app: App, trustProxy: BindingOptions['trustProxy']): Hono<Env> {
  const web = new Hono<Env>()
  const access = accessControl({
    policy: app.policy,
    getConnInfo,
    trustProxy: trustProxy === false ? false : [...trustProxy],
  })
  web.use(
    '*',
    readBodyAhead(app, (c) => access.requestOrigin(c).clientAddress),
  )

  const requests = new WeakMap<Context, ApiRequest>()
  const neutral = (c: Context<Env>): ApiRequest => {
    let found = requests.get(c)
    if (found === undefined) {
      const incoming = c.env.incoming
      found = neutralRequest(incoming, {
        params: c.req.param() as Record<string, string>,
        principal: () => c.get('principal'),
        // The adapter's own reading of the client (connection address, trusted forwarding
        // headers), so pages and the API agree on it.
        ...access.requestOrigin(c),
        body: bodyReader(bodies.get(incoming)),
      })
      requests.set(c, found)
    }
    return found
  }

  const send = (c: Context<Env>, result: RouteResult): Response => {
    switch (result.kind) {
      case 'redirect': {
        // Written on the Node response: @hono/node-server labels any body-less Response
        // `text/plain`, which Express and Fastify do not send.
        const outgoing = c.env.outgoing
        outgoing.statusCode = result.status
        for (const [name, value] of Object.entries(headersOf(result))) {
          outgoing.setHeader(name, typeof value === 'string' ? value : [...value])
        }
        outgoing.setHeader('content-length', 0)
        outgoing.end()
        return RESPONSE_ALREADY_SENT
      }
      case 'json':
      case 'html':
      case 'asset': {
        const headers = new Headers()
        for (const [name, value] of Object.entries(headersOf(result))) {
          for (const each of typeof value === 'string' ? [value] : value) headers.append(name, each)
        }
        const body = bodyOf(result)
        headers.set('content-length', String(Buffer.byteLength(body)))
        return new Response(body, { status: result.status, headers })
      }
      case 'data':
        return access.sendData(c, {
          body: result.body,
          records: result.records,
          contentType: result.contentType,
          status: result.status,
        })
      case 'denial':
        return access.sendDenial(c, result.deny)
    }
  }

  const mount = (route: Route): void => {
    const handlers: MiddlewareHandler<Env>[] = []
    const guard = route.access
    const resolve = guard?.resource
    if (guard?.operation !== undefined && resolve !== undefined) {
      handlers.push(
        withNodeBindings(access.require(guard.operation, (c) => resolve(neutral(withBindings(c))))),
      )
    } else if (guard !== undefined) {
      handlers.push(withNodeBindings(access.authenticate))
    }
    handlers.push(async (c) => send(c, await runRoute(route, neutral(c), app.reportError)))
    web.on(route.method, route.path, ...(handlers as [MiddlewareHandler<Env>]))
  }

  for (const set of app.routeSets) for (const route of set.routes) mount(route)
  web.route('/', mcpRoutes(app, access.requestOrigin) as unknown as Hono<Env>)
  web.notFound((c) => access.sendDenial(c, deny('not_found')))
  web.onError((error, c) => {
    console.error('hono:', error)
    return c.body(JSON.stringify(INTERNAL_ERROR.body), INTERNAL_ERROR.status, {
      'content-type': JSON_CONTENT_TYPE,
    })
  })
  return web
}

// `/mcp`: the library's guard, then the SDK's web-standard transport.
function mcpRoutes(app: App, requestOrigin: McpHonoOptions['requestOrigin']): Hono<McpEnv> {
  const mcp = new Hono<McpEnv>()
  mcp.post(MCP_PATH, mcpHono(app.mcp.gate, { requestOrigin }), (c) =>
    serveWeb(app.mcp, c.req.raw, c.get('auth'), c.get('parsedBody')),
  )
  mcp.on(['GET', 'DELETE'], MCP_PATH, () => {
    const { status, headers, body } = METHOD_NOT_ALLOWED
    return new Response(body, { status, headers: { ...headers } })
  })
  return mcp
}

/**
 * Serves an app with Hono on Node.
 *
 * @example
 * const server = await startHono(app, { host: '127.0.0.1', port: 0, trustProxy: false })
 */
export function startHono(app: App, options: BindingOptions): Promise<RunningServer> {
  const web = createHonoApp(app, options.trustProxy)
  const listener = getRequestListener(web.fetch)
  const server = createFrontDoorServer(app, (req: IncomingMessage, res: ServerResponse) => {
    void listener(req, res)
  })
  return listen(server, options)
}
