import { type AccessPolicy, type Allow, type Deny, InvalidArgumentError } from '../../src/index.js'

/** A complete data-content response, declared to the policy before its first byte. */
export interface DataResponse {
  /** The whole body; a string is sent as UTF-8. */
  readonly body: string | Uint8Array
  /** How many records (table rows) the body carries. */
  readonly records: number
  /** Default `application/json; charset=utf-8` for a string, `application/octet-stream` for bytes. */
  readonly contentType?: string
  /** Default 200. */
  readonly status?: number
}

/** One piece of a streamed data-content response. */
export interface DataChunk {
  /** The bytes to send; a string is sent as UTF-8. */
  readonly data: string | Uint8Array
  /**
   * How many records this chunk carries. Required in effect when the route's allow carries a record
   * cap: an uncounted chunk then breaks the transfer like a chunk past the cap.
   */
  readonly records?: number
}

/** Status and type of a streamed data-content response. */
export interface StreamInit {
  /** Default `application/json; charset=utf-8`. */
  readonly contentType?: string
  /** Default 200. */
  readonly status?: number
}

/** A data response ready to send, or the denial to send instead. */
export type PreparedData =
  | { readonly ok: true; readonly status: number; readonly contentType: string; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly decision: Deny }

/** The default content type of a streamed response. */
export const DEFAULT_STREAM_TYPE = 'application/json; charset=utf-8'

const encoder = new TextEncoder()

/**
 * The UTF-8 bytes of a body: what a byte cap counts.
 *
 * @example
 * encodeBody('é').byteLength // 2
 */
export function encodeBody(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body
}

/**
 * The route's allow decision, or a loud error: sending data on a route no guard allowed is a host
 * bug that must not turn into an unmetered export.
 *
 * @example
 * const allow = requireAllow(req.accessDecision, 'sendData')
 */
export function requireAllow(allow: Allow | undefined, caller: string): Allow {
  if (allow?.allowed !== true) {
    throw new InvalidArgumentError(
      `${caller}: the route has no allow decision; guard it with an operation first`,
    )
  }
  // Export restrictions are only evaluated for data-content operations: rows sent under, say, a
  // `dataset.overview` allow would never have met the dataset's allow-list or caps.
  if (!allow.dataContent) {
    throw new InvalidArgumentError(
      `${caller}: the route's operation ${JSON.stringify(allow.operation)} carries no data content; guard it with table.read, query.run or export.create`,
    )
  }
  return allow
}

/**
 * Encodes a data response and checks its declared size (records and bytes) against the route's
 * allow, before any byte is sent (docs/export-restrictions.md).
 *
 * @example
 * const prepared = prepareData(policy, req.accessDecision, { body: json, records: rows.length })
 * if (!prepared.ok) return sendDenial(res, prepared.decision)
 */
export function prepareData(
  policy: AccessPolicy,
  allow: Allow | undefined,
  data: DataResponse,
): PreparedData {
  const decision = requireAllow(allow, 'sendData')
  if (!Number.isSafeInteger(data.records) || data.records < 0) {
    throw new InvalidArgumentError(
      `sendData: records must be the number of records in the body, a non-negative integer; got ${String(data.records)}`,
    )
  }
  const bytes = encodeBody(data.body)
  const verdict = policy.checkResponseSize(decision, { records: data.records, bytes: bytes.byteLength })
  if (!verdict.allowed) return { ok: false, decision: verdict }
  const contentType =
    data.contentType ?? (typeof data.body === 'string' ? DEFAULT_STREAM_TYPE : 'application/octet-stream')
  return { ok: true, status: data.status ?? 200, contentType, bytes }
}
