/**
 * Strict text parsing of IP addresses (per request) and allow-list rules (at load time).
 *
 * Hand-written rather than ipaddr.js: it must reject the legacy IPv4 forms ipaddr.js accepts
 * (`010.1.1.1`, `10.1`, `0xa.1.2.3`, `167837955`), keep `::a.b.c.d` IPv6 (ipaddr.js rewrites it to
 * `::ffff:a.b.c.d`), and parse a client well within the per-request budget: no regexes, and one small
 * result object.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4291#section-2.2 (IPv6 text forms)
 */

/** The four 32-bit words of an IPv6 address, most significant first. */
export type Ipv6Words = readonly [number, number, number, number]

/**
 * A parsed client address. IPv4-mapped IPv6 addresses (`::ffff:10.1.2.3`) come back as family 4,
 * because they are IPv4 clients reached over an IPv6 socket.
 */
export type ParsedAddress =
  | { readonly family: 4; readonly value: number }
  | { readonly family: 6; readonly words: Ipv6Words }

/** An allow-list rule: a network with its host bits clear and its prefix length, in its family's bits. */
export interface AddressRule {
  readonly family: 4 | 6
  readonly network: bigint
  readonly prefix: number
}

/** The outcome of parsing a rule: the rule, or a detail saying what is wrong and what was expected. */
export type RuleParseResult =
  | { readonly ok: true; readonly rule: AddressRule }
  | { readonly ok: false; readonly detail: string }

// The longest valid client text is 45 characters (IPv6 with a dotted tail) plus a zone id (Linux
// interface names are at most 15); anything much longer is hostile and not worth scanning.
const MAX_ADDRESS_LENGTH = 100
const EXPECTED_IPV4 = 'expected four decimal parts 0-255 without leading zeros, as in 10.1.2.3 or 10.1.2.0/24'
const EXPECTED_IPV6 = 'expected RFC 4291 text, as in fe80::1 or 2001:db8::/32'
const COLON = 58
const DOT = 46
const ZERO = 48
const NINE = 57

/** Bits in an address of the family. */
export function familyBits(family: 4 | 6): 32 | 128 {
  return family === 4 ? 32 : 128
}

/**
 * Parses a client address strictly; `undefined` for anything that is not exactly an address.
 *
 * @example
 * parseClientAddress('::ffff:10.1.2.3') // { family: 4, value: 167838211 }
 * parseClientAddress('10.1.2.3:8080')   // undefined
 */
export function parseClientAddress(text: string | undefined): ParsedAddress | undefined {
  if (typeof text !== 'string' || text.length > MAX_ADDRESS_LENGTH) return undefined
  if (!text.includes(':')) {
    const value = parseIpv4(text, 0, text.length)
    return value < 0 ? undefined : { family: 4, value }
  }
  const words = parseZonedIpv6(text, text.length)
  if (words === undefined) return undefined
  return isMappedWords(words) ? { family: 4, value: words[3] } : { family: 6, words }
}

/**
 * Parses an allow-list rule (`10.0.0.0/8`, `2001:db8::1`, `::ffff:10.0.0.0/104`) strictly.
 *
 * @example
 * parseAddressRule('::ffff:10.0.0.0/104')
 * // { ok: true, rule: { family: 4, network: 0xa000000n, prefix: 8 } }
 * parseAddressRule('10.1.2.77/24')
 * // { ok: false, detail: '"10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?' }
 */
