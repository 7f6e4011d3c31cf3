/**
 * Reading request bodies with a size cap, and the JSON bodies of the API. Every binding reads the
 * raw body the same way, so that a body is accepted or refused identically on all three.
 */
import { deny } from '../../src/index.js'
import { denial, invalidParameter } from './http-result.js'
import type { ApiRequest, RouteResult } from './route-set.js'

/** The body is larger than the cap; the handler answers 413. */
export class BodyTooLargeError extends Error {
  readonly limit: number

  constructor(limit: number) {
    super(`request body larger than ${limit} bytes`)
    this.name = 'BodyTooLargeError'
    this.limit = limit
  }
}

/**
 * Reads a stream to its end, failing as soon as it exceeds `limit` bytes.
 *
 * @throws {BodyTooLargeError} past the cap.
 */
export async function readCapped(stream: AsyncIterable<Uint8Array | string>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of stream) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk)
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    length += bytes.byteLength
    if (length > limit) throw new BodyTooLargeError(limit)
    chunks.push(bytes)
  }
  return Buffer.concat(chunks)
}

/** Memoizes a body reader, so a handler and a resolver can both ask for the body. */
export function onceBody(read: () => Promise<Buffer>): () => Promise<Buffer> {
  let body: Promise<Buffer> | undefined
  return () => {
    body ??= read()
    return body
  }
}

/** A JSON object body, absent (empty body), or the answer to send instead. */
export type JsonBody =
  | { readonly ok: true; readonly value: Readonly<Record<string, unknown>> | undefined }
  | { readonly ok: false; readonly result: RouteResult }

const INVALID_REQUEST: JsonBody = { ok: false, result: denial(deny('invalid_request')) }

function isFormEncoded(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded'
}

/**
 * Parses a body as a JSON object, whatever its `Content-Type`. An empty body is absent; a body
 * that is not a JSON object is 400 with `detail`. A body carrying `access_token` — a JSON field, or
 * a form field of a form-encoded body — is the policy's 400 `invalid_request` (RFC 6750 §2: a token
 * sent twice is ambiguous, and a body token is never accepted).
 */
export function parseJsonObject(body: Buffer, detail: string, contentType?: string): JsonBody {
  if (body.byteLength === 0) return { ok: true, value: undefined }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    return { ok: false, result: invalidParameter(detail) }
  }
  if (isFormEncoded(contentType) && new URLSearchParams(text).has('access_token')) return INVALID_REQUEST
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, result: invalidParameter(detail) }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, result: invalidParameter(detail) }
  }
  if (Object.hasOwn(value, 'access_token')) return INVALID_REQUEST
  return { ok: true, value: value as Record<string, unknown> }
}

/** Reads a request's body and parses it with {@link parseJsonObject}. */
export async function readJsonObject(request: ApiRequest, detail: string): Promise<JsonBody> {
  return parseJsonObject(await request.body(), detail, request.contentType)
}

/** The first key of `body` that is not one of `allowed`, if any. */
export function unknownKey(
  body: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): string | undefined {
  return Object.keys(body).find((key) => !allowed.includes(key))
}
