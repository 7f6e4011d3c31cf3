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

/** The IPv6 prefix of a site (RFC 6177: what one site is commonly handed). */
export const SITE_IPV6_PREFIX = 48

/** The IPv4 prefix counted as one site: a /24 is the smallest block routed on the Internet. */
export const SITE_IPV4_PREFIX = 24

/**
 * The site a client address belongs to, counted besides its network by the limits a client could
 * otherwise multiply with its neighbours' addresses: an IPv6 /48 (a site's 65,536 /64s together),
 * an IPv4 /24, as CIDR text; the shared unknown key for an address that cannot be read.
 *
 * @example
 * siteOf('2001:db8:1:2:3:4:5:6') // '2001:db8:1::/48'
 * siteOf('192.0.2.7')            // '192.0.2.0/24'
 * siteOf('not an address')       // 'unknown'
 */
export function siteOf(address: string | undefined): string {
  const network = networkOfAddress(address, SITE_IPV6_PREFIX)
  if (network === undefined) return UNKNOWN_NETWORK
  if (network.includes(':')) return network
  return `${network.split('.').slice(0, 3).join('.')}.0/${SITE_IPV4_PREFIX}`
}
