import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import {
  BASE62_ALPHABET,
  generateRandomBase62,
  generateTokenValue,
  isWellFormedTokenAt,
  isWellFormedTokenValue,
  TOKEN_PREFIXES,
  TOKEN_VALUE_LENGTH,
  tokenKindOf,
} from '../../src/tokens/token-format.js'

// Design §6 vectors. The checksums were computed outside this library: CRC-32 of the first 36
// characters with Python's zlib.crc32 (cross-checked with Node's zlib.crc32), then written in base62
// by repeated divmod by 62 and left-padded with '0' to six digits.
const VECTORS = [
  { value: 'dap_000000000000000000000000000000001w6U3K', kind: 'api', crc32: 0x69c7dc96 },
  { value: 'dao_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz0UTLEi', kind: 'oauth', crc32: 0x1ad6c6dc },
  { value: 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5', kind: 'api', crc32: 0x9506d405 },
  { value: 'dao_WXYZabcdefghijklmnopqrstuvwxyz010v0SDK', kind: 'oauth', crc32: 0x3235633a },
  { value: 'dap_x9QaR2mK7vLp3TzB8nYc4HsD6jFg1WeU4fuKDx', kind: 'api', crc32: 0xff556001 },
  // CRC 3050 < 62^3: three digits of '0' padding.
  { value: 'dap_Padded00LX00000000000000000000000000nC', kind: 'api', crc32: 0x00000bea },
  // CRC ≥ 4·62^5: the largest possible leading digit, '4'.
  { value: 'dap_Padded000200000000000000000000004VmX0g', kind: 'api', crc32: 0xf66a579e },
] as const

const VALID = VECTORS[2].value

// Replays `bytes` cyclically as the CSPRNG output so that generation is deterministic. A stand-in
// `crypto` global rather than a spy on the real one: Bun's `getRandomValues` is not configurable,
// so a spy there outlives `restoreAllMocks` and every later test would draw the same bytes.
function replayRandomBytes(bytes: readonly number[]): void {
  let next = 0
  const getRandomValues = (array: Uint8Array) => {
    for (let i = 0; i < array.length; i++) array[i] = bytes[next++ % bytes.length]!
    return array
  }
  vi.stubGlobal('crypto', { getRandomValues })
}

function replace(value: string, index: number, char: string): string {
  return value.slice(0, index) + char + value.slice(index + 1)
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('design §6 token value vectors', () => {
  it.each(VECTORS)('$value is a well-formed $kind token', ({ value, kind }) => {
    expect(value).toHaveLength(TOKEN_VALUE_LENGTH)
    expect(isWellFormedTokenValue(value)).toBe(true)
    expect(tokenKindOf(value)).toBe(kind)
  })

  it('generates exactly the vector from known random bytes, skipping bytes 248–255', () => {
    // Digit d is drawn by any byte ≡ d (mod 62) below 248; 248 and 255 are rejected.
    const digits = [...'0123456789ABCDEFGHIJKLMNOPQRSTUV'].map((char) => BASE62_ALPHABET.indexOf(char))
    const bytes = digits.flatMap((digit, i) =>
      i % 3 === 0 ? [248, digit + 62 * (i % 4)] : [255, digit + 186],
    )
    replayRandomBytes([...bytes, ...Array.from({ length: 200 }, () => 250)])
    expect(generateTokenValue('api')).toBe('dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5')
  })

  it('draws again when a whole batch of bytes is rejected', () => {
    replayRandomBytes([...Array.from({ length: 40 }, () => 249), 61])
    expect(generateTokenValue('oauth')).toBe('dao_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz0UTLEi')
  })
})

describe('isWellFormedTokenValue', () => {
  const ill: readonly (readonly [string, string])[] = [
    ['the empty string', ''],
    ['a checksum digit flipped', replace(VALID, 41, '6')],
    ['a random character flipped', replace(VALID, 10, 'a')],
    ['two characters swapped', replace(replace(VALID, 4, '1'), 5, '0')],
    ['the prefix kind swapped', `dao_${VALID.slice(4)}`],
    ['an unknown prefix', `dax_${VALID.slice(4)}`],
    ['an upper-case prefix', `DAP_${VALID.slice(4)}`],
    ['a dash for the underscore', `dap-${VALID.slice(4)}`],
    ['a prefix only', 'dap_'],
    ['one character short', VALID.slice(0, -1)],
    ['one character long', `${VALID}0`],
    ['a trailing space', `${VALID} `],
    ['a trailing "="', `${VALID}=`],
    ['a leading space', ` ${VALID.slice(0, -1)}`],
    ['a "-" in the random part', replace(VALID, 20, '-')],
    ['a "_" in the random part', replace(VALID, 20, '_')],
    ['a "+" in the random part', replace(VALID, 20, '+')],
    ['a "/" in the checksum', replace(VALID, 39, '/')],
    ['a non-ASCII letter in the checksum', replace(VALID, 41, 'ß')],
    ['a non-ASCII letter', replace(VALID, 20, 'é')],
    // The CRC reads only a code's low byte: U+0130 `İ` feeds it the same byte as `0`.
    ['a look-alike whose low byte is a digit', replace(VALID, 4, String.fromCharCode(0x100 + 0x30))],
    ['a look-alike digit in the checksum', replace(VALID, 41, String.fromCharCode(0x100 + 0x35))],
    ['a NUL character', replace(VALID, 20, '\u0000')],
    ['a full-width digit', replace(VALID, 20, '０')],
    ['a checksum off by one unit', replace(VALID, 41, '4')],
    ['a checksum longer than six digits would need', `${VALID.slice(0, 36)}z${VALID.slice(37)}`],
    // A leading '0' adds nothing to the checksum's value: only the length tells this one apart.
    ['a checksum padded to seven digits', `${VALID.slice(0, 36)}0${VALID.slice(36)}`],
    // Checksums computed as the vectors above: the CRC matches, only the format tells them apart.
    ['an unknown prefix with its own valid checksum', 'dax_000000000000000000000000000000002l2VcN'],
    // The valid value ends in …eLaz (CRC 0x38f0bf09); read as digit -1, a '-' after …eLb sums to it.
    ['a non-digit in the checksum that would sum to the CRC', 'dap_0000000000000000000000000000006412eLb-'],
  ]

  it.each(ill)('rejects %s', (_, value) => {
    expect(isWellFormedTokenValue(value)).toBe(false)
    expect(tokenKindOf(value)).toBeUndefined()
  })

  it('rejects values that are not strings', () => {
    for (const value of [undefined, null, 42, ['dap_'], { length: 42 }]) {
      expect(isWellFormedTokenValue(value as unknown as string)).toBe(false)
    }
  })
})

describe('isWellFormedTokenAt', () => {
  it('checks the token that ends the text, from the given start', () => {
    const header = `Bearer ${VALID}`
    expect(isWellFormedTokenAt(header, 7)).toBe(true)
    expect(isWellFormedTokenAt(VALID, 0)).toBe(true)
    // One character early or late, or one character more after it, is not that token.
    expect(isWellFormedTokenAt(header, 6)).toBe(false)
    expect(isWellFormedTokenAt(header, 8)).toBe(false)
    expect(isWellFormedTokenAt(`${header} `, 7)).toBe(false)
    expect(isWellFormedTokenAt(`Bearer ${VALID.slice(0, 36)}0${VALID.slice(36)}`, 7)).toBe(false)
  })
})

describe('generateTokenValue', () => {
  it('uses the prefix of its kind', () => {
    expect(generateTokenValue('api').startsWith(TOKEN_PREFIXES.api)).toBe(true)
    expect(generateTokenValue('oauth').startsWith(TOKEN_PREFIXES.oauth)).toBe(true)
  })

  it('generates distinct, well-formed values from the real CSPRNG', () => {
    const values = new Set(Array.from({ length: 500 }, (_, i) => generateTokenValue(i % 2 ? 'api' : 'oauth')))
    expect(values.size).toBe(500)
    for (const value of values) expect(isWellFormedTokenValue(value)).toBe(true)
  })

  it('refuses an unknown kind', () => {
    expect(() => generateTokenValue('basic' as never)).toThrow(
      new InvalidArgumentError('kind must be "api" or "oauth"'),
    )
  })

  it.each([
    ['no crypto global', undefined],
    ['a crypto global without getRandomValues', {}],
  ])('needs Web Crypto: %s', (_, crypto) => {
    vi.stubGlobal('crypto', crypto)
    const generate = () => generateTokenValue('api')
    expect(generate).toThrow(InvalidArgumentError)
    expect(generate).toThrow('generating tokens needs Web Crypto (globalThis.crypto.getRandomValues)')
  })
})

describe('generateRandomBase62', () => {
  it('draws from the base62 alphabet only, any length', () => {
    expect(generateRandomBase62(0)).toBe('')
    expect(generateRandomBase62(300)).toMatch(/^[0-9A-Za-z]{300}$/)
  })

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses length %s', (length) => {
    expect(() => generateRandomBase62(length)).toThrow(
      new InvalidArgumentError('length must be a non-negative integer'),
    )
  })
})

