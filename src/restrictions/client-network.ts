/**
 * The network a client address belongs to, as the limits count it (docs/architecture.md, "Limits"):
 * an IPv4 client is its own address, an IPv6 client its /64 (one subscriber's prefix: a host picks
 * any address in it at will, so counting addresses there would count nothing). Shown beside a
 * token's last use and used as the key of per-network limits; one definition, so both agree on what
 * a network is.
 */
import { formatAddress, parseClientAddress, wordsToBigInt } from './ip-address.js'

/** The IPv6 prefix length a client network has unless a host chooses another. */
export const DEFAULT_IPV6_NETWORK_PREFIX = 64

/**
 * The network of a client address, in canonical text: `203.0.113.7` for an IPv4 client (IPv4-mapped
 * IPv6 included), `2001:db8:1:2::/64` for an IPv6 one. `undefined` for anything the strict parser
 * of allow-lists refuses, so a malformed address never becomes a network of its own.
 *
 * @param ipv6Prefix - the IPv6 prefix length, 1–128 (default 64).
 * @example
 * networkOfAddress('2001:db8:1:2:a:b:c:d') // '2001:db8:1:2::/64'
 * networkOfAddress('::ffff:203.0.113.7')   // '203.0.113.7'
 * networkOfAddress('10.1')                 // undefined
 */
export function networkOfAddress(
  address: string | undefined,
  ipv6Prefix: number = DEFAULT_IPV6_NETWORK_PREFIX,
): string | undefined {
  if (!Number.isInteger(ipv6Prefix) || ipv6Prefix < 1 || ipv6Prefix > 128) return undefined
  const parsed = parseClientAddress(address)
  if (parsed === undefined) return undefined
  if (parsed.family === 4) return formatAddress(4, BigInt(parsed.value))
  const value = wordsToBigInt(parsed.words)
  const hostBits = BigInt(128 - ipv6Prefix)
  const network = (value >> hostBits) << hostBits
  return `${formatAddress(6, network)}/${ipv6Prefix}`
}
