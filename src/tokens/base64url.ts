// Private encoding helpers of the OAuth module; not part of the public API.

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** Base64url without padding (RFC 4648 §5, RFC 7636 Appendix A). */
export function encodeBase64Url(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out +=
      BASE64URL_ALPHABET[n >>> 18]! +
      BASE64URL_ALPHABET[(n >>> 12) & 63]! +
      BASE64URL_ALPHABET[(n >>> 6) & 63]! +
      BASE64URL_ALPHABET[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += BASE64URL_ALPHABET[n >>> 18]! + BASE64URL_ALPHABET[(n >>> 12) & 63]!
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out +=
      BASE64URL_ALPHABET[n >>> 18]! +
      BASE64URL_ALPHABET[(n >>> 12) & 63]! +
      BASE64URL_ALPHABET[(n >>> 6) & 63]!
  }
  return out
}

/** The bytes of a string of hex digit pairs, as the token hash returns them. */
export function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length >>> 1)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}