describe('token format properties', () => {
  // Bytes for the replayed CSPRNG: fast-check shrinks and replays them from the printed seed.
  const randomBytes = fc
    .array(fc.nat({ max: 255 }), { minLength: 1, maxLength: 80 })
    .filter((bytes) => bytes.some((byte) => byte < 248))
  const kind = fc.constantFrom('api' as const, 'oauth' as const)
  const replacement = fc.oneof(
    fc.constantFrom(...BASE62_ALPHABET, '_', '-', '='),
    fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  )

  it('every generated value is well formed and of its kind', () => {
    fc.assert(
      fc.property(randomBytes, kind, (bytes, k) => {
        replayRandomBytes(bytes)
        const value = generateTokenValue(k)
        expect(value).toMatch(/^da[po]_[0-9A-Za-z]{38}$/)
        expect(isWellFormedTokenValue(value)).toBe(true)
        expect(tokenKindOf(value)).toBe(k)
      }),
    )
  })

  it('changing any one character of a valid value makes it ill formed', () => {
    fc.assert(
      fc.property(
        randomBytes,
        kind,
        fc.nat({ max: TOKEN_VALUE_LENGTH - 1 }),
        replacement,
        (bytes, k, i, char) => {
          replayRandomBytes(bytes)
          const value = generateTokenValue(k)
          fc.pre(value[i] !== char)
          expect(isWellFormedTokenValue(replace(value, i, char))).toBe(false)
        },
      ),
      { numRuns: 2000 },
    )
  })
})
