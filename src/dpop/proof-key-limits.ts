import { decodeProtectedHeader } from 'jose'

// Private helper of the proof verifier; not part of the public API.

// A public JWK has three to five members (kty, crv or e, x/y or n, maybe alg, kid, use, key_ops,
// ext): more is not a key a client made for DPoP.
const MAX_JWK_MEMBERS = 10
// The largest JWK accepted, as JSON: an RSA-4096 key is under 800 characters.
const MAX_JWK_LENGTH = 1024
// RSA verification costs grow with the modulus and the exponent, and the key is the client's
// choice: larger than 4096 bits (512 octets, 683 base64url characters) or an exponent other than
// 65537 (`AQAB`) is refused before any crypto, as WebCrypto's own key generation never makes one.
const MAX_RSA_MODULUS_LENGTH = 683
const RSA_EXPONENT = 'AQAB'

/**
 * Why the proof's header `jwk` is refused before its signature is checked, or `undefined` when it
 * may be verified. A header that does not decode, or a `jwk` that is not an object, is left to the
 * verifier, which refuses it with its own reason.
 */
export function proofKeyRefusal(proof: string): string | undefined {
  let jwk: unknown
  try {
    jwk = decodeProtectedHeader(proof).jwk
  } catch {
    return undefined
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return undefined
  const members = Object.keys(jwk).length
  if (members > MAX_JWK_MEMBERS) {
    return `the proof's jwk has ${members} members, expected at most ${MAX_JWK_MEMBERS}`
  }
  const key = jwk as Readonly<Record<string, unknown>>
  if (key.kty === 'RSA') {
    if (key.e !== RSA_EXPONENT) {
      return `the proof's RSA key has the exponent ${JSON.stringify(key.e)}, expected "${RSA_EXPONENT}" (65537)`
    }
    if (typeof key.n === 'string' && key.n.length > MAX_RSA_MODULUS_LENGTH) {
      return `the proof's RSA modulus is ${key.n.length} base64url characters, expected at most ${MAX_RSA_MODULUS_LENGTH} (4096 bits)`
    }
  }
  const length = JSON.stringify(jwk).length
  if (length > MAX_JWK_LENGTH) {
    return `the proof's jwk is ${length} characters of JSON, expected at most ${MAX_JWK_LENGTH}`
  }
  return undefined
}
