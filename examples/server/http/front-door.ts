/**
 * The Node HTTP server every binding runs on. Its request listener is a front door in front of
 * the framework: a non-canonical target (request/target.ts) or a method no route uses is answered
 * with the policy's 404 before any router runs, so Express, Fastify and Hono never see the requests
 * on which their routers differ (percent-escapes, dot segments, Express's automatic OPTIONS); a
 * target under the public URL's path prefix reaches them without the prefix ({@link routeTarget}).
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { deny } from 'data-access-policy'
import type { App } from '../app.js'
import { LARGE_BODY_DEADLINE_MS } from '../request/body.js'
import { isCanonicalTarget } from '../request/target.js'
import { JSON_CONTENT_TYPE } from '../routes/http-result.js'
import type { TrustProxy } from './trust-proxy.js'

/** A server that is listening. */
export interface RunningServer {
  /** `http://HOST:PORT`, with the port actually bound. */
  readonly url: string
  readonly host: string
  readonly port: number
  /** Stops accepting connections, ends idle ones and resolves once the server is closed. */
  close(): Promise<void>
}

/** Where to listen. */
export interface ListenOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
}

/** Where and how a framework binding serves. */
export interface BindingOptions extends ListenOptions {
  /** Peers allowed to set `X-Forwarded-For` / `X-Forwarded-Proto` (http/trust-proxy.ts). */
  readonly trustProxy: TrustProxy
}

// RFC 9112 §3.2: a request without exactly one valid Host header is 400. Checked here because the
// frameworks disagree (Hono answers plain text, Express and Fastify route the request anyway).
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** True for a request whose `Host` header is a single syntactically valid `host[:port]`. */
export function hasValidHost(request: IncomingMessage): boolean {
  const values = request.headersDistinct.host
  return values?.length === 1 && HOST.test(values[0]!)
}

function methodsOf(app: App): ReadonlySet<string> {
  const methods = new Set(['HEAD'])
  for (const set of app.routeSets) for (const route of set.routes) methods.add(route.method)
  return methods
}

/**
 * The target the routers see. Behind a proxy that forwards `/PREFIX/…` as it is (the path of
 * `--public-url`), a request under the prefix is routed without it, here and nowhere else, so
 * every route answers there as the pages' own addresses say (web/page-paths.ts). Any other target
 * is routed as it came: `/.well-known/…` at the host's root, or a proxy that strips the prefix.
 *
 * @example
 * routeTarget(app, '/dap/signin?next=/dap/settings/tokens') // '/signin?next=/dap/settings/tokens' with --public-url …/dap
 */
export function routeTarget(app: Pick<App, 'origin'>, target: string | undefined): string | undefined {
  return target === undefined ? undefined : (app.origin.pages.route(target) ?? target)
}

/** Wraps a framework's request listener in the front door. */
export function frontDoor(
  app: App,
  next: (request: IncomingMessage, response: ServerResponse) => void,
): RequestListener {
  const methods = methodsOf(app)
  const notFound = app.policy.render(deny('not_found'))
  return (request, response) => {
    if (!hasValidHost(request)) {
      writeJson(response, 400, { error: { status: 400, message: 'Bad request', code: 'invalid_host' } })
      return
    }
    if (!methods.has(request.method ?? '')) {
      response.writeHead(notFound.status, notFound.headers).end(notFound.body)
      return
    }
    const target = routeTarget(app, request.url)
    if (isCanonicalTarget(target)) {
      request.url = target
      next(request, response)
      return
    }
    response.writeHead(notFound.status, notFound.headers).end(notFound.body)
  }
}

/**
 * How long a client may take to send a whole request, headers and body: Node's default of 300 s
 * let a slow sender hold a connection and its buffered body for five minutes. Twice the
 * large-body deadline, so that a leak report that meets it is never cut short here.
 */
const REQUEST_TIMEOUT_MS = 2 * LARGE_BODY_DEADLINE_MS

/**
 * How long a client may take to send a request's headers: a few hundred bytes that no real client
 * needs more than seconds for (Node's default is 60 s).
 */
const HEADERS_TIMEOUT_MS = 20_000

/** Creates the Node server with the front door before `next`, and the bounds above on slow clients. */
export function createFrontDoorServer(
  app: App,
  next: (request: IncomingMessage, response: ServerResponse) => void,
): Server {
  return createServer(
    { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS },
    frontDoor(app, next),
  )
}

/** Writes a JSON answer on a bare Node response: the bytes every binding sends for a JSON result. */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.statusCode = status
  res.setHeader('content-type', JSON_CONTENT_TYPE)
  res.setHeader('content-length', Buffer.byteLength(text))
  res.end(text)
}

/**
 * Starts `server` listening and describes where it ended up. `stop` closes it; by default the
 * Node server is closed directly (a framework may bring its own shutdown).
 */
export function listen(
  server: Server,
  options: ListenOptions,
  stop: () => Promise<void> = () => closeServer(server),
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error)
    server.once('error', onError)
    server.listen(options.port, options.host, () => {
      server.off('error', onError)
      const { port } = server.address() as AddressInfo
      const host = options.host
      let closing: Promise<void> | undefined
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
        host,
        port,
        close: () => {
          closing ??= stop()
          return closing
        },
      })
    })
  })
}

/** Closes a Node server; one that is not listening (any more) counts as closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!server.listening) {
      resolve()
      return
    }
    server.close((error) => (error ? reject(error) : resolve()))
    // Keep-alive connections would hold the close open until they time out.
    server.closeIdleConnections()
  })
}
