import fc from 'fast-check'
import * as ipaddr from 'ipaddr.js'
import { describe, expect, test } from 'vitest'
import { ConfigError } from '../../src/errors.js'
import {
  AllowList,
  compileAllowList,
  intersectAllowLists,
  tryCompileAllowList,
} from '../../src/restrictions/ip-matcher.js'

const ANYWHERE = ['0.0.0.0/0', '::/0']
const EXPECTED_IPV4 = 'expected four decimal parts 0-255 without leading zeros, as in 10.1.2.3 or 10.1.2.0/24'

describe('compileAllowList(...).allows', () => {
  test.each([
    // 0.0.0.0/0 is every IPv4 client, mapped ones included, and no IPv6 one.
    [['0.0.0.0/0'], '10.1.2.3', true],
    [['0.0.0.0/0'], '::ffff:10.1.2.3', true],
    [['0.0.0.0/0'], '::1', false],
    [['0.0.0.0/0'], '2001:db8::1', false],
    // ::/0 is every IPv6 client and no IPv4 one, whatever its spelling.
    [['::/0'], '2001:db8::1', true],
    [['::/0'], '::10.1.2.3', true],
    [['::/0'], '10.1.2.3', false],
    [['::/0'], '::ffff:10.1.2.3', false],
    [['::/0'], '::ffff:a01:203', false],
    // Mapped clients are IPv4 in both spellings; compatible and NAT64 ones are IPv6.
    [['10.0.0.0/8'], '::ffff:10.1.2.3', true],
    [['10.0.0.0/8'], '::ffff:a01:203', true],
    [['10.0.0.0/8'], '0:0:0:0:0:FFFF:0A01:0203', true],
    [['10.0.0.0/8'], '::ffff:10.1.2.3%eth0', true],
    [['10.0.0.0/8'], '::10.1.2.3', false],
    [['10.0.0.0/8'], '::a01:203', false],
    [['10.0.0.0/8'], '64:ff9b::10.1.2.3', false],
    [['10.0.0.0/8'], '64:ff9b::a01:203', false],
    [['::/96'], '::10.1.2.3', true],
    [['::/96'], '10.1.2.3', false],
    [['64:ff9b::/96'], '64:ff9b::10.1.2.3', true],
    [['64:ff9b::/96'], '10.1.2.3', false],
    // A mapped rule of /96 or longer is the IPv4 rule a.b.c.d/(p-96).
    [['::ffff:10.0.0.0/104'], '10.1.2.3', true],
    [['::ffff:10.0.0.0/104'], '::ffff:10.1.2.3', true],
    [['::ffff:10.0.0.0/104'], '11.0.0.1', false],
    [['::ffff:a01:203'], '10.1.2.3', true],
    [['::ffff:0:0/96'], '192.168.1.1', true],
    [['::ffff:0:0/96'], '2001:db8::1', false],
    // Zone ids are stripped from clients and rules.
    [['fe80::/10'], 'fe80::1%eth0', true],
    [['fe80::1'], 'fe80::1%2', true],
    [['fe80::%eth0/64'], 'fe80::1', true],
    [['fe80::/10'], 'fe80::1%', false],
    // Single addresses and range boundaries.
    [['10.1.2.3'], '10.1.2.3', true],
    [['10.1.2.3'], '10.1.2.4', false],
    [['10.0.0.0/8'], '9.255.255.255', false],
    [['10.0.0.0/8'], '10.0.0.0', true],
    [['10.0.0.0/8'], '10.255.255.255', true],
    [['10.0.0.0/8'], '11.0.0.0', false],
    [['255.255.255.255'], '255.255.255.255', true],
    [['0.0.0.0'], '0.0.0.0', true],
    [['2001:db8::/32'], '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', true],
    [['2001:db8::/32'], '2001:DB8::1', true],
    [['2001:db8::/32'], '2001:db9::', false],
    [['2001:db8::/32'], '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', false],
    [['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    // Overlapping and adjacent rules.
    [['10.0.0.0/9', '10.128.0.0/9'], '10.200.0.1', true],
    [['10.1.0.0/16', '10.0.0.0/8', '10.1.2.0/24'], '10.9.9.9', true],
    [['10.0.0.0/8', '12.0.0.0/8', '11.0.0.0/8'], '11.5.5.5', true],
    [['10.0.0.0/8', '12.0.0.0/8'], '11.5.5.5', false],
    [['2001:db8::/33', '2001:db8:8000::/33', '::1'], '2001:db8:ffff::1', true],
    // An empty list blocks everyone.
    [[], '10.1.2.3', false],
    [[], '::1', false],
  ])('%j allows %j: %s', (rules, address, expected) => {
    expect(compileAllowList(rules).allows(address)).toBe(expected)
  })

  test.each([
    '010.1.1.1',
    '10.1',
    '0xa.1.2.3',
    '167837955',
    '1.2.3.256',
    '10.1.2.3:8080',
    '[::1]',
    '',
    'garbage',
    '10.1.2.3/32',
    '::ffff:010.1.2.3',
    '1::2::3',
  ])('denies the unparsable client %j even with both families allowed', (address) => {
    expect(compileAllowList(ANYWHERE).allows(address)).toBe(false)
  })

  test.each([undefined, null, 167837955, { toString: () => '10.1.2.3' }])(
    'denies the non-string %j',
    (address) => {
      expect(compileAllowList(ANYWHERE).allows(address as unknown as string)).toBe(false)
    },
  )

  test('keeps the rules as given, frozen', () => {
    const list = compileAllowList(['10.1.0.0/16', '10.0.0.0/8', '::ffff:10.0.0.0/104'])
    expect(list.rules).toEqual(['10.1.0.0/16', '10.0.0.0/8', '::ffff:10.0.0.0/104'])
    expect(Object.isFrozen(list.rules)).toBe(true)
    expect(Object.isFrozen(list)).toBe(true)
  })
})

describe('compileAllowList errors', () => {
  test('names the bad rule with the exact message and path', () => {
    const error = catchError(() => compileAllowList(['10.0.0.0/8', '::/0', '10.1.2.77/24']))
    expect(error).toBeInstanceOf(ConfigError)
    expect(error).toMatchObject({
      code: 'ERR_INVALID_CONFIG',
      message: 'allowedIps[2]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
      path: ['allowedIps', 2],
      detail: '"10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
    })
  })

  test('prefixes the path it is given', () => {
    expect(() => compileAllowList(['2001:db8::1/32'], ['trustProxy'])).toThrow(
      'trustProxy[0]: "2001:db8::1/32" has host bits set; did you mean 2001:db8::/32?',
    )
  })

  test.each([
    ['010.1.1.1', 'is not a valid IPv4 address or CIDR'],
    ['10.1', 'is not a valid IPv4 address or CIDR'],
    ['0xa.1.2.3', 'is not a valid IPv4 address or CIDR'],
    ['167837955', 'is not a valid IPv4 address or CIDR'],
    ['1.2.3.256', 'is not a valid IPv4 address or CIDR'],
    ['10.1.2.3:8080', 'is not a valid IPv6 address or CIDR'],
    ['10.0.0.0/33', 'has an invalid prefix length; expected a whole number 0-32 without leading zeros'],
    ['10.0.0.0/08', 'has an invalid prefix length; expected a whole number 0-32 without leading zeros'],
    ['::/129', 'has an invalid prefix length; expected a whole number 0-128 without leading zeros'],
    ['::/064', 'has an invalid prefix length; expected a whole number 0-128 without leading zeros'],
    ['10.1.2.77/24', 'has host bits set; did you mean 10.1.2.0/24?'],
  ])('rejects the rule %j: %s', (rule, message) => {
    expect(() => compileAllowList(['::1', rule])).toThrow(`allowedIps[1]: ${JSON.stringify(rule)} ${message}`)
  })

  test('reports every bad rule, holes and non-strings included', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is a bad rule, not a skipped one
    const rules = ['10.0.0.0/8', 42, , '10.1'] as unknown[]
    expect(tryCompileAllowList(rules)).toEqual({
      ok: false,
      issues: [
        { index: 1, detail: '42 is not a string; expected an IP address or CIDR such as "10.0.0.0/8"' },
        {
          index: 2,
          detail: 'undefined is not a string; expected an IP address or CIDR such as "10.0.0.0/8"',
        },
        {
          index: 3,
          detail: `"10.1" is not a valid IPv4 address or CIDR; ${EXPECTED_IPV4}`,
        },
      ],
    })
  })
})

describe('intersectAllowLists', () => {
  test.each([
    [['10.0.0.0/8'], ['10.1.0.0/16', '192.168.0.0/16'], ['10.1.0.0/16']],
    [['10.0.0.0/8'], ['192.168.0.0/16'], []],
    [['10.0.0.0/8'], [], []],
    [[], ['0.0.0.0/0', '::/0'], []],
    [ANYWHERE, ['10.1.2.3', '2001:db8::/32'], ['10.1.2.3', '2001:db8::/32']],
    [['0.0.0.0/0'], ['::/0'], []],
    [['::/0'], ['::ffff:10.0.0.0/104'], []],
    [['0.0.0.0/0'], ['::ffff:10.0.0.0/104'], ['10.0.0.0/8']],
    [['2001:db8::/32'], ['2001:db8:8000::/33', '2001:db9::/32'], ['2001:db8:8000::/33']],
    [
      ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6'],
      ['10.0.0.0/24'],
      ['10.0.0.1', '10.0.0.2/31', '10.0.0.4/31', '10.0.0.6'],
    ],
    [['10.0.0.0/7'], ['9.0.0.0/8', '10.1.0.0/16', '11.0.0.0/9', '12.0.0.0/8'], ['10.1.0.0/16', '11.0.0.0/9']],
    [['10.0.0.0/8', '12.0.0.0/8'], ['11.0.0.0/8', '12.128.0.0/9', '13.0.0.0/8'], ['12.128.0.0/9']],
    [['255.255.255.0/24'], ['255.255.255.255'], ['255.255.255.255']],
  ])('%j ∩ %j is %j', (a, b, expected) => {
    const both = intersectAllowLists(compileAllowList(a), compileAllowList(b))
    expect(both.rules).toEqual(expected)
    expect(intersectAllowLists(compileAllowList(b), compileAllowList(a)).rules).toEqual(expected)
  })

  test('a disjoint intersection allows nobody', () => {
    const none = intersectAllowLists(compileAllowList(['10.0.0.0/8']), compileAllowList(['11.0.0.0/8']))
    expect(none.allows('10.1.2.3')).toBe(false)
    expect(none.allows('11.1.2.3')).toBe(false)
  })

  test('the constructor orders and merges ranges itself', () => {
    const list = new AllowList(
      ['hand-made'],
      [
        [20n, 30n],
        [0n, 10n],
        [11n, 15n],
      ],
      [],
    )
    expect(list.allows('0.0.0.15')).toBe(true)
    expect(list.allows('0.0.0.16')).toBe(false)
    expect(list.allows('0.0.0.25')).toBe(true)
  })
})

// Random rules and clients, biased to collide: small corners of each family as well as anywhere.
const v4Value = fc.oneof(fc.nat({ max: 0xffff_ffff }), fc.integer({ min: 0x0a00_0000, max: 0x0a00_03ff }))
const v4Prefix = fc.oneof(fc.integer({ min: 0, max: 32 }), fc.integer({ min: 20, max: 32 }))
const v6Value = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  fc.bigInt({ min: 0n, max: 0x3ffn }).map((low) => (0x2001_0db8n << 96n) | low),
  fc.bigInt({ min: 0n, max: (1n << 48n) - 1n }),
)
const v6Prefix = fc.oneof(fc.integer({ min: 0, max: 128 }), fc.integer({ min: 116, max: 128 }))

