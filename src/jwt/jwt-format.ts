/**
 * The syntax of a JWT access token as it arrives in a bearer header: a JWS in compact serialization
 * (RFC 7515 §7.1), bounded in length, checked without allocating before any cryptography.
 */

/** The longest token value accepted by default, in characters: 8 KiB. */
export const DEFAULT_MAX_JWT_LENGTH = 8192

// base64url without padding (RFC 7515 §2), indexed by char code.
const BASE64URL = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') {
  BASE64URL[c.charCodeAt(0)] = 1
}
const DOT = 0x2e

/**
 * Whether `value` is three non-empty base64url segments joined by two dots, at most `maxLength`
 * characters: a compact JWS (an unsecured JWT, whose signature is empty, is not one). Internal to
 * the package.
 */
export function isCompactJws(value: string, maxLength: number): boolean {
  if (typeof value !== 'string' || value.length > maxLength) return false
  let dots = 0
  let segment = 0
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code === DOT) {
      if (segment === 0) return false
      dots++
      segment = 0
    } else if (BASE64URL[code] === 1) {
      segment++
    } else {
      return false
    }
  }
  return dots === 2 && segment > 0
}
