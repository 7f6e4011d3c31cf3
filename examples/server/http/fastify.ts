/**
 * The reference server on Fastify 5: each neutral route becomes a Fastify route whose
 * `config.access` the adapter plugin enforces. Fastify's defaults already route case-sensitively
 * and strictly about trailing slashes; `trustProxy` is the `--trust-proxy` list.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { deny } from 'data-access-policy'
import { accessControl, requestOrigin } from 'data-access-policy/fastify'
import { nodeMcpRequest } from 'data-access-policy/mcp'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import type { App } from '../app.js'
import { MCP_PATH, METHOD_NOT_ALLOWED, serveNode } from '../mcp/mcp-endpoint.js'
import { bodyLimits, bodyReader, largeBodyClaims, type ReadBody, readRequestBody } from '../request/body.js'
import { neutralRequest } from '../request/neutral.js'
import { INTERNAL_ERROR, JSON_CONTENT_TYPE } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteResult } from '../routes/route-set.js'
import {
  type BindingOptions,
  closeServer,
  createFrontDoorServer,
  listen,
  type RunningServer,
} from './front-door.js'
import { bodyOf, headersOf } from './result-headers.js'
import { runRoute } from './run-route.js'
import { trustFunction } from './trust-proxy.js'

// The Fastify instance, on a front-door server.
function createInstance(app: App, trustProxy: BindingOptions['trustProxy']) {
  return Fastify({
    trustProxy: trustFunction(trustProxy),
    // Path segments of any length reach the routes, as on Express and Hono (Fastify's default of
    // 100 characters answers its own 414); Node's header size limit bounds the target anyway.
    routerOptions: { maxParamLength: 65_536 },
    serverFactory: (handler) =>
      createFrontDoorServer(app, handler as (req: IncomingMessage, res: ServerResponse) => void),
  })
}

type FastifyApp = ReturnType<typeof createInstance>

// One body parser for every content type, as on Express and Hono: it sets `request.body`, which
// the adapter checks for an `access_token`, and keeps the bytes for the handlers (returned here,
// by request). GET bodies are parsed too (the listing reads a JSON body on GET, as the contract's
// example sends one).
function readEveryBody(web: FastifyApp, app: App): WeakMap<FastifyRequest, ReadBody> {
  web.addHttpMethod('GET', { hasBody: true, overrideExisting: true })
  const bodies = new WeakMap<FastifyRequest, ReadBody>()
  web.removeAllContentTypeParsers()
  // Fastify refuses a `Content-Type` it cannot parse (`;;;`, `a/b/c`) before any parser runs, and
  // the body reader judges content types itself, as on Express and Hono: the header is hidden from
  // Fastify until its parser runs, which reads it from here, and given back before the handlers.
  const contentTypes = new WeakMap<IncomingMessage, string>()
  web.addHook('onRequest', async (request) => {
    const contentType = request.raw.headers['content-type']
    if (contentType === undefined) return
    contentTypes.set(request.raw, contentType)
    delete request.raw.headers['content-type']
  })
  web.addHook('preValidation', async (request) => {
    const contentType = contentTypes.get(request.raw)
    if (contentType !== undefined) request.raw.headers['content-type'] = contentType
  })
  // Fastify's own bodyLimit does not apply to a parser that reads the stream itself: this cap does.
  const limitOf = bodyLimits(app.routeSets)
  const claimOf = largeBodyClaims(app.routeSets, (address) => app.guard.network(address))
  web.addContentTypeParser('*', function parseBody(request, payload, done) {
    const { method, url, headers } = request.raw
    const claim = claimOf(method, url, headers, () => requestOrigin(request).clientAddress)
    readRequestBody(payload, contentTypes.get(request.raw), limitOf(method, url), {
      claim,
      pace: app.largeBodyPace,
    }).then(({ read, parameters }) => {
      bodies.set(request, read)
      done(null, parameters)
    }, done)
  })
  return bodies
}

// The neutral request of a Fastify request, built once per request and shared by its access
// check and its handler.
function neutralRequests(bodies: WeakMap<FastifyRequest, ReadBody>): (request: FastifyRequest) => ApiRequest {
  const requests = new WeakMap<FastifyRequest, ApiRequest>()
  return (request) => {
    let found = requests.get(request)
    if (found === undefined) {
      found = neutralRequest(request.raw, {
        params: request.params as Record<string, string>,
        principal: () => request.principal,
        // The adapter's own reading of the client, so pages and the API agree on it.
        ...requestOrigin(request),
        body: bodyReader(bodies.get(request)),
      })
      requests.set(request, found)
    }
    return found
  }
}

function send(reply: FastifyReply, result: RouteResult): FastifyReply {
  switch (result.kind) {
    case 'json':
    case 'html':
    case 'asset':
    case 'redirect':
      for (const [name, value] of Object.entries(headersOf(result))) {
        reply.header(name, typeof value === 'string' ? value : [...value])
      }
      // An empty body goes as no payload: Fastify would label an empty string `text/plain`.
      return reply.code(result.status).send(result.kind === 'redirect' ? undefined : bodyOf(result))
    case 'data':
      return reply.sendData({
        body: result.body,
        records: result.records,
        contentType: result.contentType,
        status: result.status,
      })
    case 'denial':
      return reply.sendDenial(result.deny)
  }
}

function mountRoute(
  web: FastifyApp,
  app: App,
  neutral: (request: FastifyRequest) => ApiRequest,
  route: Route,
): void {
  const guard = route.access
  const resolve = guard?.resource
  const access =
    guard === undefined
      ? undefined
      : guard.operation !== undefined && resolve !== undefined
        ? { operation: guard.operation, resource: (request: FastifyRequest) => resolve(neutral(request)) }
        : {}
  web.route({
    method: route.method,
    url: route.path,
    ...(access === undefined ? {} : { config: { access } }),
    handler: async (request, reply) => send(reply, await runRoute(route, neutral(request), app.reportError)),
  })
}

// `/mcp`: the library's check on the parsed body, then the SDK's Node transport on the raw response.
function mountMcp(web: FastifyApp, app: App): void {
  web.post(MCP_PATH, async (request, reply) => {
    const checked = await app.mcp.gate.check(
      nodeMcpRequest(request.raw, requestOrigin(request), request.body),
    )
    if (!checked.ok) {
      const { status, headers, body } = checked.denial
      return reply.code(status).headers(headers).send(body)
    }
    reply.hijack()
    await serveNode(app.mcp, Object.assign(request.raw, { auth: checked.authInfo }), reply.raw, request.body)
    return reply
  })
  web.route({
    method: ['GET', 'DELETE'],
    url: MCP_PATH,
    handler: (_request, reply) =>
      reply.code(METHOD_NOT_ALLOWED.status).headers(METHOD_NOT_ALLOWED.headers).send(METHOD_NOT_ALLOWED.body),
  })
}

// No route: the policy's 404. A handler that throws: the one JSON 500, its error logged.
function answerUnrouted(web: FastifyApp): void {
  web.setNotFoundHandler((_request, reply) => reply.sendDenial(deny('not_found')))
  web.setErrorHandler((error, _request, reply) => {
    console.error('fastify:', error)
    return reply
      .code(INTERNAL_ERROR.status)
      .header('content-type', JSON_CONTENT_TYPE)
      .send(JSON.stringify(INTERNAL_ERROR.body))
  })
}

/**
 * Builds the Fastify instance for an app's route sets, on a front-door server.
 *
 * @example
 * const web = await createFastifyApp(app, false)
 */
export async function createFastifyApp(app: App, trustProxy: BindingOptions['trustProxy']) {
  const web = createInstance(app, trustProxy)
  const bodies = readEveryBody(web, app)
  await web.register(accessControl, { policy: app.policy })
  const neutral = neutralRequests(bodies)
  for (const set of app.routeSets) for (const route of set.routes) mountRoute(web, app, neutral, route)
  mountMcp(web, app)
  answerUnrouted(web)
  return web
}

/**
 * Serves an app with Fastify.
 *
 * @example
 * const server = await startFastify(app, { host: '127.0.0.1', port: 0, trustProxy: false })
 */
export async function startFastify(app: App, options: BindingOptions): Promise<RunningServer> {
  const web = await createFastifyApp(app, options.trustProxy)
  await web.ready()
  const server = web.server as Server
  // Malformed HTTP (conflicting framing headers, say) never reaches a framework: leave its answer
  // to Node, as on Express and Hono, rather than to Fastify's own JSON.
  server.removeAllListeners('clientError')
  // Fastify closes only a server it started listening itself; this one was started by `listen`.
  return listen(server, options, async () => {
    await web.close()
    await closeServer(server)
  })
}
