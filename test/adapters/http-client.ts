import { type IncomingHttpHeaders, request } from 'node:http'

/** A request sent byte for byte: the path is not normalized, headers may repeat. */
export interface RawRequest {
  readonly method?: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string | readonly string[]>>
  readonly body?: string
}

/** What came back; `complete` is false when the transfer broke off (status 0: before any response). */
export interface RawAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly complete: boolean
}

/**
 * Sends one request to 127.0.0.1 over a fresh connection with `node:http`, which (unlike `fetch`)
 * keeps `..` segments, repeated headers and odd header bytes as given.
 *
 * @example
 * const answer = await sendRaw(port, { path: '/api/v1/x', headers: { authorization: ['Bearer a', 'Bearer b'] } })
 */
export function sendRaw(port: number, raw: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(raw.headers ?? {}))
      headers[name] = typeof value === 'string' ? value : [...value]
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: raw.method ?? 'GET',
        path: raw.path,
        headers,
        agent: false,
        // An idle socket this long is a hang, not a slow machine: fail with the request named.
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', () => {})
        res.on('close', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('latin1'),
            complete: res.complete,
          }),
        )
      },
    )
    req.on('timeout', () => req.destroy(new Error(`timed out: ${raw.method ?? 'GET'} ${raw.path}`)))
    // A connection broken before any response is an answer too: a transfer that never completed.
    req.on('error', (error) => {
      if (error.message.startsWith('timed out')) reject(error)
      else resolve({ status: 0, headers: {}, body: '', complete: false })
    })
    req.end(raw.body)
  })
}
