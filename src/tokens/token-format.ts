import { InvalidArgumentError } from '../errors.js'

/** The two kinds of token: long-lived API tokens and short-lived OAuth session tokens. */
export type TokenKind = 'api' | 'oauth'

/** The value prefix of each token kind (docs/tokens.md, "Value format"). */
export const TOKEN_PREFIXES: Readonly<Record<TokenKind, string>> = Object.freeze({
  api: 'dap_',
  oauth: 'dao_',
})

/** Length of every token value: a 4-character prefix, 32 random characters, a 6-character checksum. */
export const TOKEN_VALUE_LENGTH = 42

/** The base62 alphabet of token values and checksums, in digit order. */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

const PREFIX_LENGTH = 4
const RANDOM_LENGTH = 32
const BODY_LENGTH = PREFIX_LENGTH + RANDOM_LENGTH
const CHECKSUM_LENGTH = 6

// The largest multiple of 62 that fits in a byte: bytes at or above it would favour the first eight
// digits, so they are drawn again (rejection sampling, no modulo bias).
const UNBIASED_BYTE_LIMIT = 62 * 4

// ASCII code → base62 digit value, -1 for every other character.
const DIGIT_VALUES = new Int8Array(128).fill(-1)
// Stryker disable next-line EqualityOperator: equivalent because index 62 reads NaN, and a typed array ignores a NaN key
for (let digit = 0; digit < 62; digit++) DIGIT_VALUES[BASE62_ALPHABET.charCodeAt(digit)] = digit

// The base62 value of a character code, -1 for a non-digit: a typed array reads undefined past
// ASCII, so `İ` (U+0130, whose low byte is `0`) is no digit.
function digitValue(code: number): number {
  return DIGIT_VALUES[code] ?? -1
}

// CRC-32/ISO-HDLC as in zlib: reflected polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF.
const CRC_TABLE = new Int32Array(256)
// Stryker disable next-line EqualityOperator: equivalent because a typed array of 256 ignores a store at 256
for (let n = 0; n < 256; n++) {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  CRC_TABLE[n] = c
}

const CODE_D = 0x64
const CODE_A = 0x61
const CODE_P = 0x70
const CODE_O = 0x6f
const CODE_UNDERSCORE = 0x5f

// Feeds one character code (an ASCII byte) into a running, not yet finalised, CRC-32.
function updateCrc(crc: number, code: number): number {
  return CRC_TABLE[(crc ^ code) & 0xff]! ^ (crc >>> 8)
}

// CRC-32 of the first `BODY_LENGTH` characters, which the callers have checked are ASCII.
function checksumBody(body: string): number {
  let crc = -1
  for (let i = 0; i < BODY_LENGTH; i++) crc = updateCrc(crc, body.charCodeAt(i))
  return ~crc >>> 0
}

// 62^6 > 2^32, so six digits always hold a CRC-32; the leading ones are '0' padding.
function encodeChecksum(crc: number): string {
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62_ALPHABET[crc % 62]! + out
    crc = Math.floor(crc / 62)
  }
  return out
}

/**
 * Draws `length` uniformly random base62 characters from `crypto.getRandomValues`.
 *
 * @example
 * generateRandomBase62(16) // 'q3ZT0bX9aLw1Kd7e'
 */
export function generateRandomBase62(length: number): string {
  if (!Number.isSafeInteger(length) || length < 0) {
    throw new InvalidArgumentError('length must be a non-negative integer')
  }
  const crypto = globalThis.crypto
  if (typeof crypto?.getRandomValues !== 'function') {
    throw new InvalidArgumentError('generating tokens needs Web Crypto (globalThis.crypto.getRandomValues)')
  }
  // A few spare bytes so that one draw almost always suffices despite the ~3% rejected.
  const bytes = new Uint8Array(length + 8)
  let out = ''
  while (out.length < length) {
    crypto.getRandomValues(bytes)
    // Stryker disable next-line EqualityOperator: equivalent because the byte past the end reads undefined, which is not below the limit
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      const byte = bytes[i]!
      if (byte < UNBIASED_BYTE_LIMIT) out += BASE62_ALPHABET[byte % 62]
    }
  }
  return out
}

/**
 * Generates a new token value: prefix, 32 random base62 characters, base62 CRC-32 checksum.
 *
 * @example
 * generateTokenValue('api') // 'dap_x9QaR2mK7vLp3TzB8nYc4HsD6jFg1WeU4fuKDx'
 */
