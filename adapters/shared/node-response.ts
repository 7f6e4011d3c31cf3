import type { ServerResponse } from 'node:http'
import type { HttpDenial } from '../../src/index.js'

/**
 * Whether a Node socket is a TLS one (a `TLSSocket` has `encrypted: true`; a plain one has no such
 * property).
 *
 * @example
 * isEncrypted(req.socket) // false on plain HTTP
 */
export function isEncrypted(socket: object): boolean {
  return (socket as { readonly encrypted?: unknown }).encrypted === true
}

/** What {@link whenClosed} needs of a response: Node's `ServerResponse` has it (@hono/node-server's `outgoing` too). */
export interface ClosingResponse {
  readonly destroyed: boolean
  once(event: 'close', listener: () => void): unknown
}

/**
 * Runs `then` once the response is done: on its `close`, which follows `finish` and also ends a
 * response the client abandoned or the server broke off; at once when it is closed already (a client
 * that went away while the policy waited for its store).
 *
 * @example
 * whenClosed(res, () => tellAtEnd(policy, entry, sentStatus(res)))
 */
export function whenClosed(res: ClosingResponse, then: () => void): void {
  if (res.destroyed) then()
  else res.once('close', then)
}

/**
 * The status a response was sent with, for the decision event: `undefined` when no header went out
 * (a client gone before the answer), so that the event keeps the status the policy decided.
 *
 * @example
 * tellAtEnd(policy, entry, sentStatus(res))
 */
export function sentStatus(res: {
  readonly headersSent: boolean
  readonly statusCode: number
}): number | undefined {
  return res.headersSent ? res.statusCode : undefined
}

/**
 * Writes a rendered denial to a Node response, byte for byte as the policy rendered it. A response
 * that has already started cannot change its status: it is broken off instead.
 *
 * @example
 * writeDenial(res, policy.render(decision))
 */
export function writeDenial(res: ServerResponse, denial: HttpDenial): void {
  if (res.headersSent || res.writableEnded) {
    res.destroy()
    return
  }
  res.statusCode = denial.status
  for (const [name, value] of Object.entries(denial.headers)) res.setHeader(name, value)
  res.setHeader('content-length', Buffer.byteLength(denial.body))
  res.end(denial.body)
}

/**
 * Writes a complete body with its status, type and length.
 *
 * @example
 * writeBody(res, { status: 200, contentType: 'text/csv', bytes })
 */
export function writeBody(
  res: ServerResponse,
  body: { readonly status: number; readonly contentType: string; readonly bytes: Uint8Array },
): void {
  res.statusCode = body.status
  res.setHeader('content-type', body.contentType)
  res.setHeader('content-length', body.bytes.byteLength)
  res.end(body.bytes)
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

/**
 * Streams chunks to a Node response with backpressure. Never rejects: when the source throws (a
 * passed export cap, a failing host iterator) the socket is destroyed, so the client sees a broken
 * transfer; a client that goes away stops the source. Resolves true when the body was completed.
 *
 * @example
 * await pipeToNodeResponse(res, 200, 'application/json', meterChunks(rows, meter))
 */
export async function pipeToNodeResponse(
  res: ServerResponse,
  status: number,
  contentType: string,
  source: AsyncIterable<Uint8Array>,
): Promise<boolean> {
  try {
    res.statusCode = status
    res.setHeader('content-type', contentType)
    for await (const bytes of source) {
      // Leaving the loop returns the source, which in turn closes the host's iterator.
      if (res.destroyed) return false
      if (!res.write(bytes)) await drainedOrClosed(res)
    }
    if (res.destroyed) return false
    res.end()
    return true
  } catch {
    res.destroy()
    return false
  }
}
