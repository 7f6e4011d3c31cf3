/**
 * `POST /secret-scanning/report`: leak reports in the GitHub secret-scanning partner format
 * (docs/tokens.md, "When a token leaks"). A report is a JSON array of
 * `{ token, type, url, source }`, signed with ECDSA P-256 / SHA-256 over the raw body; the key's
 * identifier and the base64 DER signature come in `Github-Public-Key-Identifier` and
 * `Github-Public-Key-Signature`.
 *
 * In this order, and nothing is revoked unless every step passes:
 * 1. the signature, against the configured keys (`--secret-scanning-keys`): else 401 `invalid_signature`;
 * 2. the body's shape: else 400 `malformed_report`;
 * 3. replays: the same body within a day (report-replays.ts) is 409 `replayed_report`;
 * 4. every reported value that authenticates today is revoked, the reason recorded as
 *    `found public at URL` (the owner's settings pages show it).
 *
 * The answer is the partner format's feedback, one entry per reported token, in order:
 * `{ token_hash, token_type, label }`: `true_positive` for a value of one of this server's tokens
 * (revoked now or already dead), `false_positive` for anything else. The format also allows
 * `token_raw`; the server sends the SHA-256 instead, because it never echoes a token value.
 * A store failure is 503 and forgets the report, so that GitHub's retry is not taken for a replay.
 */
import { createHash, type KeyObject, verify } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import {
  hashTokenValue,
  isWellFormedTokenValue,
  MAX_REVOKED_REASON_LENGTH,
  revokeToken,
  type TokenStore,
  tokenStatusOfHash,
} from 'data-access-policy'
import {
  BodyReadersBusyError,
  BodyTooLargeError,
  LargeBodyRefusedError,
  LengthRequiredError,
} from '../request/body.js'
import { bodyTooLarge, errorResult, json } from '../routes/http-result.js'
import { type ApiRequest, MAX_BODY_BYTES, type RouteResult, type RouteSet } from '../routes/route-set.js'
import { REPLAY_WINDOW_MS, type ReportReplayStore } from './report-replays.js'
import type { SecretScanningKeys } from './secret-scanning-keys.js'

/** Where leak reports are posted. */
export const LEAK_REPORT_PATH = '/secret-scanning/report'

/** The header naming the key that signed a report. */
export const KEY_ID_HEADER = 'github-public-key-identifier'
/** The header carrying a report's base64 DER ECDSA signature. */
export const SIGNATURE_HEADER = 'github-public-key-signature'

/** What the leak endpoint works with. */
export interface LeakReportContext {
  readonly tokens: TokenStore
  readonly keys: SecretScanningKeys
  readonly replays: ReportReplayStore
  readonly now: () => number
  /** Told of every revocation (never a value) and of store failures. */
  readonly log?: (line: string) => void
}

/** One reported match. */
interface ReportedToken {
  readonly token: string
  readonly type: string
  readonly url: string
  readonly source: string
}

/** The partner format's feedback on one reported token. */
export interface LeakFeedback {
  readonly token_hash: string
  readonly token_type: string
  readonly label: 'true_positive' | 'false_positive'
}

/** The most entries a leak report carries: GitHub batches matches, and a larger report is not one of its. */
export const MAX_REPORTED = 1000

// The longest entry a real report carries, in bytes of JSON: the token, 128 (a value matching the
// published pattern is 42 characters; the rest is room for JSON escapes); the type
// (`data_access_policy_oauth_token` is 30) and the source (`discussion_comment`,
// `pull_request_body`: under 32), 64 each; the URL, 2,048 (GitHub's blob URL of a file deep in a
// long repository at a 40-hex commit, with room for percent-encoding); and the keys, quotes, braces
// and comma of `{"token":"…","type":"…","url":"…","source":"…"},` with pretty-printing's
// indentation, 128.
const MAX_ENTRY_BYTES = 128 + 64 + 64 + 2048 + 128

/**
 * The largest leak report the endpoint reads: {@link MAX_REPORTED} entries of the longest a real
 * report carries, 1000 × 2,432 = 2,432,000 bytes (about 2.3 MiB). Every other route keeps the 64 KiB
 * `MAX_BODY_BYTES`; this one is documented to take up to 1000 entries, which that cap refused from
 * about 350 entries of a short URL.
 */
