import fc from 'fast-check'
import * as ipaddr from 'ipaddr.js'
import { describe, expect, test } from 'vitest'
import {
  formatAddress,
  formatRule,
  type ParsedAddress,
  parseAddressRule,
  parseClientAddress,
  quoteValue,
} from '../../src/restrictions/ip-address.js'

/** A parsed address as text, with its family, so tables read like addresses. */
function show(parsed: ParsedAddress | undefined): string | undefined {
  if (parsed === undefined) return undefined
  if (parsed.family === 4) return `v4 ${formatAddress(4, BigInt(parsed.value))}`
  const [a, b, c, d] = parsed.words.map(BigInt) as [bigint, bigint, bigint, bigint]
  return `v6 ${formatAddress(6, (a << 96n) | (b << 64n) | (c << 32n) | d)}`
}

/** The 4 or 16 bytes of a parsed address, to compare with ipaddr.js. */
function bytesOf(parsed: ParsedAddress): number[] {
  const words = parsed.family === 4 ? [parsed.value] : parsed.words
  return words.flatMap((word) => [word >>> 24, (word >>> 16) & 255, (word >>> 8) & 255, word & 255])
}

/**
 * ipaddr.js as an independent oracle. It rewrites `::a.b.c.d` to `::ffff:a.b.c.d`, so the dotted
 * tail becomes two hex groups first; mapped addresses are IPv4 clients, as in the library.
 */
function oracleBytes(text: string): number[] | undefined {
  const hexTail = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/, (_, a, b, c, d, zone = '') => {
    const [p, q, r, s] = [a, b, c, d].map(Number) as [number, number, number, number]
    return `${((p << 8) | q).toString(16)}:${((r << 8) | s).toString(16)}${zone}`
  })
  const source = text.includes(':') ? hexTail : text
  if (!ipaddr.isValid(source)) return undefined
  const address = ipaddr.parse(source)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (address as ipaddr.IPv6).toIPv4Address().toByteArray()
  }
  return address.toByteArray()
}

