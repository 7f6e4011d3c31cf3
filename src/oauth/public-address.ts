import { parseClientAddress, wordsToBigInt } from '../restrictions/ip-address.js'

/** An address block: its first address and prefix length, in its family's bits. */
type Block = readonly [network: bigint, prefix: number]

const v4 = (a: number, b: number, c: number, d: number, prefix: number): Block => [
  BigInt(((a << 24) | (b << 16) | (c << 8) | d) >>> 0),
  prefix,
]
// `high`: the address's first 64 bits.
const v6 = (high: bigint, prefix: number): Block => [high << 64n, prefix]

// RFC 6890 and the IANA special-purpose registries: every IPv4 block that is not globally
// reachable, or that reaches the host or its own network. Anything an attacker could aim a server's
// request at inside the operator's network is here.
const NON_PUBLIC_V4: readonly Block[] = [
  v4(0, 0, 0, 0, 8), // "this network", and 0.0.0.0 which Linux connects to loopback
  v4(10, 0, 0, 0, 8), // RFC 1918
  v4(100, 64, 0, 0, 10), // RFC 6598 carrier-grade NAT
  v4(127, 0, 0, 0, 8), // loopback
  v4(169, 254, 0, 0, 16), // link-local, cloud metadata services
  v4(172, 16, 0, 0, 12), // RFC 1918
  v4(192, 0, 0, 0, 24), // IETF protocol assignments
  v4(192, 0, 2, 0, 24), // TEST-NET-1
  v4(192, 31, 196, 0, 24), // AS112
  v4(192, 52, 193, 0, 24), // AMT
  v4(192, 88, 99, 0, 24), // deprecated 6to4 relay anycast
  v4(192, 168, 0, 0, 16), // RFC 1918
  v4(192, 175, 48, 0, 24), // direct delegation AS112
  v4(198, 18, 0, 0, 15), // benchmarking
  v4(198, 51, 100, 0, 24), // TEST-NET-2
  v4(203, 0, 113, 0, 24), // TEST-NET-3
  v4(224, 0, 0, 0, 4), // multicast
  v4(240, 0, 0, 0, 4), // reserved, and 255.255.255.255 broadcast
]

// IPv6 blocks that are never public. The blocks that embed an IPv4 address (mapped, NAT64 and
// 6to4) are decided by that address instead (see embeddedIpv4).
const NON_PUBLIC_V6: readonly Block[] = [
  [0n, 96], // ::/96: unspecified, loopback, and the deprecated IPv4-compatible form
  v6(0x0064_ff9b_0001_0000n, 48), // RFC 8215 local-use NAT64
  v6(0x0100_0000_0000_0000n, 64), // RFC 6666 discard-only
  v6(0x2001_0000_0000_0000n, 23), // IETF protocol assignments, Teredo (2001::/32) among them
  v6(0x2001_0db8_0000_0000n, 32), // documentation
  v6(0x3fff_0000_0000_0000n, 20), // documentation (RFC 9637)
  v6(0x5f00_0000_0000_0000n, 16), // SRv6 SIDs
  v6(0xfc00_0000_0000_0000n, 7), // unique local
  v6(0xfe80_0000_0000_0000n, 10), // link-local
  v6(0xfec0_0000_0000_0000n, 10), // deprecated site-local
  v6(0xff00_0000_0000_0000n, 8), // multicast
]

const inBlock = (value: bigint, bits: number, [network, prefix]: Block): boolean =>
  value >> BigInt(bits - prefix) === network >> BigInt(bits - prefix)

// The IPv4 address an IPv6 address stands for, where the network delivers it to that address: the
// RFC 6052 well-known NAT64 prefix and 6to4 (2002::/16). Mapped addresses are already family 4.
function embeddedIpv4(value: bigint): bigint | undefined {
  if (inBlock(value, 128, v6(0x0064_ff9b_0000_0000n, 96))) return value & 0xffff_ffffn
  if (inBlock(value, 128, v6(0x2002_0000_0000_0000n, 16))) return (value >> 80n) & 0xffff_ffffn
  return undefined
}

/**
 * Whether `address` (an IP literal, as a resolver or a URL gives it) is a public unicast address
 * the server may connect to on a client's behalf: false for loopback, private (RFC 1918,
 * `fc00::/7`), link-local, carrier-grade NAT, unspecified, multicast, broadcast, documentation and
 * other special-purpose blocks, for IPv4-mapped, NAT64 and 6to4 forms of those, for an address with
 * a zone id, and for anything that is not exactly an address. Used against SSRF: a URL a client
 * names must not make the server reach into its own network.
 *
 * @example
 * isPublicAddress('93.184.215.14') // true
 * isPublicAddress('169.254.169.254') // false: link-local (cloud metadata)
 * isPublicAddress('::ffff:10.0.0.1') // false: a mapped private address
 * @see https://www.rfc-editor.org/rfc/rfc6890
 */
export function isPublicAddress(address: string): boolean {
  if (address.includes('%')) return false
  const parsed = parseClientAddress(address)
  if (parsed === undefined) return false
  if (parsed.family === 4) return isPublicIpv4(BigInt(parsed.value))
  const value = wordsToBigInt(parsed.words)
  const embedded = embeddedIpv4(value)
  if (embedded !== undefined) return isPublicIpv4(embedded)
  // Only global unicast (2000::/3) is routed on the Internet.
  if (!inBlock(value, 128, v6(0x2000_0000_0000_0000n, 3))) return false
  return !NON_PUBLIC_V6.some((block) => inBlock(value, 128, block))
}

function isPublicIpv4(value: bigint): boolean {
  return !NON_PUBLIC_V4.some((block) => inBlock(value, 32, block))
}
