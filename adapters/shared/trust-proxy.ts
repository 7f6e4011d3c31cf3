import type { IncomingMessage } from 'node:http'
import { compile as compileAddressList, all as forwardedAddresses } from 'proxy-addr'
import { ConfigError } from '../../src/index.js'

/**
 * Which peers may set `X-Forwarded-For` / `X-Forwarded-Proto`, with Express's `trust proxy`
 * meaning: `false` (none), `true` (all), or addresses, CIDRs and the names `loopback`,
 * `linklocal`, `uniquelocal`, as a list or one comma-separated string.
 */
export type TrustProxy = boolean | string | readonly string[]

/** Whether the address at `hop` (0 = the direct peer) is a trusted proxy. */
export type TrustFunction = (address: string, hop: number) => boolean

/** Where a request came from and over what, after the trusted proxies' headers were applied. */
export interface ForwardedOrigin {
  readonly clientAddress: string | undefined
  readonly protocol: string
}

const TRUST_NONE: TrustFunction = () => false
const TRUST_ALL: TrustFunction = () => true

/**
 * Compiles a {@link TrustProxy} value once, with `proxy-addr` (the implementation behind Express).
 *
 * @throws {ConfigError} naming `trustProxy` when a value is not an address, CIDR or known name.
 * @example
 * const trust = compileTrustProxy('loopback, 10.0.0.0/8')
 */
export function compileTrustProxy(value: TrustProxy | undefined): TrustFunction {
  if (value === undefined || value === false) return TRUST_NONE
  if (value === true) return TRUST_ALL
  const list = typeof value === 'string' ? value.split(',').map((entry) => entry.trim()) : value
  if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
    throw new ConfigError(['trustProxy'], 'must be a boolean, a string or an array of strings')
  }
  try {
    return compileAddressList([...list])
  } catch (error) {
    throw new ConfigError(['trustProxy'], error instanceof Error ? error.message : String(error), {
      cause: error,
    })
  }
}

/**
 * The `X-Forwarded-Proto` a trusted peer reports: `https` only when every listed hop says so, since
 * an appending proxy may carry a value its own client made up.
 *
 * @example
 * forwardedProtocol('https, http') // 'http'
 */
export function forwardedProtocol(header: string): string {
  for (const entry of header.split(',')) {
    if (entry.trim().toLowerCase() !== 'https') return 'http'
  }
  return 'https'
}

/**
 * A framework's resolved protocol, made as strict as {@link forwardedProtocol}: `https` over a plain
 * socket can only come from a trusted `X-Forwarded-Proto`, which Express reads by its first entry
 * and Fastify by its last; either would let one appending hop vouch for another.
 *
 * @example
 * strictProtocol(req.protocol, req.socket, req.headers['x-forwarded-proto'])
 */
export function strictProtocol(
  protocol: string,
  socket: object,
  forwardedProto: string | readonly string[] | undefined,
): string {
  // URI schemes are case-insensitive (RFC 3986 §3.1), and Hono's path lower-cases them already.
  const normalized = protocol.toLowerCase()
  // A TLS socket has `encrypted: true`; a plain one has no such property.
  const encrypted = (socket as { readonly encrypted?: unknown }).encrypted === true
  if (normalized !== 'https' || encrypted || typeof forwardedProto !== 'string') return normalized
  return forwardedProtocol(forwardedProto)
}

/**
 * Resolves the client address and protocol from the direct peer and the forwarding headers, which
 * count only as far as the peers that relayed them are trusted.
 *
 * @example
 * resolveForwarded(trust, { peerAddress: '127.0.0.1', directProtocol: 'http',
 *   forwardedFor: '203.0.113.7', forwardedProto: 'https' }) // { clientAddress: '203.0.113.7', protocol: 'https' }
 */
export function resolveForwarded(
  trust: TrustFunction,
  request: {
    readonly peerAddress: string | undefined
    readonly directProtocol: string
    readonly forwardedFor: string | undefined
    readonly forwardedProto: string | undefined
  },
): ForwardedOrigin {
  const peer = request.peerAddress
  if (peer === undefined || !trust(peer, 0)) return { clientAddress: peer, protocol: request.directProtocol }
  const forwardedProto = request.forwardedProto
  const protocol = forwardedProto ? forwardedProtocol(forwardedProto) : request.directProtocol
  const forwardedFor = request.forwardedFor
  if (forwardedFor === undefined) return { clientAddress: peer, protocol }
  // proxy-addr reads the peer from the socket and the chain from the header: hand it just those.
  const message = { headers: { 'x-forwarded-for': forwardedFor }, socket: { remoteAddress: peer } }
  const chain = forwardedAddresses(message as unknown as IncomingMessage, trust)
  return { clientAddress: chain[chain.length - 1], protocol }
}
