/**
 * Reading request bodies with a size cap, the JSON bodies of the API, and whether a body carries an
 * `access_token`. Every binding reads the raw body the same way, so that a body is accepted or
 * refused identically on all three.
 */
import { isFormContentType } from './form-body.js'
import { invalidParameter } from './http-result.js'
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

function decodeUtf8(body: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    return undefined
  }
}

/**
 * Parses a body as a JSON object, whatever its `Content-Type`. An empty body is absent; a body
 * that is not a JSON object is 400 with `detail`. (An `access_token` in the body never gets here on
 * an API route: the route runner refuses it first, run-route.ts.)
 */
export function parseJsonObject(body: Buffer, detail: string): JsonBody {
  if (body.byteLength === 0) return { ok: true, value: undefined }
  const text = decodeUtf8(body)
  if (text === undefined) return { ok: false, result: invalidParameter(detail) }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, result: invalidParameter(detail) }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, result: invalidParameter(detail) }
  }
  return { ok: true, value: value as Record<string, unknown> }
}

/** Reads a request's body and parses it with {@link parseJsonObject}. */
export async function readJsonObject(request: ApiRequest, detail: string): Promise<JsonBody> {
  return parseJsonObject(await request.body(), detail)
}

/** Whether a `Content-Type` names JSON: `application/json` or `application/…+json`, parameters ignored. */
export function isJsonContentType(contentType: string | undefined): boolean {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase()
  return type !== undefined && /^application\/(?:[!#$&^_.+\-0-9a-z]+\+)?json$/.test(type)
}

/**
 * Whether a body carries an `access_token` parameter (RFC 6750 §2.2): a form-encoded body with
 * that field (however its name is percent-encoded), or a JSON body that is an object with that
 * key. Only these two content types carry parameters; a body of another type, or one that does not
 * parse as its type says, carries none.
 *
 * @example
 * bodyHasAccessToken(Buffer.from('a=1&access_token=x'), 'application/x-www-form-urlencoded') // true
 * bodyHasAccessToken(Buffer.from('{"access_token":"x"}'), 'text/plain')                      // false
 */
export function bodyHasAccessToken(body: Buffer, contentType: string | undefined): boolean {
  const form = isFormContentType(contentType)
  if (!form && !isJsonContentType(contentType)) return false
  const text = body.byteLength === 0 ? undefined : decodeUtf8(body)
  if (text === undefined) return false
  if (form) return new URLSearchParams(text).has('access_token')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return false
  }
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.hasOwn(value, 'access_token')
  )
}

/**
 * Reads a request's body, when its type can carry parameters, and tells whether it carries an
 * `access_token` ({@link bodyHasAccessToken}). A body of another type is not read.
 *
 * @throws {BodyTooLargeError} past the cap.
 */
export async function requestBodyHasAccessToken(request: ApiRequest): Promise<boolean> {
  const { contentType } = request
  if (!isFormContentType(contentType) && !isJsonContentType(contentType)) return false
  return bodyHasAccessToken(await request.body(), contentType)
}

/** The first key of `body` that is not one of `allowed`, if any. */
export function unknownKey(
  body: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): string | undefined {
  return Object.keys(body).find((key) => !allowed.includes(key))
}