export function parseAddressRule(text: string): RuleParseResult {
  const quoted = JSON.stringify(text)
  const slash = text.indexOf('/')
  const addressEnd = slash < 0 ? text.length : slash
  let family: 4 | 6
  let value: bigint
  if (text.slice(0, addressEnd).includes(':')) {
    const words = parseZonedIpv6(text, addressEnd)
    if (words === undefined) {
      return fail(`${quoted} is not a valid IPv6 address or CIDR; ${EXPECTED_IPV6}`)
    }
    family = 6
    value = wordsToBigInt(words)
  } else {
    const v4 = parseIpv4(text, 0, addressEnd)
    if (v4 < 0) {
      return fail(`${quoted} is not a valid IPv4 address or CIDR; ${EXPECTED_IPV4}`)
    }
    family = 4
    value = BigInt(v4)
  }
  const bits = familyBits(family)
  // Stryker disable next-line EqualityOperator: equivalent because a rule starting with "/" has an empty address, rejected above
  const prefix = slash < 0 ? bits : parsePrefix(text, slash + 1, bits)
  if (prefix < 0) {
    return fail(
      `${quoted} has an invalid prefix length; expected a whole number 0-${bits} without leading zeros`,
    )
  }
  const hostMask = (1n << BigInt(bits - prefix)) - 1n
  if ((value & hostMask) !== 0n) {
    const network = formatAddress(family, value & ~hostMask)
    return fail(`${quoted} has host bits set; did you mean ${network}/${prefix}?`)
  }
  // A mapped network of /96 or longer lies wholly inside ::ffff:0:0/96, so it is the IPv4 rule
  // a.b.c.d/(p-96). With a shorter prefix the ffff group's lowest bit (bit 32) is a host bit, so a
  // mapped address never passes the check above: every rule with p < 96 is an IPv6 rule and, like
  // ::/0, admits no IPv4 (mapped) client. An IPv4 value (below 2^32) is never mapped, so being
  // mapped here already means IPv6 and p >= 96.
  if (isMappedBigInt(value)) {
    return { ok: true, rule: { family: 4, network: value & 0xffff_ffffn, prefix: prefix - 96 } }
  }
  return { ok: true, rule: { family, network: value, prefix } }
}

/**
 * Formats an address: dotted IPv4, or RFC 5952 IPv6 with a dotted tail for mapped addresses.
 *
 * @example
 * formatAddress(6, 0x2001_0db8n << 96n) // '2001:db8::'
 * @see https://www.rfc-editor.org/rfc/rfc5952#section-4
 */
export function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return formatIpv4(Number(value))
  if (isMappedBigInt(value)) return `::ffff:${formatIpv4(Number(value & 0xffff_ffffn))}`
  const groups: number[] = []
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn))
  let bestStart = -1
  let bestLength = 1 // RFC 5952 §4.2.2: a single zero group is never shortened to ::
  let runStart = 0 // where the current run of zero groups began
  groups.forEach((group, i) => {
    if (group !== 0) {
      runStart = i + 1
    } else if (i + 1 - runStart > bestLength) {
      // Strictly longer only: on a tie the first run stays (§4.2.3).
      bestStart = runStart
      bestLength = i + 1 - runStart
    }
  })
  const hex = groups.map((group) => group.toString(16))
  if (bestStart < 0) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`
}

/**
 * Formats a rule as CIDR text, or as a bare address when it holds a single address.
 *
 * @example
 * formatRule({ family: 4, network: 0x0a00_0000n, prefix: 8 }) // '10.0.0.0/8'
 */
export function formatRule(rule: AddressRule): string {
  const address = formatAddress(rule.family, rule.network)
  return rule.prefix === familyBits(rule.family) ? address : `${address}/${rule.prefix}`
}

function fail(detail: string): RuleParseResult {
  return { ok: false, detail }
}

function formatIpv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`
}

/** Four decimal parts 0-255 without leading zeros in `text[start, end)`, as an unsigned number; -1 if not. */
function parseIpv4(text: string, start: number, end: number): number {
  let value = 0
  let part = 0
  let digits = 0
  let parts = 0
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c >= ZERO && c <= NINE) {
      if (digits > 0 && part === 0) return -1
      part = part * 10 + (c - ZERO)
      if (part > 255) return -1
      digits++
      // A fifth part is left to the count at the end.
    } else if (c === DOT && digits > 0) {
      value = value * 256 + part
      part = 0
      digits = 0
      parts++
    } else {
      return -1
    }
  }
  return digits > 0 && parts === 3 ? value * 256 + part : -1
}

/** IPv6 text with an optional `%zone` in `text[0, end)` as four words; undefined if either is bad. */
function parseZonedIpv6(text: string, end: number): Ipv6Words | undefined {
  const percent = text.indexOf('%')
  // Stryker disable next-line EqualityOperator: equivalent because a "%" at 0 fails as a zone and as an address alike, and text[end] is "/" when a "%" follows end
  if (percent < 0 || percent >= end) return parseIpv6(text, 0, end)
  return isZone(text, percent + 1, end) ? parseIpv6(text, 0, percent) : undefined
}

/** A non-empty zone id in `text[start, end)`. */
function isZone(text: string, start: number, end: number): boolean {
  if (start === end) return false
  for (let i = start; i < end; i++) {
    if (!isZoneChar(text.charCodeAt(i))) return false
  }
  return true
}