export const MAX_LEAK_REPORT_BYTES = MAX_REPORTED * MAX_ENTRY_BYTES

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

const BAD_SIGNATURE = (detail: string) => errorResult(401, 'invalid_signature', 'Unauthorized', detail)

/**
 * Whether `der` has the shape of an ECDSA P-256 signature in DER, `SEQUENCE { INTEGER r, INTEGER s }`
 * (RFC 3279 §2.2.3), each integer at most 33 bytes: what a signature header must hold before its
 * sender may send more than {@link MAX_BODY_BYTES}.
 *
 * @example
 * isDerEcdsaSignature(sign('sha256', body, privateKey)) // true
 * isDerEcdsaSignature(Buffer.from('not a signature'))   // false
 */
export function isDerEcdsaSignature(der: Uint8Array): boolean {
  if (der.length < 8 || der.length > 72 || der[0] !== 0x30 || der[1] !== der.length - 2) return false
  let at = 2
  for (let integer = 0; integer < 2; integer++) {
    const length = der[at + 1] ?? 0
    if (der[at] !== 0x02 || length < 1 || length > 33 || at + 2 + length > der.length) return false
    at += 2 + length
  }
  return at === der.length
}

type SignatureHeaders = { readonly key: KeyObject; readonly signature: Buffer } | { readonly refusal: string }

