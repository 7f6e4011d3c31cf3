import { calculatePkceChallenge } from './calculate-pkce-challenge.js'
import { timingSafeEqual } from './constant-time.js'
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
