import { InvalidArgumentError } from '../errors.js'

/** The user-code alphabet of RFC 8628 §6.1: 20 consonants, no vowels (no words), no digits. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'

/** Letters in a user code: 20^8 ≈ 2^34.6 codes. */
export const USER_CODE_LENGTH = 8

// 240 is the largest multiple of 20 below 256: bytes above it are drawn again (no modulo bias).
const UNBIASED_BYTE_LIMIT = 240
const NORMALIZED_USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/
// What a user may type around the letters: white space, punctuation and symbols (dashes, dots, …).
const IGNORED_CHARACTERS = /[\s\p{P}\p{S}]/gu
// Generous: a user may paste the code with spaces around each letter, but nothing longer is a code.
const MAX_USER_CODE_INPUT_LENGTH = 64

/**
 * Draws a user code: 8 uniformly random letters of {@link USER_CODE_ALPHABET}, normalized (no dash).
 *
 * @example
 * generateUserCode() // 'WDJBMJHT'
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-6.1
 */
export function generateUserCode(): string {
  const crypto = globalThis.crypto
  if (typeof crypto?.getRandomValues !== 'function') {
    throw new InvalidArgumentError(
      'generating user codes needs Web Crypto (globalThis.crypto.getRandomValues)',
    )
  }
  const bytes = new Uint8Array(16)
  let code = ''
  while (code.length < USER_CODE_LENGTH) {
    crypto.getRandomValues(bytes)
    for (const byte of bytes) {
      if (byte < UNBIASED_BYTE_LIMIT && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % 20]
    }
  }
  return code
}

/**
 * The user code as typed, normalized for matching: white space, punctuation and symbols removed,
 * ASCII letters upper-cased. `undefined` when what remains is not 8 letters of the alphabet (a
 * non-ASCII letter is never folded into an ASCII one).
 *
 * @example
 * normalizeUserCode(' wdjb-mjht ') // 'WDJBMJHT'
 * normalizeUserCode('WDJB-MJH') // undefined
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-6.1
 */
export function normalizeUserCode(input: string): string | undefined {
  if (typeof input !== 'string' || input.length > MAX_USER_CODE_INPUT_LENGTH) return undefined
  const letters = input.replace(IGNORED_CHARACTERS, '').replace(/[a-z]/g, (c) => c.toUpperCase())
  return NORMALIZED_USER_CODE.test(letters) ? letters : undefined
}

/**
 * The display form of a normalized user code: two groups of four joined by a dash.
 *
 * @example
 * formatUserCode('WDJBMJHT') // 'WDJB-MJHT'
 * @see https://www.rfc-editor.org/rfc/rfc8628#section-6.1
 */
export function formatUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`
}
