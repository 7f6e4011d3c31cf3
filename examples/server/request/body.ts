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

import {
  BodyReadersBusyError,
  BodyReadTimeoutError,
  BodyTooLargeError,
  dueAt,
  LARGE_BODY_PACE,
  type LargeBodyClaim,
  type LargeBodyPace,
  LargeBodyRefusedError,
  LengthRequiredError,
  takeLargeBodySlot,
} from './large-body.js'

export {
  BodyReadersBusyError,
  BodyReadTimeoutError,
  BodyTooLargeError,
  LARGE_BODY_DEADLINE_MS,
  LARGE_BODY_IPV6_PREFIX,
  LARGE_BODY_PACE,
  type LargeBodyClaim,
  type LargeBodyGate,
  type LargeBodyPace,
  LargeBodyRefusedError,
  LengthRequiredError,
  largeBodyClaims,
  MAX_CONCURRENT_LARGE_BODIES,
} from './large-body.js'

// An empty body, shared: never written to.
const EMPTY = Buffer.alloc(0)

// Without a claim a read knows nothing of its request: past the default cap it gets no slot.
const UNKNOWN_CLAIM: LargeBodyClaim = { admitted: true, networks: [], declaredBytes: undefined }

/** How a read may pass {@link MAX_BODY_BYTES}: see large-body.ts. */
export interface LargeBodyOptions {
  /** Asked once the body passes the default cap; absent, the read gets no slot (411). */
  readonly claim?: (() => LargeBodyClaim) | undefined
  /** The pace a slot holder keeps: {@link LARGE_BODY_PACE} unless a test needs another. */
  readonly pace?: LargeBodyPace | undefined
}

/**
 * Reads a stream to its end, failing as soon as it exceeds `limit` bytes. Past the cap the stream
 * is left paused, not destroyed: the connection must stay up for the 413, and Node's server
 * discards the rest of the body once the response has ended. Past {@link MAX_BODY_BYTES} the read
 * takes a large-body slot for its claim (large-body.ts), or fails with why not; holding one, it must
 * keep its pace, or the stream is destroyed (a stalled sender is gone or hostile) and the slot given
 * back at once.
 *
 * The pace is checked by a timer set for when the bytes received so far stop sufficing, not on
 * every chunk. When it fires, the verdict waits for the poll phase after it (`setImmediate`): bytes
 * that arrived while the process was busy are counted before a read is dropped for lacking them.
 *
 * The bytes go into one buffer grown by doubling, never a list of the chunks as they came: a body
 * sent in 1-byte chunks made a Buffer per byte (the leak-report route's 2.4 MB cap held 475 MB of
 * heap that way, measured by the security review).
 *
 * @throws {BodyTooLargeError} past the cap; the errors of `takeLargeBodySlot`;
 *   {@link BodyReadTimeoutError} behind the pace.
 */
function readCapped(stream: Readable, limit: number, options: LargeBodyOptions): Promise<Buffer> {
  const pace = options.pace ?? LARGE_BODY_PACE
  const startedAt = performance.now()
  return new Promise((resolve, reject) => {
    // Nothing allocated until a byte comes: most requests have no body.
    let buffer = EMPTY
    let length = 0
    let release: (() => void) | undefined
    let timer: NodeJS.Timeout | undefined
    let verdict: NodeJS.Immediate | undefined
    let declared = 0
    const settle = (error: Error | undefined) => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
      stream.off('close', onClose)
      clearTimeout(timer)
      clearImmediate(verdict)
      release?.()
      release = undefined
      if (error === undefined) resolve(buffer.subarray(0, length))
      else reject(error)
    }
    const schedule = () => {
      timer = setTimeout(onTimer, Math.max(0, dueAt(startedAt, length, pace) - performance.now()))
      // The pace bounds the slot, not the process: it never keeps Node running.
      timer.unref()
    }
    const onTimer = () => {
      verdict = setImmediate(judge)
    }
    const judge = () => {
      if (release === undefined) return
      if (performance.now() < dueAt(startedAt, length, pace)) {
        schedule()
        return
      }
      settle(new BodyReadTimeoutError(Math.ceil(dueAt(0, declared, pace))))
      stream.destroy()
    }
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      const next = length + bytes.byteLength
      if (next > limit) {
        stream.pause()
        settle(new BodyTooLargeError(limit))
        return
      }
      if (next > MAX_BODY_BYTES && release === undefined) {
        const claim = options.claim?.() ?? UNKNOWN_CLAIM
        const slot = takeLargeBodySlot(claim, limit)
        if (slot instanceof Error) {
          stream.pause()
          settle(slot)
          return
        }
        release = slot
        declared = claim.declaredBytes ?? limit
        schedule()
      }
      if (next > buffer.byteLength) {
        // Unzeroed: only `subarray(0, length)` leaves this function, and every byte of it is copied in.
        const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(2 * buffer.byteLength, next, 16 * 1024)))
        buffer.copy(grown, 0, 0, length)
        buffer = grown
      }
      bytes.copy(buffer, length)
      length = next
    }
    const onEnd = () => settle(undefined)
    const onError = (error: Error) => settle(error)
    // A sender that goes away mid-body may end the stream with neither `end` nor `error`: the read
    // must still end, and give its slot back.
    const onClose = () => settle(new Error('the request closed before its body ended'))
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    stream.on('close', onClose)
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