function network(value: bigint, prefix: number, bits: number): bigint {
  const hostBits = BigInt(bits - prefix)
  return (value >> hostBits) << hostBits
}

function dotted(value: number): string {
  return ipaddr
    .fromByteArray([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255])
    .toString()
}

function v6Address(value: bigint): ipaddr.IPv6 {
  const bytes = Array.from({ length: 16 }, (_, i) => Number((value >> BigInt(8 * (15 - i))) & 0xffn))
  return ipaddr.fromByteArray(bytes) as ipaddr.IPv6
}

const ruleArbitrary = fc.oneof(
  fc
    .tuple(v4Value, v4Prefix)
    .map(([value, prefix]) => `${dotted(Number(network(BigInt(value), prefix, 32)))}/${prefix}`),
  fc
    .tuple(v6Value, v6Prefix)
    .map(([value, prefix]) => `${v6Address(network(value, prefix, 128)).toString()}/${prefix}`),
  fc
    .tuple(v4Value, v4Prefix)
    .map(([value, prefix]) => `::ffff:${dotted(Number(network(BigInt(value), prefix, 32)))}/${prefix + 96}`),
  fc.constantFrom('0.0.0.0/0', '::/0', '10.0.0.0/22', '2001:db8::/118'),
)

const clientArbitrary = fc.oneof(
  v4Value.map(dotted),
  v4Value.map((value) => `::ffff:${dotted(value)}`),
  v4Value.map((value) => `::ffff:${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`),
  v4Value.map((value) => v6Address(BigInt(value)).toString()),
  v6Value.map((value) => v6Address(value).toString()),
  v6Value.map((value) => v6Address(value).toNormalizedString().toUpperCase()),
  v6Value.map((value) => `${v6Address(value).toString()}%eth0`),
)

