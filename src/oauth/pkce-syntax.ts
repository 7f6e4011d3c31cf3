import { OAuthError } from './oauth-error.js'
import { type OAuthParams, readParam } from './oauth-params.js'

// RFC 7636 §4.1: code-verifier = 43*128unreserved; unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
// BASE64URL of a 32-byte SHA-256 digest without padding is exactly 43 characters (RFC 7636 §4.2).
const S256_CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/**
 * True when `value` is a syntactically valid PKCE code verifier: 43–128 characters of
 * `[A-Za-z0-9-._~]`.
 *
 * @example
 * isValidCodeVerifier('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // true
 * isValidCodeVerifier('too-short') // false
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.1
 */
export function isValidCodeVerifier(value: unknown): value is string {
  return typeof value === 'string' && CODE_VERIFIER.test(value)
}

/**
 * True when `value` is a syntactically valid S256 code challenge: exactly 43 base64url characters.
 *
 * @example
 * isValidCodeChallenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM') // true
 * isValidCodeChallenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=') // false: padding
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2
 */
export function isValidCodeChallenge(value: unknown): value is string {
  return typeof value === 'string' && S256_CODE_CHALLENGE.test(value)
}

/**
 * Checks the PKCE parameters of an authorization or device authorization request: S256 only,
 * spelled exactly (`plain`, `s256` or an absent method are refused), and a well-formed challenge.
 * Returns the challenge, or throws.
 *
 * @throws {OAuthError} `invalid_request`.
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.4.1
 */
export function requireS256Challenge(challenge: string | undefined, method: string | undefined): string {
  if (challenge === undefined) {
    throw new OAuthError('invalid_request', 'code_challenge is required (PKCE with S256)')
  }
  if (method === undefined) {
    // RFC 7636 would default to "plain", which this server refuses.
    throw new OAuthError('invalid_request', 'code_challenge_method is required and must be S256')
  }
  if (method !== 'S256') {
    throw new OAuthError('invalid_request', 'code_challenge_method must be S256 (case-sensitive)')
  }
  if (!isValidCodeChallenge(challenge)) {
    throw new OAuthError('invalid_request', 'code_challenge must be 43 base64url characters (S256)')
  }
  return challenge
}

/**
 * The `code_verifier` of a token request, checked for syntax before anything is looked up or
 * consumed; absent stays `undefined` (the grant then refuses it as `invalid_grant`).
 *
 * @throws {OAuthError} `invalid_request` for a repeated or malformed verifier.
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.1
 */
export function readCodeVerifier(params: OAuthParams): string | undefined {
  const verifier = readParam(params, 'code_verifier')
  if (verifier !== undefined && !isValidCodeVerifier(verifier)) {
    throw new OAuthError('invalid_request', 'code_verifier must be 43-128 characters of [A-Za-z0-9-._~]')
  }
  return verifier
}
