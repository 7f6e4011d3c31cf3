/** The JWS algorithms (RFC 7518 §3, RFC 8037 §3.1) a JWT store may allow, and the keys each takes. */

/**
 * An algorithm a JWT access token may be signed with: asymmetric ones, verified with the issuer's
 * public keys from its JWKS, or (only with a shared secret configured on purpose) HMAC ones.
 * `none` is not among them.
 *
 * @example
 * const algorithms: JwtAlgorithm[] = ['RS256', 'ES256']
 */
export type JwtAlgorithm = AsymmetricJwtAlgorithm | HmacJwtAlgorithm

type AsymmetricJwtAlgorithm =
  | 'RS256'
  | 'RS384'
  | 'RS512'
  | 'PS256'
  | 'PS384'
  | 'PS512'
  | 'ES256'
  | 'ES384'
  | 'ES512'
  | 'EdDSA'
  | 'Ed25519'
type HmacJwtAlgorithm = 'HS256' | 'HS384' | 'HS512'

// Each asymmetric algorithm's JWK key type (RFC 7518 §6.1, RFC 8037 §2).
export const KEY_TYPE_OF: Readonly<Record<AsymmetricJwtAlgorithm, string>> = Object.freeze({
  RS256: 'RSA',
  RS384: 'RSA',
  RS512: 'RSA',
  PS256: 'RSA',
  PS384: 'RSA',
  PS512: 'RSA',
  ES256: 'EC',
  ES384: 'EC',
  ES512: 'EC',
  EdDSA: 'OKP',
  Ed25519: 'OKP',
})

export const HMAC_ALGORITHMS: readonly HmacJwtAlgorithm[] = Object.freeze(['HS256', 'HS384', 'HS512'])

/** Whether `name` is an asymmetric algorithm a JWKS can verify. Internal to the package. */
export function isAsymmetricAlgorithm(name: string): name is AsymmetricJwtAlgorithm {
  return Object.hasOwn(KEY_TYPE_OF, name)
}

/** Whether `name` is an HMAC algorithm, verified with a shared secret. Internal to the package. */
export function isHmacAlgorithm(name: string): name is HmacJwtAlgorithm {
  return (HMAC_ALGORITHMS as readonly string[]).includes(name)
}
