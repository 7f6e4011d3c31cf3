import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { ConfigError } from '../../src/errors.js'
import {
  checkClientAddress,
  checkExportSize,
  combineRestrictions,
  compileExportRestrictions,
  type ExportRestrictions,
  type ExportRestrictionsInput,
  exportRestrictionsSchema,
  isExportRestrictions,
} from '../../src/restrictions/export-restrictions.js'

const compile = (input: ExportRestrictionsInput) => compileExportRestrictions(input)
const EXPECTED_IPV4 = 'expected four decimal parts 0-255 without leading zeros, as in 10.1.2.3 or 10.1.2.0/24'
const EXPECTED_LIST = 'expected an array of IP addresses and CIDRs, as in ["10.0.0.0/8", "::1"]'

describe('compileExportRestrictions', () => {
  test.each([
    [{}],
    [{ maxBytes: 100_000 }],
    [{ maxRecords: 0 }],
    [{ maxBytes: Number.MAX_SAFE_INTEGER, maxRecords: 1000, allowedIps: ['10.0.0.0/8', '::1'] }],
    [{ allowedIps: [] }],
  ])('compiles %j into frozen, branded data equal to the input', (input) => {
    const restrictions = compileExportRestrictions(input)
    expect(restrictions).toEqual(input)
    expect(JSON.parse(JSON.stringify(restrictions))).toEqual(input)
    expect(Object.isFrozen(restrictions)).toBe(true)
    expect(isExportRestrictions(restrictions)).toBe(true)
  })

  test('names the bad field alone when no path is given', () => {
    expect(() => compileExportRestrictions({ maxRecords: -1 })).toThrow(/^maxRecords: -1 is not a valid cap/)
  })

  test('treats undefined fields as absent and -0 as 0', () => {
    expect(compileExportRestrictions({ maxBytes: undefined, maxRecords: -0 })).toEqual({ maxRecords: 0 })
    expect(Object.is(compileExportRestrictions({ maxRecords: -0 }).maxRecords, 0)).toBe(true)
  })

  test('returns compiled restrictions unchanged', () => {
    const restrictions = compile({ maxRecords: 5 })
    expect(compileExportRestrictions(restrictions)).toBe(restrictions)
  })

  const cap = `expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`
  test.each([
    [{ maxBytes: -1 }, `maxBytes: -1 is not a valid cap; ${cap}`],
    [{ maxBytes: 1.5 }, `maxBytes: 1.5 is not a valid cap; ${cap}`],
    [{ maxRecords: Number.NaN }, `maxRecords: NaN is not a valid cap; ${cap}`],
    [{ maxRecords: Number.POSITIVE_INFINITY }, `maxRecords: Infinity is not a valid cap; ${cap}`],
    [{ maxRecords: 2 ** 53 }, `maxRecords: 9007199254740992 is not a valid cap; ${cap}`],
    [{ maxRecords: '5' }, `maxRecords: "5" is not a valid cap; ${cap}`],
    [{ maxRecords: null }, `maxRecords: null is not a valid cap; ${cap}`],
    [{ maxRecord: 5 }, 'maxRecord: unknown key "maxRecord"; expected maxBytes, maxRecords or allowedIps'],
    [{ allowedIps: '10.0.0.0/8' }, `allowedIps: "10.0.0.0/8" is not a list; ${EXPECTED_LIST}`],
    [
      { allowedIps: [7] },
      'allowedIps[0]: 7 is not a string; expected an IP address or CIDR such as "10.0.0.0/8"',
    ],
    [
      { allowedIps: ['::1', '10.1.2.77/24'] },
      'allowedIps[1]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
    ],
    [null, 'null is not an object; expected { maxBytes?, maxRecords?, allowedIps? }'],
    [[], '[] is not an object; expected { maxBytes?, maxRecords?, allowedIps? }'],
    ['maxRecords=5', '"maxRecords=5" is not an object; expected { maxBytes?, maxRecords?, allowedIps? }'],
  ])('rejects %j: %s', (input, message) => {
    expect(() => compileExportRestrictions(input)).toThrow(message)
  })

  test('throws a ConfigError with the exact message and the prefixed path', () => {
    const hostBits = '"10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?'
    let error: unknown
    try {
      compileExportRestrictions({ allowedIps: ['10.1.2.77/24'] }, ['datasets', 1, 'exportRestrictions'])
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect(error).toMatchObject({
      code: 'ERR_INVALID_CONFIG',
      message: `datasets[1].exportRestrictions.allowedIps[0]: ${hostBits}`,
      path: ['datasets', 1, 'exportRestrictions', 'allowedIps', 0],
      detail: hostBits,
    })
  })
})

describe('exportRestrictionsSchema', () => {
  const seedSchema = z.strictObject({
    datasets: z.array(
      z.strictObject({ name: z.string(), exportRestrictions: exportRestrictionsSchema.optional() }),
    ),
  })

  test('compiles the restrictions it validates', () => {
    const seed = seedSchema.parse({
      datasets: [
        { name: 'a' },
        { name: 'b', exportRestrictions: { maxRecords: 10, allowedIps: ['10.0.0.0/8'] } },
      ],
    })
    const restrictions = seed.datasets[1]?.exportRestrictions
    expect(isExportRestrictions(restrictions)).toBe(true)
    expect(checkClientAddress(restrictions!, '::ffff:10.9.9.9')).toBe(true)
    expect(seed.datasets[0]?.exportRestrictions).toBeUndefined()
  })

  test('reports every issue at the path of the bad field, with the detail as message', () => {
    const result = seedSchema.safeParse({
      datasets: [
        { name: 'a' },
        {
          name: 'b',
          exportRestrictions: { maxBytes: -1, other: true, allowedIps: ['10.1.2.77/24', '::/0', '10.1'] },
        },
      ],
    })
    expect(result.success).toBe(false)
    const issues = result.error?.issues.map(({ path, message }) => ({ path, message }))
    const at = ['datasets', 1, 'exportRestrictions']
    expect(issues).toEqual([
      { path: [...at, 'other'], message: 'unknown key "other"; expected maxBytes, maxRecords or allowedIps' },
      {
        path: [...at, 'maxBytes'],
        message: `-1 is not a valid cap; expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
      },
      {
        path: [...at, 'allowedIps', 0],
        message: '"10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
      },
      {
        path: [...at, 'allowedIps', 2],
        message: `"10.1" is not a valid IPv4 address or CIDR; ${EXPECTED_IPV4}`,
      },
    ])
    expect(new Set(result.error?.issues.map(({ code }) => code))).toEqual(new Set(['custom']))
  })

  test('reports input that is not an object at the path of the restrictions themselves', () => {
    const result = exportRestrictionsSchema.safeParse(5)
    expect(result.error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: [], message: '5 is not an object; expected { maxBytes?, maxRecords?, allowedIps? }' },
    ])
  })
})

describe('isExportRestrictions', () => {
  test.each([
    [{}],
    [{ maxRecords: 5 }],
    [{ ...compileExportRestrictions({ maxRecords: 5 }) }],
    [null],
    [undefined],
    ['restrictions'],
    [5],
  ])('is false for the raw value %j', (value) => {
    expect(isExportRestrictions(value)).toBe(false)
  })
})

describe('checkClientAddress', () => {
  test.each([
    [{}, undefined, true],
    [{}, 'garbage', true],
    [{ maxRecords: 5 }, '10.1.2.3', true],
    [{ allowedIps: [] }, '10.1.2.3', false],
    [{ allowedIps: [] }, '::1', false],
    [{ allowedIps: ['10.0.0.0/8'] }, '10.1.2.3', true],
    [{ allowedIps: ['10.0.0.0/8'] }, '::ffff:10.1.2.3', true],
    [{ allowedIps: ['10.0.0.0/8'] }, '::ffff:a01:203', true],
    [{ allowedIps: ['10.0.0.0/8'] }, '::10.1.2.3', false],
    [{ allowedIps: ['10.0.0.0/8'] }, '64:ff9b::10.1.2.3', false],
    [{ allowedIps: ['10.0.0.0/8'] }, '11.1.2.3', false],
    [{ allowedIps: ['0.0.0.0/0'] }, '2001:db8::1', false],
    [{ allowedIps: ['::/0'] }, '10.1.2.3', false],
    [{ allowedIps: ['0.0.0.0/0', '::/0'] }, 'fe80::1%eth0', true],
    [{ allowedIps: ['0.0.0.0/0', '::/0'] }, undefined, false],
    [{ allowedIps: ['0.0.0.0/0', '::/0'] }, '', false],
    [{ allowedIps: ['0.0.0.0/0', '::/0'] }, '10.1.2.3:8080', false],
    [{ allowedIps: ['0.0.0.0/0', '::/0'] }, '[::1]', false],
    [{ allowedIps: ['0.0.0.0/0', '::/0'] }, '010.1.1.1', false],
  ])('%j with client %j: %s', (input, address, expected) => {
    expect(checkClientAddress(compile(input), address)).toBe(expected)
  })

  test('compiles raw restrictions on the spot, and denies when they are invalid', () => {
    const raw = (value: unknown) => value as ExportRestrictions
    expect(checkClientAddress(raw({ allowedIps: ['10.0.0.0/8'] }), '10.1.2.3')).toBe(true)
    expect(checkClientAddress(raw({ allowedIps: ['10.0.0.0/8'] }), '11.1.2.3')).toBe(false)
    expect(checkClientAddress(raw({ allowedIps: ['10.1.2.77/24'] }), '10.1.2.3')).toBe(false)
    expect(checkClientAddress(raw({ maxRecords: -1 }), '10.1.2.3')).toBe(false)
    expect(checkClientAddress(raw(null), '10.1.2.3')).toBe(false)
    // The first and last addresses of each family too: the denial has no range at all.
    for (const address of ['0.0.0.0', '255.255.255.255', '::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']) {
      expect(checkClientAddress(raw({ maxRecords: -1 }), address)).toBe(false)
    }
  })
})

describe('checkExportSize', () => {
  test.each([
    [{}, { records: 1e9, bytes: 1e12 }, undefined],
    [{}, {}, undefined],
    [{ maxRecords: 0 }, { records: 1 }, 'records'],
    [{ maxRecords: 0 }, { records: 0 }, 'records'],
    [{ maxRecords: 0 }, {}, 'records'],
    [{ maxRecords: 0 }, { bytes: 10 }, 'records'],
    [{ maxBytes: 0 }, { records: 0, bytes: 0 }, 'bytes'],
    [{ maxRecords: 1000 }, { records: 1000 }, undefined],
    [{ maxRecords: 1000 }, { records: 1001 }, 'records'],
    [{ maxRecords: 1000 }, { records: 0 }, undefined],
    [{ maxRecords: 1000 }, {}, undefined],
    [{ maxRecords: 1000 }, { bytes: 1e12 }, undefined],
    [{ maxBytes: 100_000 }, { bytes: 100_000 }, undefined],
    [{ maxBytes: 100_000 }, { bytes: 100_001 }, 'bytes'],
    [{ maxBytes: 100_000 }, { records: 1e9 }, undefined],
    [{ maxRecords: 1000, maxBytes: 100 }, { records: 1001, bytes: 101 }, 'records'],
    [{ maxRecords: 1000, maxBytes: 100 }, { records: 1000, bytes: 101 }, 'bytes'],
    [{ maxRecords: 1000, maxBytes: 100 }, { records: 1000, bytes: 100 }, undefined],
    [{ maxRecords: 1000 }, { records: -1 }, 'records'],
    [{ maxRecords: 1000 }, { records: Number.NaN }, 'records'],
    [{ maxRecords: 1000 }, { records: 1.5 }, 'records'],
    [{ maxRecords: 1000 }, { records: Number.POSITIVE_INFINITY }, 'records'],
    [{ maxBytes: 1000 }, { bytes: -0.5 }, 'bytes'],
    [{ maxBytes: Number.MAX_SAFE_INTEGER }, { bytes: 2 ** 53 }, 'bytes'],
    [{ allowedIps: [] }, { records: 5 }, undefined],
  ])('%j with size %j: %s', (input, size, expected) => {
    expect(checkExportSize(compile(input), size)).toBe(expected)
  })

  test('fails closed on raw restrictions that are invalid, and on a missing size', () => {
    expect(checkExportSize({ maxRecords: -1 } as ExportRestrictions, { records: 0 })).toBe('records')
    expect(checkExportSize({ maxRecords: 5 }, { records: 5 })).toBeUndefined()
    expect(checkExportSize(compile({ maxRecords: 0 }), undefined as unknown as { records: number })).toBe(
      'records',
    )
    expect(
      checkExportSize(compile({ maxRecords: 5 }), undefined as unknown as { records: number }),
    ).toBeUndefined()
  })
})

describe('combineRestrictions', () => {
  test.each([
    [[], {}],
    [[{}, {}], {}],
    [[{ maxRecords: 100 }, { maxRecords: 50 }], { maxRecords: 50 }],
    [[{ maxRecords: 50 }, { maxRecords: 100 }, {}], { maxRecords: 50 }],
    [[{ maxBytes: 10 }, { maxRecords: 5 }], { maxBytes: 10, maxRecords: 5 }],
    [[{ maxRecords: 0 }, { maxRecords: 1000 }], { maxRecords: 0 }],
    [
      [
        { maxBytes: 7, maxRecords: 9 },
        { maxBytes: 3, maxRecords: 12 },
      ],
      { maxBytes: 3, maxRecords: 9 },
    ],
    [[{ allowedIps: ['10.0.0.0/8'] }, {}], { allowedIps: ['10.0.0.0/8'] }],
    [[{}, { allowedIps: ['::ffff:10.0.0.0/104'] }], { allowedIps: ['::ffff:10.0.0.0/104'] }],
    [
      [{ allowedIps: ['10.0.0.0/8'] }, { allowedIps: ['10.1.0.0/16', '192.168.0.0/16'] }],
      { allowedIps: ['10.1.0.0/16'] },
    ],
    [[{ allowedIps: ['10.0.0.0/8'] }, { allowedIps: ['192.168.0.0/16'] }], { allowedIps: [] }],
    [[{ allowedIps: ['10.0.0.0/8'] }, { allowedIps: [] }], { allowedIps: [] }],
    [[{ allowedIps: ['0.0.0.0/0'] }, { allowedIps: ['::/0'] }], { allowedIps: [] }],
    [
      [
        { allowedIps: ['0.0.0.0/0', '::/0'] },
        { allowedIps: ['2001:db8::/32', '10.1.2.3'] },
        { allowedIps: ['10.0.0.0/8', '::/0'] },
      ],
      { allowedIps: ['10.1.2.3', '2001:db8::/32'] },
    ],
    [
      [
        { maxRecords: 100, allowedIps: ['10.0.0.0/8'] },
        { maxRecords: 50, allowedIps: ['10.1.0.0/16', '192.168.0.0/16'] },
      ],
      { maxRecords: 50, allowedIps: ['10.1.0.0/16'] },
    ],
  ])('combines %j into %j', (inputs, expected) => {
    const combined = combineRestrictions(...inputs.map(compile))
    // Strictly: a cap no argument sets is absent, not present as undefined.
    expect(combined).toStrictEqual(expected)
    expect(isExportRestrictions(combined)).toBe(true)
    expect(Object.isFrozen(combined)).toBe(true)
  })

  test('returns a single argument as is, and keeps the rules as written when one list is met twice', () => {
    // Intersected with itself, this list would shrink to the one CIDR that covers it.
    const only = compile({ maxRecords: 5, allowedIps: ['10.1.0.0/16', '10.0.0.0/8'] })
    expect(combineRestrictions(only)).toBe(only)
    expect(combineRestrictions(only, only)).toEqual(only)
  })

  test('without arguments restricts nothing', () => {
    expect(combineRestrictions()).toStrictEqual({})
    expect(checkClientAddress(combineRestrictions(), '203.0.113.7')).toBe(true)
  })

  test('a disjoint combination admits nobody', () => {
    const combined = combineRestrictions(
      compile({ allowedIps: ['10.0.0.0/8'] }),
      compile({ allowedIps: ['11.0.0.0/8'] }),
    )
    expect(checkClientAddress(combined, '10.1.2.3')).toBe(false)
    expect(checkClientAddress(combined, '11.1.2.3')).toBe(false)
  })

  test('compiles raw arguments, and throws a ConfigError for invalid ones', () => {
    const raw = { maxRecords: 5, allowedIps: ['10.0.0.0/8'] } as ExportRestrictions
    const combined = combineRestrictions(raw, compile({ maxRecords: 9 }))
    expect(combined).toEqual({ maxRecords: 5, allowedIps: ['10.0.0.0/8'] })
    expect(checkClientAddress(combined, '10.1.2.3')).toBe(true)
    expect(() => combineRestrictions({ allowedIps: ['10.1'] }, {})).toThrow(ConfigError)
  })

  // Rules from small corners of both families (plus the catch-alls), so that lists overlap often.
  const corner = fc
    .tuple(fc.integer({ min: 0, max: 1023 }), fc.integer({ min: 0, max: 10 }))
    .map(([low, hostBits]) => ({ network: (low >> hostBits) << hostBits, hostBits }))
  const rule = fc.oneof(
    corner.map(({ network, hostBits }) => `10.0.${network >> 8}.${network & 255}/${32 - hostBits}`),
    corner.map(({ network, hostBits }) => `2001:db8::${network.toString(16)}/${128 - hostBits}`),
    corner.map(({ network, hostBits }) => `::ffff:a00:${network.toString(16)}/${128 - hostBits}`),
    fc.constantFrom('0.0.0.0/0', '::/0', '10.0.0.0/22', '2001:db8::/118'),
  )
  const restrictions = fc.record(
    {
      maxBytes: fc.nat({ max: 1000 }),
      maxRecords: fc.nat({ max: 1000 }),
      allowedIps: fc.array(rule, { maxLength: 6 }),
    },
    { requiredKeys: [] },
  )
  const client = fc.oneof(
    fc.integer({ min: 0, max: 1023 }).map((low) => `10.0.${low >> 8}.${low & 255}`),
    fc.integer({ min: 0, max: 1023 }).map((low) => `::ffff:10.0.${low >> 8}.${low & 255}`),
    fc.integer({ min: 0, max: 1023 }).map((low) => `2001:db8::${low.toString(16)}`),
    fc.integer({ min: 0, max: 1023 }).map((low) => `::a00:${low.toString(16)}`),
    fc.constantFrom('192.168.1.1', 'fe80::1', 'garbage'),
  )

  test('combine(a, b) allows x iff a and b both allow x, with the smaller caps', () => {
    let allowed = 0
    fc.assert(
      fc.property(
        restrictions,
        restrictions,
        fc.array(client, { minLength: 1, maxLength: 8 }),
        (a, b, clients) => {
          const [first, second] = [compile(a), compile(b)]
          const combined = combineRestrictions(first, second)
          // The combined list, written out as rules, compiles back to the same decisions.
          const reloaded = compileExportRestrictions(JSON.parse(JSON.stringify(combined)))
          for (const x of clients) {
            const expected = checkClientAddress(first, x) && checkClientAddress(second, x)
            if (expected) allowed++
            expect(checkClientAddress(combined, x)).toBe(expected)
            expect(checkClientAddress(reloaded, x)).toBe(expected)
          }
          for (const key of ['maxBytes', 'maxRecords'] as const) {
            const caps = [a[key], b[key]].filter((each) => each !== undefined)
            expect(combined[key]).toBe(caps.length === 0 ? undefined : Math.min(...caps))
          }
        },
      ),
      { numRuns: 1000, seed: 42 },
    )
    expect(allowed).toBeGreaterThan(500)
  })
})