export function generateTokenValue(kind: TokenKind): string {
  if (kind !== 'api' && kind !== 'oauth') throw new InvalidArgumentError('kind must be "api" or "oauth"')
  const body = TOKEN_PREFIXES[kind] + generateRandomBase62(RANDOM_LENGTH)
  return body + encodeChecksum(checksumBody(body))
}

/**
 * True when `value` has the exact token format: length, prefix, base62 alphabet and checksum.
 * Allocation-free, so it can run on every request before any store lookup.
 *
 * @example
 * isWellFormedTokenValue('dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5') // true
 * isWellFormedTokenValue('dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw6') // false: checksum
 */
export function isWellFormedTokenValue(value: string): boolean {
  return typeof value === 'string' && isWellFormedTokenAt(value, 0)
}

/**
 * True when `text` from `start` to its end is a well-formed token value (as
 * {@link isWellFormedTokenValue}). Checking in place spares the request path a slice of the
 * header before the check, a gain measured in process (a sliced string's reads go through its parent).
 *
 * @example
 * isWellFormedTokenAt('Bearer dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5', 7) // true
 */
export function isWellFormedTokenAt(text: string, start: number): boolean {
  if (text.length - start !== TOKEN_VALUE_LENGTH) return false
  const third = text.charCodeAt(start + 2)
  if (
    text.charCodeAt(start) !== CODE_D ||
    text.charCodeAt(start + 1) !== CODE_A ||
    (third !== CODE_P && third !== CODE_O) ||
    text.charCodeAt(start + 3) !== CODE_UNDERSCORE
  ) {
    return false
  }
  let crc = updateCrc(updateCrc(updateCrc(updateCrc(-1, CODE_D), CODE_A), third), CODE_UNDERSCORE)
  const checksumStart = start + BODY_LENGTH
  for (let i = start + PREFIX_LENGTH; i < checksumStart; i++) {
    const code = text.charCodeAt(i)
    if (digitValue(code) < 0) return false
    crc = updateCrc(crc, code)
  }
  // Decode the checksum instead of encoding the CRC: no string is built and no division is needed.
  // Six digits stay below 62^6 < 2^53, so the sum is exact, and each number has a single encoding.
  let checksum = 0
  for (let i = checksumStart; i < text.length; i++) {
    const digit = digitValue(text.charCodeAt(i))
    if (digit < 0) return false
    checksum = checksum * 62 + digit
  }
  return checksum === ~crc >>> 0
}

/**
 * The kind of a well-formed token value, or `undefined` when the value is not well formed.
 *
 * @example
 * tokenKindOf('dao_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz0UTLEi') // 'oauth'
 * tokenKindOf('dap_not-a-token') // undefined
 */
export function tokenKindOf(value: string): TokenKind | undefined {
  if (!isWellFormedTokenValue(value)) return undefined
  return value.charCodeAt(2) === CODE_P ? 'api' : 'oauth'
}

/**
 * The non-secret reminder of a value that pages, logs and scanners show instead of it: the prefix,
 * `…` and the last four characters (four characters of a checksum reveal nothing of the random part).
 *
 * @example
 * tokenValueHint('dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5') // 'dap_…Cnw5'
 */
export function tokenValueHint(value: string): string {
  return `${value.slice(0, PREFIX_LENGTH)}…${value.slice(-4)}`
}

/** A token value found in a text by {@link findTokenValues}. */
export interface FoundTokenValue {
  /** Where the value starts, as a UTF-16 index into the text. */
  readonly index: number
  readonly value: string
  readonly kind: TokenKind
}

function isBase62Code(code: number): boolean {
  return digitValue(code) >= 0
}

/**
 * Every well-formed token value in `text` (prefix, 32 base62 characters, valid checksum), as secret
 * scanners find them: a candidate inside a longer run of base62 characters (a hash, a longer key) is
 * not one, nor is one whose checksum fails, so look-alikes give no false positives.
 *
 * @example
 * findTokenValues('SERVICE_API_TOKEN=dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5')
 * // [{ index: 18, value: 'dap_0123…', kind: 'api' }]
 */
export function findTokenValues(text: string): FoundTokenValue[] {
  const found: FoundTokenValue[] = []
  let from = 0
  for (;;) {
    const start = text.indexOf('da', from)
    if (start < 0) return found
    from = start + 1
    const end = start + TOKEN_VALUE_LENGTH
    if (end > text.length) return found
    if (start > 0 && isBase62Code(text.charCodeAt(start - 1))) continue
    if (end < text.length && isBase62Code(text.charCodeAt(end))) continue
    const candidate = text.slice(start, end)
    const kind = tokenKindOf(candidate)
    if (kind === undefined) continue
    found.push({ index: start, value: candidate, kind })
    from = end
  }
}
