import { parseClientAddress } from '../restrictions/ip-address.js'

/**
 * True for a loopback client: IPv4 `127.0.0.0/8` (also IPv4-mapped) or IPv6 `::1`. Anything
 * unparsable is not loopback, so an unknown address never escapes the HTTPS requirement.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false
  const parsed = parseClientAddress(address)
  if (parsed === undefined) return false
  if (parsed.family === 4) return parsed.value >>> 24 === 127
  const [a, b, c, d] = parsed.words
  return a === 0 && b === 0 && c === 0 && d === 1
}