describe('parseClientAddress', () => {
  test.each([
    ['10.1.2.3', 'v4 10.1.2.3'],
    ['0.0.0.0', 'v4 0.0.0.0'],
    ['255.255.255.255', 'v4 255.255.255.255'],
    ['::ffff:10.1.2.3', 'v4 10.1.2.3'],
    ['::ffff:a01:203', 'v4 10.1.2.3'],
    ['::FFFF:A01:203', 'v4 10.1.2.3'],
    ['0:0:0:0:0:ffff:10.1.2.3', 'v4 10.1.2.3'],
    ['0000:0000:0000:0000:0000:ffff:0a01:0203', 'v4 10.1.2.3'],
    ['::0:ffff:10.1.2.3', 'v4 10.1.2.3'],
    ['::ffff:10.1.2.3%eth0', 'v4 10.1.2.3'],
    ['::10.1.2.3', 'v6 ::a01:203'],
    ['::a01:203', 'v6 ::a01:203'],
    ['64:ff9b::10.1.2.3', 'v6 64:ff9b::a01:203'],
    ['::fffe:10.1.2.3', 'v6 ::fffe:a01:203'],
    ['fe80::1%eth0', 'v6 fe80::1'],
    ['fe80::1%12', 'v6 fe80::1'],
    ['fe80::1%en0.100_a-b~', 'v6 fe80::1'],
    ['fe80::1%zt9', 'v6 fe80::1'],
    ['fe80::1%ZT9', 'v6 fe80::1'],
    ['::', 'v6 ::'],
    ['::1', 'v6 ::1'],
    ['1::', 'v6 1::'],
    ['2001:DB8::1', 'v6 2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', 'v6 2001:db8::1'],
    ['1:2:3:4:5:6:7:8', 'v6 1:2:3:4:5:6:7:8'],
    ['1:2:3:4:5:6:7::', 'v6 1:2:3:4:5:6:7:0'],
    ['::2:3:4:5:6:7:8', 'v6 0:2:3:4:5:6:7:8'],
    ['1:2:3:4:5:6:1.2.3.4', 'v6 1:2:3:4:5:6:102:304'],
    ['1::5:6:1.2.3.4', 'v6 1::5:6:102:304'],
    ['1:2:3::8', 'v6 1:2:3::8'],
  ])('parses %j as %s', (text, expected) => {
    expect(show(parseClientAddress(text))).toBe(expected)
  })

  test.each([
    ['010.1.1.1', 'leading zero'],
    ['10.01.1.1', 'leading zero in a later part'],
    ['00.1.1.1', 'two zeros'],
    ['10.1', 'two parts'],
    ['10.1.2', 'three parts'],
    ['1.2.3.4.5', 'five parts'],
    ['0xa.1.2.3', 'hex part'],
    ['1.2.3.a', 'a letter for a part'],
    ['a.b.c.d', 'letters for parts'],
    ['167837955', 'a single number'],
    ['1.2.3.256', 'a part above 255'],
    ['1.2.3.1000', 'four digits'],
    ['1..2.3', 'an empty part'],
    ['.1.2.3', 'a leading dot'],
    ['1.2.3.', 'a trailing dot'],
    [' 10.1.2.3', 'leading space'],
    ['10.1.2.3 ', 'trailing space'],
    ['10.1.2.3%eth0', 'a zone on IPv4'],
    ['10.1.2.3/32', 'a prefix'],
    ['10.1.2.3:8080', 'a port'],
    ['[::1]', 'brackets'],
    ['[::1]:8080', 'brackets and a port'],
    ['', 'the empty string'],
    ['garbage', 'garbage'],
    ['1::2::3', 'two ::'],
    ['::1::2', 'a leading :: and another'],
    [':1::', 'a leading single colon'],
    [':1:2:3:4:5:6:7', 'a leading single colon, seven groups'],
    ['1::2:', 'a trailing single colon'],
    [':::', 'three colons'],
    ['1:::2', 'three colons inside'],
    ['12345::', 'five hex digits'],
    ['::g', 'a non-hex digit'],
    ['::@1', 'an "@", just below "A"'],
    ['::`1', 'a "`", just below "a"'],
    ['1:2:3:4:5:6:7', 'seven groups'],
    ['1:2:3:4:5:6:7:8:9', 'nine groups'],
    ['::1:2:3:4:5:6:7:8', ':: and eight groups'],
    ['1:2:3:4:5:6:7:8::', 'eight groups and ::'],
    ['1:2:3:4:5:6:7:1.2.3.4', 'seven groups and a dotted tail'],
    ['1::2:3:4:5:6:1.2.3.4', ':: with six groups and a dotted tail'],
    ['::1.2.3', 'a short dotted tail'],
    ['::ffff:010.1.2.3', 'a leading zero in the dotted tail'],
    ['::1.2.3.4:5', 'a group after the dotted tail'],
    ['::1.2.3.4:', 'a colon after the dotted tail'],
    ['::ffff:1.2.3.4/128', 'a prefix on IPv6'],
    ['fe80::1%', 'an empty zone'],
    ['fe80::1%eth 0', 'a space in the zone'],
    ['fe80::1%eth0%1', 'two zones'],
    ['fe80::1%eth0:1', 'a colon in the zone'],
    ['fe80::1%[eth0]', 'brackets in the zone'],
    ['a'.repeat(200), 'a very long text'],
    [`fe80::1%${'a'.repeat(120)}`, 'a very long zone'],
  ])('rejects %j (%s)', (text) => {
    expect(parseClientAddress(text)).toBeUndefined()
  })

  test('scans at most 100 characters: a longer text is hostile, whatever it holds', () => {
    const zoned = (length: number) => `fe80::1%${'a'.repeat(length - 'fe80::1%'.length)}`
    expect(show(parseClientAddress(zoned(100)))).toBe('v6 fe80::1')
    expect(parseClientAddress(zoned(101))).toBeUndefined()
  })

  test.each([undefined, null, 167837955, {}])('rejects the non-string %j', (value) => {
    expect(parseClientAddress(value as unknown as string)).toBeUndefined()
  })

  test('agrees with ipaddr.js on generated valid addresses (both spellings of the dotted tail)', () => {
    const address = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.ipV6().map((text) => text.toUpperCase()),
      fc.ipV4().map((text) => `::ffff:${text}`),
    )
    fc.assert(
      fc.property(address, (text) => {
        const parsed = parseClientAddress(text)
        expect(parsed).toBeDefined()
        expect(bytesOf(parsed!)).toEqual(oracleBytes(text))
      }),
      { numRuns: 2000, seed: 42 },
    )
  })

  test('agrees with ipaddr.js on near-miss texts that both accept, and never accepts what it rejects', () => {
    const hexGroup = fc.oneof(
      { weight: 8, arbitrary: fc.stringMatching(/^[0-9a-fA-F]{1,4}$/) },
      { weight: 1, arbitrary: fc.constantFrom('', '0', 'ffff', 'FFFF', '00000', 'g1', ' 1') },
    )
    const decimalPart = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 255 }).map(String) },
      { weight: 1, arbitrary: fc.constantFrom('', '01', '256', '0x1') },
    )
    const partCount = fc.oneof({ weight: 8, arbitrary: fc.constant(4) }, fc.constantFrom(3, 5))
    const dotted = partCount
      .chain((count) => fc.array(decimalPart, { minLength: count, maxLength: count }))
      .map((parts) => parts.join('.'))
    const text = fc
      .record({
        head: fc.array(hexGroup, { maxLength: 8 }),
        tail: fc.array(hexGroup, { maxLength: 5 }),
        compressed: fc.boolean(),
        dottedTail: fc.option(dotted),
        zone: fc.constantFrom('', '', '', '%eth0', '%1', '%'),
      })
      .map(({ head, tail, compressed, dottedTail, zone }) => {
        const groups = compressed ? `${head.join(':')}::${tail.join(':')}` : [...head, ...tail].join(':')
        if (dottedTail === null) return `${groups}${zone}`
        return `${groups}${groups === '' || groups.endsWith(':') ? '' : ':'}${dottedTail}${zone}`
      })
    let accepted = 0
    fc.assert(
      fc.property(fc.oneof(text, fc.ipV4Extended(), dotted), (candidate) => {
        const parsed = parseClientAddress(candidate)
        if (parsed === undefined) return
        accepted++
        expect(bytesOf(parsed)).toEqual(oracleBytes(candidate))
      }),
      { numRuns: 5000, seed: 42 },
    )
    expect(accepted).toBeGreaterThan(1000)
  })

  test('accepts exactly the four-part decimal form among legacy IPv4 spellings', () => {
    const strict = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/
    fc.assert(
      fc.property(fc.ipV4Extended(), (text) => {
        const parts = strict.exec(text)
        const isStrict = parts?.slice(1).every((part) => Number(part) <= 255) ?? false
        expect(parseClientAddress(text) !== undefined).toBe(isStrict)
      }),
      { numRuns: 2000, seed: 42 },
    )
  })
})

