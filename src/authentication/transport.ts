import { parseClientAddress } from '../restrictions/ip-address.js'

/**
 * True for a loopback client: IPv4 `127.0.0.0/8` (also IPv4-mapped) or IPv6 `::1`. Anything
 * unparsable is not loopback, so an unknown address never escapes the HTTPS requirement.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  // Stryker disable next-line ConditionalExpression: equivalent because the parse below refuses undefined too
  if (address === undefined) return false
  // The spellings Node reports for a loopback peer skip the parse (and its allocations).
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent because the parse below gives the same answer for these spellings
  if (address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1') return true
  const parsed = parseClientAddress(address)
  if (parsed === undefined) return false
  if (parsed.family === 4) return parsed.value >>> 24 === 127
  const [a, b, c, d] = parsed.words
  return a === 0 && b === 0 && c === 0 && d === 1
}

/** The two facts of a request that decide whether its transport may carry credentials. */
export interface TransportFacts {
  /** `https` or `http`, as the adapter's trusted-proxy handling resolved it. */
  readonly protocol: string
  /** The client address, as the adapter's trusted-proxy handling resolved it. */
  readonly clientAddress: string | undefined
}

/**
 * The transport rule for anything that carries credentials (docs/authentication.md): HTTPS, or
 * plain HTTP from a loopback client (a developer's own machine). The API's policy applies it before
 * authentication; a host's sign-in or settings pages should ask the same question.
 *
 * @example
 * isSecureTransport({ protocol: 'http', clientAddress: '127.0.0.1' })   // true
 * isSecureTransport({ protocol: 'http', clientAddress: '203.0.113.7' }) // false
 */
export function isSecureTransport(request: TransportFacts): boolean {
  return request.protocol === 'https' || isLoopbackAddress(request.clientAddress)
}