/**
 * A body read ahead by a binding's parser: its bytes, the cap it passed, no large-body slot free, or
 * the deadline a large body did not meet.
 */
export type ReadBody =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly limit: number }
  | { readonly ok: false; readonly busy: true }
  | { readonly ok: false; readonly refused: true }
  | { readonly ok: false; readonly lengthRequired: true }
  | { readonly ok: false; readonly deadlineMs: number }

/** The cap on a request's body, by its method and raw target: see {@link bodyLimits}. */
export type BodyLimit = (method: string | undefined, target: string | undefined) => number

/**
 * The body cap of every request of these route sets: {@link MAX_BODY_BYTES}, or the
 * `maxBodyBytes` of the route whose exact path the target names (the bindings read a body before
 * routing, so the cap cannot come from the matched route). A target that routes there by another
 * spelling gets the default cap, the smaller one.
 *
 * @throws {Error} for a route with its own cap and `:params` in its path, or `access` (an API route).
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
      // Its body is read without parameters (readRequestBody), which a guard must see.
      if (route.access !== undefined) {
        throw new Error(`${route.method} ${route.path}: a route with its own body cap cannot be an API route`)
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
 * `req.body`. A read past {@link MAX_BODY_BYTES} needs a slot for its claim and must keep its pace
 * (`options`: the bindings keep {@link LARGE_BODY_PACE}; tests pass another).
 *
 * @example
 * const { read, parameters } = await readRequestBody(req, req.headers['content-type'], limitOf(req.method, req.url))
 */
export async function readRequestBody(
  stream: Readable,
  contentType: string | undefined,
  limit: number,
  options: LargeBodyOptions = {},
): Promise<{ readonly read: ReadBody; readonly parameters: unknown }> {
  try {
    const bytes = await readCapped(stream, limit, options)
    // A route with a cap of its own is no API route (bodyLimits refuses one with `access`): no
    // adapter looks at its parameters, and parsing megabytes of JSON would hold the event loop.
    const parameters = limit === MAX_BODY_BYTES ? parseBodyParameters(bytes, contentType) : undefined
    return { read: { ok: true, bytes }, parameters }
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return { read: { ok: false, limit: error.limit }, parameters: undefined }
    if (error instanceof BodyReadersBusyError)
      return { read: { ok: false, busy: true }, parameters: undefined }
    if (error instanceof LargeBodyRefusedError)
      return { read: { ok: false, refused: true }, parameters: undefined }
    if (error instanceof LengthRequiredError)
      return { read: { ok: false, lengthRequired: true }, parameters: undefined }
    if (error instanceof BodyReadTimeoutError)
      return { read: { ok: false, deadlineMs: error.deadlineMs }, parameters: undefined }
    throw error
  }
}

/**
 * The handlers' view of a body read ahead: its bytes, {@link BodyTooLargeError} (→ 413),
 * {@link BodyReadersBusyError} (→ 503), {@link LargeBodyRefusedError} (→ the route's refusal),
 * {@link LengthRequiredError} (→ 411) or {@link BodyReadTimeoutError} (→ 408).
 *
 * @example
 * const body = bodyReader(read)
 */
export function bodyReader(read: ReadBody | undefined): () => Promise<Buffer> {
  if (read === undefined) return () => Promise.resolve(EMPTY)
  if (read.ok) return () => Promise.resolve(read.bytes)
  if ('busy' in read) return () => Promise.reject(new BodyReadersBusyError())
  if ('refused' in read) return () => Promise.reject(new LargeBodyRefusedError())
  if ('lengthRequired' in read) return () => Promise.reject(new LengthRequiredError())
  if ('deadlineMs' in read) return () => Promise.reject(new BodyReadTimeoutError(read.deadlineMs))
  return () => Promise.reject(new BodyTooLargeError(read.limit))
}

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
