/**
 * A strict path-prefix reverse proxy for the tests, as a deployment puts in front of a server
 * started with `--public-url http://127.0.0.1:PORT/dap`: it forwards `/dap/…` and `/.well-known/…`
 * to the server unchanged and answers 404 to everything else, recording what it refused, so that a
 * page address that leaves the prefix shows up as a refusal.
 */
import { createServer, request } from 'node:http'
import { listening } from '../adapters/listen.js'

/** The prefix the proxy serves. */
export const PROXY_PREFIX = '/dap'

/** A listening proxy. */
export interface PrefixProxy {
  readonly port: number
  /** `http://127.0.0.1:PORT/dap`: the server's `--public-url`. */
  readonly publicUrl: string
  /** `METHOD target` of every request answered 404 here, in order. */
  readonly refused: readonly string[]
  close(): Promise<void>
}

/** Whether the proxy forwards a request target. */
export function forwards(target: string): boolean {
  return target.startsWith(`${PROXY_PREFIX}/`) || target.startsWith('/.well-known/')
}

/**
 * Starts the proxy on 127.0.0.1; `upstream` gives the server's port once it is known (the server
 * needs the proxy's address first, for its `--public-url`).
 *
 * @example
 * let port = 0
 * const proxy = await startPrefixProxy(() => port)
 * const server = await startServer({ …, publicUrl: proxy.publicUrl })
 * port = server.port
 */
export async function startPrefixProxy(upstream: () => number): Promise<PrefixProxy> {
  const refused: string[] = []
  const server = createServer((incoming, outgoing) => {
    const target = incoming.url ?? ''
    if (!forwards(target)) {
      refused.push(`${incoming.method} ${target}`)
      incoming.resume()
      outgoing.writeHead(404, { 'content-type': 'text/plain' }).end('not forwarded by the proxy')
      return
    }
    const forwarded = request(
      {
        host: '127.0.0.1',
        port: upstream(),
        method: incoming.method,
        path: target,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    forwarded.on('error', () => outgoing.writeHead(502).end())
    incoming.pipe(forwarded)
  })
  const { port, close } = await listening(server.listen(0, '127.0.0.1'))
  return { port, publicUrl: `http://127.0.0.1:${port}${PROXY_PREFIX}`, refused, close }
}
