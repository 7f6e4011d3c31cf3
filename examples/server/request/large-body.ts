/**
 * The large-body slots: a route with a body cap above {@link MAX_BODY_BYTES} (the leak route) reads
 * past that default only while it holds one of {@link MAX_CONCURRENT_LARGE_BODIES} slots. Its
 * headers cannot prove who sends them — a leak report's signature covers the body, which is not
 * there yet, and key identifiers are public — so a slot is made cheap to lose rather than hard to
 * take: the body must declare its length, one network holds one slot, and the holder must keep a
 * pace ({@link LargeBodyPace}) or lose the slot.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { networkOfAddress } from 'data-access-policy'
import { MAX_BODY_BYTES, type RouteSet } from '../routes/route-set.js'

/**
 * Reads past {@link MAX_BODY_BYTES} (a route with a larger cap of its own) go on only while fewer
 * than this many others do: the larger cap is there for a sender's big report, and without a bound
 * a crowd of slow senders could each make the process hold that much.
 */
export const MAX_CONCURRENT_LARGE_BODIES = 4

/**
 * Besides the abuse limits' network (`--ipv6-prefix`, /64 by default), an IPv6 client counts in its
 * /48 for the slots: a /48 is what one site is commonly handed (RFC 6177), so an attacker with one
 * site's addresses holds one slot, not one per /64. IPv4 counts per address either way.
 */
export const LARGE_BODY_IPV6_PREFIX = 48

/**
 * The pace a slot holder must keep: `bytesPerSecond` averaged from the start of the read, after
 * `graceMs` (a connection's slow start, a busy network). A read that falls behind — by the
 * deadline `graceMs + received / bytesPerSecond`, which reaches `graceMs + declared /
 * bytesPerSecond` for the whole body — loses its slot and its connection.
 */
export interface LargeBodyPace {
  readonly graceMs: number
  readonly bytesPerSecond: number
}

/**
 * The bindings' pace: 2 s of grace, then 256 KiB/s, a small fraction of any real sender's speed.
 * A stalled sender that sent just past 64 KiB loses its slot after about 2.25 s; the largest leak
 * report (about 2.3 MiB) has about 11 s.
 *
 * @example
 * readRequestBody(req, type, limit, { claim, pace: LARGE_BODY_PACE })
 */
export const LARGE_BODY_PACE: LargeBodyPace = { graceMs: 2_000, bytesPerSecond: 256 * 1024 }

/**
 * The longest any read holds a slot, whatever its pace says (a pace configured slower than the
 * default is still cut here); the front door's request timeout is twice this.
 *
 * @example
 * LARGE_BODY_DEADLINE_MS // 30000
 */
export const LARGE_BODY_DEADLINE_MS = 30_000

/**
 * A route's check of a request's headers before its body may pass {@link MAX_BODY_BYTES}: the leak
 * route admits a report whose key identifier names a known key and whose signature parses.
 */
export type LargeBodyGate = (headers: IncomingHttpHeaders) => boolean

/** What a read knows of its request when its body first passes {@link MAX_BODY_BYTES}. */
export interface LargeBodyClaim {
  /** Whether the route's {@link LargeBodyGate} admits the request's headers (true without a gate). */
  readonly admitted: boolean
  /** The client's networks (limits/networks.ts, and its IPv6 /48): one slot per network at a time. */
  readonly networks: readonly string[]
  /** The body's `Content-Length`; absent for a chunked body, which gets no slot. */
  readonly declaredBytes: number | undefined
}

/**
 * The body passed {@link MAX_BODY_BYTES} on a route whose {@link LargeBodyGate} refused the
 * request's headers; the leak route answers 401, any other 413 with the default cap.
 */
export class LargeBodyRefusedError extends Error {
  constructor() {
    super(`a request body past ${MAX_BODY_BYTES} bytes was refused: its headers do not admit it`)
    this.name = 'LargeBodyRefusedError'
  }
}

/**
 * The body passed {@link MAX_BODY_BYTES} without a `Content-Length` (a chunked body): its deadline
 * cannot be known, so it gets no slot; the leak route answers 411.
 */
export class LengthRequiredError extends Error {
  constructor() {
    super(`a request body past ${MAX_BODY_BYTES} bytes needs a Content-Length`)
    this.name = 'LengthRequiredError'
  }
}

/**
 * The body passed {@link MAX_BODY_BYTES} while every large-body slot was taken, or one was held by
 * a read from the same network; the handler answers 503.
 */
