/**
 * Reading request bodies with a size cap and parsing their parameters, for the body parser every
 * binding installs in its framework (so the adapters' own `access_token` check sees `req.body`), and
 * the JSON bodies of the API. Every binding reads and parses the same way, so that a body is
 * accepted or refused identically on all three.
 */
import type { Readable } from 'node:stream'
import { invalidParameter } from '../routes/http-result.js'
import { type ApiRequest, MAX_BODY_BYTES, type RouteResult, type RouteSet } from '../routes/route-set.js'
import { isFormContentType } from './form.js'

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
 * Reads a stream to its end, failing as soon as it exceeds `limit` bytes. Past the cap the stream
 * is left paused, not destroyed: the connection must stay up for the 413, and Node's server
 * discards the rest of the body once the response has ended.
 *
 * @throws {BodyTooLargeError} past the cap.
 */
function readCapped(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let length = 0
    const settle = (error: Error | undefined) => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
      if (error === undefined) resolve(Buffer.concat(chunks))
      else reject(error)
    }
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      length += bytes.byteLength
      if (length > limit) {
        stream.pause()
        settle(new BodyTooLargeError(limit))
      } else chunks.push(bytes)
    }
    const onEnd = () => settle(undefined)
    const onError = (error: Error) => settle(error)
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
  })
}

/** A JSON object body, absent (empty body), or the answer to send instead. */
export type JsonBody =
  | { readonly ok: true; readonly value: Readonly<Record<string, unknown>> | undefined }
  | { readonly ok: false; readonly result: RouteResult }

// One decoder each, not one per request: a decoder holds native memory the heap does not count.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })
const LENIENT_UTF8 = new TextDecoder()

function decodeUtf8(body: Buffer): string | undefined {
  try {
    return STRICT_UTF8.decode(body)
  } catch {
    return undefined
  }
}

/**
 * Parses a body as a JSON object, whatever its `Content-Type`. An empty body is absent; a body
 * that is not a JSON object is 400 with `detail`. (An `access_token` in the body never gets here on
 * an API route: the adapter refuses it first.)
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
 * The parameters a body carries, as a framework's body parser hands them on (`req.body`): a form
 * body's fields, or the value of a JSON body; `undefined` for a body of another type, or one that
 * does not parse as its type says. This is what the adapters look at for an `access_token` (RFC
 * 6750 §2.2), so every binding parses with this one function.
 *
 * @example
 * parseBodyParameters(Buffer.from('a=1&access_token=x'), 'application/x-www-form-urlencoded') // URLSearchParams
 * parseBodyParameters(Buffer.from('{"access_token":"x"}'), 'text/plain')                      // undefined
 */
export function parseBodyParameters(body: Buffer, contentType: string | undefined): unknown {
  const form = isFormContentType(contentType)
  if (!form && !isJsonContentType(contentType)) return undefined
  if (body.byteLength === 0) return undefined
  // Decoded leniently (a bad byte becomes U+FFFD), as `c.req.text()` does on Hono: a byte that is
  // not UTF-8 must not hide an `access_token` from the adapters' check on one framework only.
  const text = LENIENT_UTF8.decode(body)
  if (form) return new URLSearchParams(text)
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A body read ahead by a binding's parser: its bytes, or the cap it passed. */
export type ReadBody =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly limit: number }

/** The cap on a request's body, by its method and raw target: see {@link bodyLimits}. */
export type BodyLimit = (method: string | undefined, target: string | undefined) => number

/**
 * The body cap of every request of these route sets: {@link MAX_BODY_BYTES}, or the
 * `maxBodyBytes` of the route whose exact path the target names (the bindings read a body before
 * routing, so the cap cannot come from the matched route). A target that routes there by another
 * spelling gets the default cap, the smaller one.
 *
 * @throws {Error} for a route with its own cap and `:params` in its path.
 * @example
 * const limitOf = bodyLimits(app.routeSets)
 * limitOf('POST', '/secret-scanning/report') // MAX_LEAK_REPORT_BYTES
 * limitOf('POST', '/settings/tokens')        // MAX_BODY_BYTES
 */
export function bodyLimits(sets: readonly RouteSet[]): BodyLimit {
  const limits = new Map<string, number>()
  for (const set of sets) {
    for (const route of set.routes) {
      if (route.maxBodyBytes === undefined) continue
      if (route.path.includes(':')) {
        throw new Error(`${route.method} ${route.path}: a route with its own body cap cannot have :params`)
      }
      limits.set(`${route.method} ${route.path}`, route.maxBodyBytes)
    }
  }
  return (method, target) =>
    limits.get(`${method ?? ''} ${(target ?? '').split('?', 1)[0]}`) ?? MAX_BODY_BYTES
}

/**
 * Reads a request body for a binding's body parser, capped at `limit` (from {@link bodyLimits}):
 * what the handlers read later (`ApiRequest.body`) and what the parser hands the framework as
 * `req.body`.
 *
 * @example
 * const { read, parameters } = await readRequestBody(req, req.headers['content-type'], limitOf(req.method, req.url))
 */
export async function readRequestBody(
  stream: Readable,
  contentType: string | undefined,
  limit: number,
): Promise<{ readonly read: ReadBody; readonly parameters: unknown }> {
  try {
    const bytes = await readCapped(stream, limit)
    return { read: { ok: true, bytes }, parameters: parseBodyParameters(bytes, contentType) }
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return { read: { ok: false, limit: error.limit }, parameters: undefined }
    throw error
  }
}

/**
 * The handlers' view of a body read ahead: its bytes, or {@link BodyTooLargeError} (→ 413).
 *
 * @example
 * const body = bodyReader(read)
 */
export function bodyReader(read: ReadBody | undefined): () => Promise<Buffer> {
  if (read === undefined) return () => Promise.resolve(EMPTY)
  return read.ok ? () => Promise.resolve(read.bytes) : () => Promise.reject(new BodyTooLargeError(read.limit))
}

const EMPTY = Buffer.alloc(0)

/**
 * Whether a request's body passed the cap while its type carries parameters: every API route
 * answers that 413, whether or not its handler reads the body, since nobody could tell whether the
 * body carried an `access_token`.
 *
 * @example
 * if (await parameterBodyTooLarge(request)) return bodyTooLarge(MAX_BODY_BYTES)
 */
export async function parameterBodyTooLarge(request: ApiRequest): Promise<boolean> {
  const { contentType } = request
  if (!isFormContentType(contentType) && !isJsonContentType(contentType)) return false
  try {
    await request.body()
    return false
  } catch (error) {
    if (error instanceof BodyTooLargeError) return true
    throw error
  }
}

/** The first key of `body` that is not one of `allowed`, if any. */
export function unknownKey(
  body: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): string | undefined {
  return Object.keys(body).find((key) => !allowed.includes(key))
}
