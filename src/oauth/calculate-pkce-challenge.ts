import { InvalidArgumentError } from '../errors.js'
import { encodeBase64Url, hexToBytes } from '../tokens/base64url.js'
import { hashTokenValue } from '../tokens/token-hash.js'
import { isValidCodeVerifier } from './pkce-syntax.js'

/**
 * Computes the S256 code challenge of a verifier: BASE64URL(SHA-256(ASCII(verifier))), unpadded.
 * Synchronous on every runtime, through the token hash (node:crypto where present, else pure JS).
 *
 * @throws {InvalidArgumentError} when `verifier` is not 43–128 characters of `[A-Za-z0-9-._~]`.
 * @example
 * calculatePkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')
 * // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2
 */
export function calculatePkceChallenge(verifier: string): string {
  if (!isValidCodeVerifier(verifier)) {
    throw new InvalidArgumentError('verifier must be 43-128 characters of [A-Za-z0-9-._~] (RFC 7636 §4.1)')
  }
  // The verifier is ASCII, so its UTF-8 bytes, which the token hash digests, are its ASCII bytes.
  return encodeBase64Url(hexToBytes(hashTokenValue(verifier)))
}