describe('parseAddressRule', () => {
  test.each([
    ['10.0.0.0/8', 4, '10.0.0.0/8'],
    ['10.1.2.3', 4, '10.1.2.3'],
    ['10.1.2.3/32', 4, '10.1.2.3'],
    ['0.0.0.0/0', 4, '0.0.0.0/0'],
    ['::/0', 6, '::/0'],
    ['::ffff:10.0.0.0/104', 4, '10.0.0.0/8'],
    ['::ffff:a00:0/104', 4, '10.0.0.0/8'],
    ['::ffff:0:0/96', 4, '0.0.0.0/0'],
    ['::ffff:10.1.2.3', 4, '10.1.2.3'],
    ['::ffff:10.1.2.3/128', 4, '10.1.2.3'],
    ['::10.1.2.0/120', 6, '::a01:200/120'],
    ['::/96', 6, '::/96'],
    ['64:ff9b::/96', 6, '64:ff9b::/96'],
    ['fe80::%eth0/64', 6, 'fe80::/64'],
    ['fe80::1%eth0', 6, 'fe80::1'],
    ['2001:DB8::/32', 6, '2001:db8::/32'],
    ['2001:db8::1/128', 6, '2001:db8::1'],
  ])('parses %j as an IPv%i rule %s', (text, family, expected) => {
    const result = parseAddressRule(text)
    expect(result.ok && result.rule.family).toBe(family)
    expect(result.ok && formatRule(result.rule)).toBe(expected)
  })

  test.each([
    ['10.1.2.77/24', '"10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?'],
    ['10.0.0.1/0', '"10.0.0.1/0" has host bits set; did you mean 0.0.0.0/0?'],
    ['2001:db8::1/32', '"2001:db8::1/32" has host bits set; did you mean 2001:db8::/32?'],
    ['2001:db8:0:0:1::1/64', '"2001:db8:0:0:1::1/64" has host bits set; did you mean 2001:db8::/64?'],
    ['::ffff:10.1.2.77/120', '"::ffff:10.1.2.77/120" has host bits set; did you mean ::ffff:10.1.2.0/120?'],
    ['::ffff:10.1.2.3/80', '"::ffff:10.1.2.3/80" has host bits set; did you mean ::/80?'],
    ['::ffff:0:0/95', '"::ffff:0:0/95" has host bits set; did you mean ::fffe:0:0/95?'],
  ])('rejects %j: %s', (text, detail) => {
    expect(parseAddressRule(text)).toEqual({ ok: false, detail })
  })

  const v4Prefix = 'has an invalid prefix length; expected a whole number 0-32 without leading zeros'
  const v6Prefix = 'has an invalid prefix length; expected a whole number 0-128 without leading zeros'
  test.each([
    ['10.0.0.0/33', v4Prefix],
    ['10.0.0.0/08', v4Prefix],
    ['10.0.0.0/00', v4Prefix],
    ['10.0.0.0/', v4Prefix],
    ['10.0.0.0/-1', v4Prefix],
    ['10.0.0.0/+8', v4Prefix],
    ['10.0.0.0/ 8', v4Prefix],
    ['10.0.0.0/8 ', v4Prefix],
    ['10.0.0.0/0x8', v4Prefix],
    ['10.0.0.0/8/8', v4Prefix],
    ['10.0.0.0/1000', v4Prefix],
    ['::/129', v6Prefix],
    ['::/0128', v6Prefix],
    ['::ffff:0:0/129', v6Prefix],
    ['::/8 ', v6Prefix],
    ['::/1f', v6Prefix],
    ['::/:8', v6Prefix],
    // The prefix is whatever follows the slash: a zone or a colon there does not make it an address.
    ['fe80::/64%eth0', v6Prefix],
    ['10.0.0.0/:8', v4Prefix],
  ])('rejects the prefix of %j', (text, message) => {
    expect(parseAddressRule(text)).toEqual({ ok: false, detail: `${JSON.stringify(text)} ${message}` })
  })

  const expectedIpv4 =
    'expected four decimal parts 0-255 without leading zeros, as in 10.1.2.3 or 10.1.2.0/24'
  const notV4 = `is not a valid IPv4 address or CIDR; ${expectedIpv4}`
  const notV6 = 'is not a valid IPv6 address or CIDR; expected RFC 4291 text, as in fe80::1 or 2001:db8::/32'
  test.each([
    ['010.1.1.1', notV4],
    ['010.0.0.0/8', notV4],
    ['10.1', notV4],
    ['10.0/16', notV4],
    ['0xa.1.2.3', notV4],
    ['167837955', notV4],
    ['167837955/32', notV4],
    ['1.2.3.256', notV4],
    ['1.2.3.4.5', notV4],
    ['10.1.2.3%eth0', notV4],
    [' 10.0.0.0/8', notV4],
    ['', notV4],
    ['/8', notV4],
    ['/::1', notV4],
    ['garbage', notV4],
    ['1::2::3/64', notV6],
    ['[::1]', notV6],
    ['[::1]/128', notV6],
    ['fe80::1%/64', notV6],
    ['::ffff:010.1.2.3', notV6],
    ['12345::/16', notV6],
    ['10.1.2.3:8080', notV6],
  ])('rejects the address of %j', (text, message) => {
    expect(parseAddressRule(text)).toEqual({ ok: false, detail: `${JSON.stringify(text)} ${message}` })
  })
})

