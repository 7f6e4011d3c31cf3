import { request } from 'node:http'

/** A request exactly as it goes on the wire: the path is sent unnormalized, headers may repeat. */
export interface RawRequest {
  readonly method: string
  readonly path: string
  /** A header given as an array is sent once per value. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>
  readonly body?: string
}

/** What the conformance suite compares across frameworks. */
export interface RawResponse {
  readonly status: number
  readonly body: string
  readonly contentType: string | undefined
  readonly wwwAuthenticate: string | undefined
}

/**
 * Sends one request over a fresh connection (no keep-alive, so no request can affect another's
 * connection state) and reads the whole answer.
 */
export function send(port: number, raw: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method: raw.method,
        path: raw.path,
        headers: {
          ...raw.headers,
          connection: 'close',
          // Node frames a GET body only when told its length.
          ...(raw.body === undefined || raw.headers['transfer-encoding'] !== undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(raw.body)) }),
        } as Record<string, string | string[]>,
        agent: false,
      },
      (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('error', reject)
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            contentType: incoming.headers['content-type'],
            wwwAuthenticate: incoming.headers['www-authenticate'],
          }),
        )
      },
    )
    outgoing.on('error', reject)
    outgoing.end(raw.body)
  })
}
