import { calculatePkceChallenge } from './calculate-pkce-challenge.js'
import { timingSafeEqual } from './constant-time.js'
import { OAuthError } from './oauth-error.js'
import { isValidCodeChallenge, isValidCodeVerifier } from './pkce-syntax.js'

/**
 * True when `verifier` is well formed and its S256 challenge equals `challenge`, compared in
 * constant time. A malformed verifier or challenge is simply `false`.
 *
 * @example
 * verifyPkce('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM') // true
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!isValidCodeVerifier(verifier) || !isValidCodeChallenge(challenge)) return false
  return timingSafeEqual(calculatePkceChallenge(verifier), challenge)
}

/**
 * The proof of possession a grant stored with `challenge` requires of a token request: a verifier
 * that is present, is not the challenge itself, and hashes to it.
 *
 * @throws {OAuthError} `invalid_grant`.
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
export function requireMatchingVerifier(verifier: string | undefined, challenge: string): void {
  if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required')
  if (verifier === challenge)
    throw new OAuthError('invalid_grant', 'code_verifier must not be the code_challenge')
  if (!verifyPkce(verifier, challenge)) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge')
  }
}