describe('formatAddress', () => {
  // RFC 5952 §4: lower case, no leading zeros, the longest run of two or more zero groups
  // compressed (the first on a tie), a lone zero group kept, mapped addresses dotted (§5).
  test.each([
    ['2001:0db8:0000:0000:0000:0000:0002:0001', '2001:db8::2:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:DB8::AAAA', '2001:db8::aaaa'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['0:0:0:0:0:ffff:a01:203', '::ffff:10.1.2.3'],
    ['0:0:0:0:0:0:a01:203', '::a01:203'],
  ])('writes %s as %s', (text, expected) => {
    const result = parseAddressRule(text)
    expect(
      result.ok &&
        formatAddress(
          6,
          result.rule.family === 6 ? result.rule.network : result.rule.network | (0xffffn << 32n),
        ),
    ).toBe(expected)
  })

  test('writes IPv4 addresses in dotted decimal', () => {
    expect(formatAddress(4, 0xffff_ffffn)).toBe('255.255.255.255')
    expect(formatAddress(4, 0x0a01_0203n)).toBe('10.1.2.3')
  })
})

describe('quoteValue', () => {
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  test.each([
    ['10.1', '"10.1"'],
    [5, '5'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [undefined, 'undefined'],
    [null, 'null'],
    [10n, '10n'],
    [{ a: 1 }, '{"a":1}'],
    [cyclic, 'a value of type object'],
    [Symbol('x'), 'a value of type symbol'],
    [() => 1, 'a value of type function'],
  ])('quotes %s as %s', (value, expected) => {
    expect(quoteValue(value)).toBe(expected)
  })
})