/** The obvious O(rules) matcher, built on ipaddr.js: the oracle for the compiled one. */
function naiveAllows(rules: readonly string[], client: string): boolean {
  let address = ipaddr.parse(client)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address()
  }
  return rules.some((rule) => {
    let [range, prefix] = ipaddr.parseCIDR(rule)
    if (range.kind() === 'ipv6' && (range as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
      range = (range as ipaddr.IPv6).toIPv4Address()
      prefix -= 96
    }
    return range.kind() === address.kind() && address.match(range, prefix)
  })
}

test('the compiled matcher agrees with a naive loop over the rules using ipaddr.js', () => {
  let allowed = 0
  fc.assert(
    fc.property(
      fc.array(ruleArbitrary, { maxLength: 12 }),
      fc.array(clientArbitrary, { maxLength: 8 }),
      (rules, clients) => {
        const list = compileAllowList(rules)
        for (const client of clients) {
          const expected = naiveAllows(rules, client)
          if (expected) allowed++
          expect(list.allows(client), `${JSON.stringify(rules)} vs ${client}`).toBe(expected)
        }
      },
    ),
    { numRuns: 1500, seed: 42 },
  )
  // Guard against a generator that only ever produces misses.
  expect(allowed).toBeGreaterThan(1000)
})

function catchError(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected an error')
}
