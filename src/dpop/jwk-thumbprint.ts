import { sha256Base64Url } from '../tokens/token-hash.js'

// RFC 7638 §3.2: the required members of each key type, in lexicographic order. Any other member
// (`alg`, `kid`, `use`, …) is left out, so that one key has one thumbprint however it is dressed.
const REQUIRED_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
}

/**
 * The RFC 7638 JWK SHA-256 thumbprint of a public key, base64url without padding (43 characters):
 * what RFC 9449 binds a token to (`cnf.jkt`) and what `dpop_jkt` names. `undefined` for a key type
 * other than EC, OKP or RSA, or a required member that is not a string.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7638#section-3
 * @example
 * jwkThumbprint({ kty: 'EC', crv: 'P-256', x: '…', y: '…' }) // 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'
 */
export function jwkThumbprint(jwk: Readonly<Record<string, unknown>>): string | undefined {
  const kty = jwk.kty
  if (typeof kty !== 'string' || !Object.hasOwn(REQUIRED_MEMBERS, kty)) return undefined
  const members = REQUIRED_MEMBERS[kty]!
  const canonical: Record<string, string> = {}
  for (const name of members) {
    const value = jwk[name]
    if (typeof value !== 'string') return undefined
    canonical[name] = value
  }
  // JSON.stringify keeps insertion order, which is the lexicographic order listed above.
  return sha256Base64Url(JSON.stringify(canonical))
}

/**
 * The `ath` of a DPoP proof (RFC 9449 §4.2): base64url of the SHA-256 of the access token's ASCII
 * bytes.
 *
 * @example
 * accessTokenHash('dao_…') // 43 base64url characters
 */
export function accessTokenHash(accessToken: string): string {
  return sha256Base64Url(accessToken)
}
