/**
 * Which budgets a miss from a client address spends: its network (an IPv4 address, an IPv6 prefix
 * of the configured length) and the block that holds it (the IPv4 /24, the IPv6 /48). A host that
 * holds an IPv6 allocation picks any prefix in it at will, so without the block one allocation would
 * count as thousands of networks.
 */
import { networkOfAddress } from '../restrictions/client-network.js'
import type { MissSource } from './miss-budget.js'

/** The IPv6 prefix length of a block: one site's usual allocation. */
export const IPV6_BLOCK_PREFIX = 48

// The network of requests whose client address is unknown: they share one budget (fail closed).
const UNKNOWN_NETWORK = 'unknown'

/**
 * The network and block a miss from `address` spends; requests whose address is unknown (or
 * malformed) share one network without a block. An IPv6 network as coarse as a block (a prefix of
 * 48 or less) has no block of its own.
 *
 * @param ipv6Prefix - the IPv6 network prefix length, 1–128.
 * @example
 * missSourceOf('203.0.113.9', 64)        // { network: '203.0.113.9', block: '203.0.113.0/24' }
 * missSourceOf('2001:db8:1:2::9', 64)    // { network: '2001:db8:1:2::/64', block: '2001:db8:1::/48' }
 * missSourceOf(undefined, 64)            // { network: 'unknown' }
 */
export function missSourceOf(address: string | undefined, ipv6Prefix: number): MissSource {
  const network = networkOfAddress(address, ipv6Prefix)
  if (network === undefined) return { network: UNKNOWN_NETWORK }
  if (!network.includes(':')) return { network, block: `${network.slice(0, network.lastIndexOf('.'))}.0/24` }
  if (ipv6Prefix <= IPV6_BLOCK_PREFIX) return { network }
  return { network, block: networkOfAddress(address, IPV6_BLOCK_PREFIX) }
}