/** RFC 4291 §2.2 text in `text[start, end)` as four words; undefined if not. */
function parseIpv6(text: string, start: number, end: number): Ipv6Words | undefined {
  const groups = [0, 0, 0, 0, 0, 0, 0, 0]
  let count = 0
  let gap = -1
  let i = start
  if (codeAt(text, i, end) === COLON && codeAt(text, i + 1, end) === COLON) {
    gap = 0
    i += 2
  }
  while (i < end) {
    let value = 0
    let j = i
    // The span's end reads as -1, not a hex digit, so the scan stops there.
    for (let digit = hexValue(codeAt(text, j, end)); digit >= 0; digit = hexValue(codeAt(text, ++j, end))) {
      value = value * 16 + digit
    }
    if (codeAt(text, j, end) === DOT) {
      // A dotted tail stands for the last two groups and must end the text; too many groups in
      // all are left to the count at the end.
      const v4 = parseIpv4(text, i, end)
      if (v4 < 0) return undefined
      groups[count++] = Math.floor(v4 / 65536)
      groups[count++] = v4 % 65536
      break
    }
    if (j === i || j - i > 4) return undefined
    groups[count++] = value
    if (j === end) break
    if (text.charCodeAt(j) !== COLON) return undefined
    j++
    if (codeAt(text, j, end) === COLON) {
      if (gap >= 0) return undefined
      gap = count
      j++
    } else if (j === end) {
      return undefined
    }
    i = j
  }
  if (gap < 0) {
    if (count !== 8) return undefined
  } else {
    // "::" stands for at least one zero group; move the groups after it to the end.
    if (count > 7) return undefined
    const tail = count - gap
    for (let k = 1; k <= tail; k++) {
      groups[8 - k] = groups[count - k]!
      groups[count - k] = 0
    }
  }
  return [
    groups[0]! * 65536 + groups[1]!,
    groups[2]! * 65536 + groups[3]!,
    groups[4]! * 65536 + groups[5]!,
    groups[6]! * 65536 + groups[7]!,
  ]
}

/**
 * The character code at `k` of a span ending at `end`, or -1 past it (no character any rule accepts).
 * Every span ends at a "%", a "/" or the end of the text, and none of those is an address
 * character, so reading past the end would give the same answers; the bound keeps each parse to its
 * own span all the same.
 */
function codeAt(text: string, k: number, end: number): number {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,UnaryOperator: equivalent because the character at end is "%", "/" or none (see above)
  return k < end ? text.charCodeAt(k) : -1
}

// Zone ids are interface names or numbers; RFC 6874 limits them to URI "unreserved" characters.
function isZoneChar(c: number): boolean {
  return (
    (c >= ZERO && c <= NINE) ||
    ((c | 0x20) >= 97 && (c | 0x20) <= 122) ||
    c === DOT ||
    c === 45 || // -
    c === 95 || // _
    c === 126 // ~
  )
}

/** The value of a hex digit; negative for anything else (below "0", `c - ZERO` already is). */
function hexValue(c: number): number {
  if (c <= NINE) return c - ZERO
  const lower = c | 0x20
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

/** A prefix length in `text[start..]`: decimal, no leading zeros, at most `max`; -1 if not. */
function parsePrefix(text: string, start: number, max: number): number {
  const length = text.length - start
  if (length < 1 || (length > 1 && text.charCodeAt(start) === ZERO)) return -1
  let value = 0
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < ZERO || c > NINE) return -1
    value = value * 10 + (c - ZERO)
  }
  return value > max ? -1 : value
}

function isMappedWords(words: Ipv6Words): boolean {
  return words[0] === 0 && words[1] === 0 && words[2] === 0xffff
}

function isMappedBigInt(value: bigint): boolean {
  return value >> 32n === 0xffffn
}

/** The 128-bit value of an IPv6 address's words. */
export function wordsToBigInt(words: Ipv6Words): bigint {
  return (BigInt(words[0]) << 96n) | (BigInt(words[1]) << 64n) | (BigInt(words[2]) << 32n) | BigInt(words[3])
}

/**
 * A value as it should appear in an error detail: JSON where possible, never the value's own code.
 *
 * @example
 * quoteValue('10.1') // '"10.1"'
 */
export function quoteValue(value: unknown): string {
  if (typeof value === 'number' || value === undefined) return String(value)
  if (typeof value === 'bigint') return `${value}n`
  try {
    const json = JSON.stringify(value)
    if (json !== undefined) return json
  } catch {
    // Cyclic objects cannot be shown as JSON; their type is enough to say what is wrong.
  }
  return `a value of type ${typeof value}`
}