const first = (value: string | readonly string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined

// The headers alone: a configured key's identifier and a signature that parses. Checked before the
// body may pass the default cap (the route's large-body gate), and again with the body.
function signatureHeaders(headers: IncomingHttpHeaders, keys: SecretScanningKeys): SignatureHeaders {
  const id = first(headers[KEY_ID_HEADER])
  const signature = first(headers[SIGNATURE_HEADER])
  if (id === undefined || signature === undefined) {
    return { refusal: 'Github-Public-Key-Identifier and Github-Public-Key-Signature are required' }
  }
  const key = keys.get(id)
  if (key === undefined) return { refusal: 'the signing key is not one of the configured keys' }
  const der = BASE64.test(signature) ? Buffer.from(signature, 'base64') : undefined
  if (der === undefined || !isDerEcdsaSignature(der)) return { refusal: 'the signature does not verify' }
  return { key, signature: der }
}

function verified(body: Buffer, request: ApiRequest, keys: SecretScanningKeys): RouteResult | undefined {
  const headers = signatureHeaders(request.headers, keys)
  if ('refusal' in headers) return BAD_SIGNATURE(headers.refusal)
  let valid = false
  try {
    valid = verify('sha256', body, headers.key, headers.signature)
  } catch {
    // A signature that parses but that the key's curve rejects: as invalid as a wrong one.
  }
  return valid ? undefined : BAD_SIGNATURE('the signature does not verify')
}

function parseReport(body: Buffer): readonly ReportedToken[] | string {
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch {
    return 'the body is not JSON'
  }
  if (!Array.isArray(json) || json.length === 0 || json.length > MAX_REPORTED) {
    return `the body must be a JSON array of 1-${MAX_REPORTED} reported tokens`
  }
  const reported: ReportedToken[] = []
  for (const [index, entry] of json.entries()) {
    const { token, type, url, source } = (entry ?? {}) as Record<string, unknown>
    if (
      typeof entry !== 'object' ||
      entry === null ||
      Array.isArray(entry) ||
      typeof token !== 'string' ||
      typeof type !== 'string' ||
      typeof url !== 'string' ||
      typeof source !== 'string'
    ) {
      return `[${index}] must be an object with string token, type, url and source`
    }
    reported.push({ token, type, url, source })
  }
  return reported
}

function reasonOf(report: ReportedToken): string {
  const url = report.url.replace(CONTROL_CHARACTERS, '').trim()
  const source = report.source.replace(CONTROL_CHARACTERS, '').trim()
  const reason = url !== '' ? `found public at ${url}` : `found public (source: ${source || 'unknown'})`
  // Cut on a code point, with room for the ellipsis.
  const points = [...reason]
  return points.length <= MAX_REVOKED_REASON_LENGTH
    ? reason
    : `${points.slice(0, MAX_REVOKED_REASON_LENGTH - 1).join('')}…`
}

/**
 * Builds the leak report route set.
 *
 * @example
 * const routes = leakReportRoutes({ tokens, keys, replays: new MemoryReportReplayStore(), now: Date.now })
 */
export function leakReportRoutes(context: LeakReportContext): RouteSet {
  const { tokens, keys, replays, now } = context
  const log = context.log ?? (() => {})

  // Every reported value's feedback, revoking the live ones; a store failure rejects.
  const act = async (reported: readonly ReportedToken[]): Promise<LeakFeedback[]> => {
    const feedback: LeakFeedback[] = []
    for (const report of reported) {
      const hash = hashTokenValue(report.token)
      let label: LeakFeedback['label'] = 'false_positive'
      if (isWellFormedTokenValue(report.token)) {
        const record = await tokens.findByHash(hash)
        const status = record === undefined ? undefined : tokenStatusOfHash(record, hash, now())
        if (record !== undefined && status !== undefined) {
          label = 'true_positive'
          if (status === 'active') {
            const reason = reasonOf(report)
            await tokens.update(revokeToken(record, now(), reason))
            log(`secret scanning: revoked token ${record.id} of ${record.userId} (${reason})`)
          }
        }
      }
      feedback.push({ token_hash: hash, token_type: report.type, label })
    }
    return feedback
  }

  const handle = async (request: ApiRequest): Promise<RouteResult> => {
    let body: Buffer
    try {
      body = await request.body()
    } catch (error) {
      if (error instanceof BodyTooLargeError) return bodyTooLarge(error.limit)
      // Past the default cap without a known key and a signature that parses: refused unread.
      if (error instanceof LargeBodyRefusedError) {
        const headers = signatureHeaders(request.headers, keys)
        return BAD_SIGNATURE('refusal' in headers ? headers.refusal : 'the signature does not verify')
      }
      // A chunked body past the default cap: its pace deadline cannot be known, so it holds no slot.
      if (error instanceof LengthRequiredError) {
        return errorResult(
          411,
          'length_required',
          'Length required',
          `a report larger than ${MAX_BODY_BYTES} bytes must be sent with a Content-Length`,
        )
      }
      // Senders retry: a few seconds frees the slots of the large reports being read now.
      if (error instanceof BodyReadersBusyError) {
        return errorResult(
          503,
          'service_unavailable',
          'Service unavailable',
          'too many large reports are being read, or one from your network is; try again later',
          { 'retry-after': '5' },
        )
      }
      throw error
    }
    const unsigned = verified(body, request, keys)
    if (unsigned !== undefined) return unsigned
    const reported = parseReport(body)
    if (typeof reported === 'string') return errorResult(400, 'malformed_report', 'Bad request', reported)
    const digest = createHash('sha256').update(body).digest('hex')
    let fresh: boolean
    try {
      fresh = await replays.claim(digest, REPLAY_WINDOW_MS, now())
    } catch (error) {
      log(
        `secret scanning: cannot record a report: ${error instanceof Error ? error.message : String(error)}`,
      )
      return errorResult(503, 'service_unavailable', 'Service unavailable', 'try again later')
    }
    if (!fresh) return errorResult(409, 'replayed_report', 'Conflict', 'this report was already received')
    try {
      return json(await act(reported))
    } catch (error) {
      log(`secret scanning: a report failed: ${error instanceof Error ? error.message : String(error)}`)
      await replays.release(digest).catch(() => {})
      return errorResult(503, 'service_unavailable', 'Service unavailable', 'try again later')
    }
  }

  return {
    name: 'leak-reports',
    routes: [
      {
        method: 'POST',
        path: LEAK_REPORT_PATH,
        handle,
        maxBodyBytes: MAX_LEAK_REPORT_BYTES,
        // Turns away early what cannot be a report (no key, an unknown key, a signature that does
        // not parse). It cannot tell a stranger from GitHub — key identifiers are public and the
        // signature covers a body not read yet — so the slots' pace and per-network count are
        // what keep strangers from holding them (request/large-body.ts).
        largeBodyGate: (headers) => !('refusal' in signatureHeaders(headers, keys)),
      },
    ],
  }
}
