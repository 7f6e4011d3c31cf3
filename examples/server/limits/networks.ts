/**
 * The networks the abuse limits count by. One IPv6 customer is usually handed a whole /64 (RFC
 * 6177), so counting IPv6 per address would give one client 2^64 fresh allowances: IPv6 addresses
 * count per network, `/64` unless `--ipv6-prefix` says otherwise, and IPv4 addresses one by one
 * (IPv4-mapped IPv6 is IPv4). Addresses are read with the library's strict parser; anything it
 * refuses counts as one shared "unknown" client, which fails closed.
 */
import { DEFAULT_IPV6_NETWORK_PREFIX, networkOfAddress } from 'data-access-policy'

/** IPv6 addresses share their limits per network of this prefix length by default. */
export const DEFAULT_IPV6_PREFIX = DEFAULT_IPV6_NETWORK_PREFIX

/** The key every client whose address cannot be read shares. */
export const UNKNOWN_NETWORK = 'unknown'

/**
 * The network a client address counts in: the library's `networkOfAddress` (the IPv4 address
 * itself, or the IPv6 network of `ipv6Prefix` bits around it, as CIDR text — the same network a
 * token's last use shows), or the shared unknown key.
 *
 * @example
 * networkOf('2001:db8:1:2:3:4:5:6', 64) // '2001:db8:1:2::/64'
 * networkOf('::ffff:192.0.2.7', 64)     // '192.0.2.7'
 * networkOf('not an address', 64)       // 'unknown'
 */
export function networkOf(address: string | undefined, ipv6Prefix: number): string {
  return networkOfAddress(address, ipv6Prefix) ?? UNKNOWN_NETWORK
}