export class BodyReadersBusyError extends Error {
  constructor() {
    super(`${MAX_CONCURRENT_LARGE_BODIES} large request bodies, or one from the same network, are being read`)
    this.name = 'BodyReadersBusyError'
  }
}

/**
 * A body that took a large-body slot fell behind its pace; `deadlineMs` is when the whole body was
 * due. The handler answers 408 (which the sender, gone or stalled, may never read: the slot is what
 * matters).
 */
export class BodyReadTimeoutError extends Error {
  readonly deadlineMs: number

  constructor(deadlineMs: number) {
    super(`a large request body did not arrive within ${deadlineMs} ms`)
    this.name = 'BodyReadTimeoutError'
    this.deadlineMs = deadlineMs
  }
}

// Reads now holding a slot, and the networks they came from.
let largeBodies = 0
const largeBodyNetworks = new Set<string>()

/**
 * Takes a slot for `claim`, or says why not; call the returned function once to give it back.
 *
 * @example
 * const slot = takeLargeBodySlot(claim, limit)
 * if (slot instanceof Error) return fail(slot)
 */
export function takeLargeBodySlot(claim: LargeBodyClaim, limit: number): (() => void) | Error {
  if (!claim.admitted) return new LargeBodyRefusedError()
  if (claim.declaredBytes === undefined) return new LengthRequiredError()
  if (claim.declaredBytes > limit) return new BodyTooLargeError(limit)
  if (largeBodies >= MAX_CONCURRENT_LARGE_BODIES || claim.networks.some((n) => largeBodyNetworks.has(n))) {
    return new BodyReadersBusyError()
  }
  largeBodies++
  for (const network of claim.networks) largeBodyNetworks.add(network)
  let held = true
  return () => {
    if (!held) return
    held = false
    largeBodies--
    for (const network of claim.networks) largeBodyNetworks.delete(network)
  }
}

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
 * When a read that started at `startedAt` and has `received` bytes falls behind `pace`: the
 * deadline the next byte pushes back, never past {@link LARGE_BODY_DEADLINE_MS}.
 *
 * @example
 * dueAt(0, 65_537, LARGE_BODY_PACE) // 2250.0038…
 */
export function dueAt(startedAt: number, received: number, pace: LargeBodyPace): number {
  return startedAt + Math.min(LARGE_BODY_DEADLINE_MS, pace.graceMs + (received / pace.bytesPerSecond) * 1000)
}

function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['content-length']
  // Node's parser has refused a request with a malformed or repeated Content-Length already.
  if (value === undefined || !/^\d+$/.test(value)) return undefined
  const bytes = Number(value)
  return Number.isSafeInteger(bytes) ? bytes : undefined
}

/**
 * What the bindings ask of a request whose body passes {@link MAX_BODY_BYTES}: its route's
 * {@link LargeBodyGate} (found, like the cap, by method and exact path) on its headers, its
 * client's networks (`networkOf`'s, and for IPv6 its {@link LARGE_BODY_IPV6_PREFIX}), and its
 * `Content-Length`. Lazy: nothing is looked at for a body that stays under the default cap.
 *
 * @example
 * const claimOf = largeBodyClaims(app.routeSets, (address) => app.guard.network(address))
 * readRequestBody(req, type, limit, { claim: claimOf(req.method, req.url, req.headers, () => req.ip) })
 */
export function largeBodyClaims(
  sets: readonly RouteSet[],
  networkOf: (address: string | undefined) => string,
): (
  method: string | undefined,
  target: string | undefined,
  headers: IncomingHttpHeaders,
  clientAddress: () => string | undefined,
) => () => LargeBodyClaim {
  const gates = new Map<string, LargeBodyGate>()
  for (const set of sets) {
    for (const route of set.routes) {
      if (route.largeBodyGate !== undefined) gates.set(`${route.method} ${route.path}`, route.largeBodyGate)
    }
  }
  return (method, target, headers, clientAddress) => () => {
    const gate = gates.get(`${method ?? ''} ${(target ?? '').split('?', 1)[0]}`)
    const address = clientAddress()
    const site = networkOfAddress(address, LARGE_BODY_IPV6_PREFIX)
    const networks = new Set([networkOf(address), ...(site === undefined ? [] : [site])])
    return {
      admitted: gate === undefined || gate(headers),
      networks: [...networks],
      declaredBytes: declaredLength(headers),
    }
  }
}
