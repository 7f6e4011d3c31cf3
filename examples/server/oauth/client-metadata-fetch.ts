/**
 * Fetches a client ID metadata document (draft-ietf-oauth-client-id-metadata-document) without
 * letting a client aim the server at its own network (SSRF). The URL is checked by the library's
 * `checkClientIdUrl` first: a literal address that is not public is refused before any connection.
 * A host name is resolved by a `lookup` that checks EVERY address it returns with `isPublicAddress`
 * and hands the socket only checked addresses: the connection goes to an address that was checked,
 * so a DNS answer that changes between a check and the connect (rebinding) changes nothing. No
 * redirect is followed, the body is capped, and the whole fetch has one deadline.
 */
import type { LookupAddress } from 'node:dns'
import { lookup as dnsLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { checkClientIdUrl, isPublicAddress } from 'data-access-policy/oauth'

/** The largest document read, in bytes: a client's metadata fits in a few hundred. */
export const MAX_DOCUMENT_BYTES = 5 * 1024

/** How long one fetch may take, connection and body together. */
export const DOCUMENT_FETCH_DEADLINE_MS = 5000

/** A resolver in the shape of `dns.lookup` with `{ all: true }`. */
export type ResolveAll = (
  hostname: string,
  callback: (error: NodeJS.ErrnoException | null, addresses: readonly LookupAddress[]) => void,
) => void

/** Options of {@link fetchClientMetadataDocument}. */
export interface FetchDocumentOptions {
  /** `--client-metadata-allow-http-loopback`: also fetch `http://127.0.0.1…` and `http://[::1]…`. */
  readonly allowHttpLoopback?: boolean
  /** The resolver; `dns.lookup` by default. Tests inject one that answers private addresses. */
  readonly resolve?: ResolveAll
  /**
   * The certificate authorities an `https` document's server certificate must chain to, as PEM
   * (one string or several), in place of Node's bundled roots: for tests that serve documents on
   * loopback with a test certificate, and for private deployments whose clients publish documents
   * under an internal CA. Absent: the public roots. The SSRF checks hold either way.
   */
  readonly ca?: string | readonly string[]
  readonly maxBytes?: number
  readonly deadlineMs?: number
}

/** What a fetch gave: the parsed JSON and its `Cache-Control`, or why there is no document. */
export type FetchedDocument =
  | { readonly ok: true; readonly document: unknown; readonly cacheControl: string | undefined }
  | { readonly ok: false; readonly reason: string }

const resolveWithDns: ResolveAll = (hostname, callback) =>
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => callback(error, addresses ?? []))

/**
 * The socket's `lookup`: resolves the name, refuses the whole answer when any address in it is not
 * public (a name that points anywhere inside is no client's), and answers with the checked
 * addresses only.
 */
export function checkedLookup(resolve: ResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (error, addresses) => {
      if (error !== null) return callback(error, '', 4)
      const refused = addresses.find((each) => !isPublicAddress(each.address))
      if (addresses.length === 0 || refused !== undefined) {
        const detail = refused === undefined ? 'no address' : `${refused.address}, which is not public`
        const denied = Object.assign(new Error(`${hostname} resolves to ${detail}`), { code: 'ENOTPUBLIC' })
        return callback(denied, '', 4)
      }
      const wanted = addresses.filter(
        (each) => options.family === undefined || options.family === 0 || each.family === options.family,
      )
      if (options.all === true) return (callback as (e: null, a: LookupAddress[]) => void)(null, wanted)
      const first = wanted[0] ?? addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

/**
 * Fetches and parses the document at `clientId` (a client ID metadata document URL): `GET` with
 * `Accept: application/json`, no cookies or credentials, no redirect (a 3xx is a refusal), a 200
 * with a JSON body of at most {@link MAX_DOCUMENT_BYTES}, within {@link DOCUMENT_FETCH_DEADLINE_MS}.
 * Never throws: every failure is `{ ok: false, reason }`. An `https` document is trusted through
 * Node's public roots, or through `options.ca` alone when given (tests, private deployments).
 *
 * @example
 * const fetched = await fetchClientMetadataDocument('https://app.example.com/client.json')
 */
export function fetchClientMetadataDocument(
  clientId: string,
  options: FetchDocumentOptions = {},
): Promise<FetchedDocument> {
  const check = checkClientIdUrl(clientId, { allowHttpLoopback: options.allowHttpLoopback === true })
  if (!check.ok)
    return Promise.resolve({ ok: false, reason: `the client_id URL is refused: ${check.reason}` })
  const maxBytes = options.maxBytes ?? MAX_DOCUMENT_BYTES
  const deadlineMs = options.deadlineMs ?? DOCUMENT_FETCH_DEADLINE_MS
  const { url } = check
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve) => {
    let settled = false
    const finish = (answer: FetchedDocument) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      resolve(answer)
    }
    const request = client.request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'data-access-policy-reference-server' },
      // A literal address was checked above; a name is checked, address by address, here.
      lookup: checkedLookup(options.resolve ?? resolveWithDns),
      agent: false,
      ...(options.ca === undefined
        ? {}
        : { ca: typeof options.ca === 'string' ? options.ca : [...options.ca] }),
    })
    const timer = setTimeout(
      () => finish({ ok: false, reason: `no document within ${deadlineMs} ms` }),
      deadlineMs,
    )
    request.on('error', (error) =>
      finish({ ok: false, reason: `the document could not be fetched: ${error.message}` }),
    )
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        return finish({
          ok: false,
          reason: `the document answered ${response.statusCode} (redirects are not followed)`,
        })
      }
      const type = response.headers['content-type'] ?? ''
      if (!/^application\/(?:[a-z0-9.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
        return finish({ ok: false, reason: `the document is ${JSON.stringify(type)}, not JSON` })
      }
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes)
          return finish({ ok: false, reason: `the document is larger than ${maxBytes} bytes` })
        chunks.push(chunk)
      })
      response.on('error', (error) =>
        finish({ ok: false, reason: `the document could not be read: ${error.message}` }),
      )
      response.on('end', () => {
        try {
          const document: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          finish({ ok: true, document, cacheControl: response.headers['cache-control'] })
        } catch {
          finish({ ok: false, reason: 'the document is not valid JSON' })
        }
      })
    })
    request.end()
  })
}
