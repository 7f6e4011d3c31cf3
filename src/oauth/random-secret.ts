import { generateRandomBase62 } from '../tokens/token-format.js'
import { hashTokenValue } from '../tokens/token-hash.js'

// Private helpers of the OAuth module; not part of the public API.

/**
 * A fresh one-time secret (authorization code, device code, refresh token): 32 base62 characters,
 * 190 bits. It has no `dap_`/`dao_` prefix, so it can never pass for an access token.
 */
export function generateOpaqueSecret(): string {
  return generateRandomBase62(32)
}

/** The SHA-256 under which a secret is stored: the secret itself never is. */
export function hashSecret(secret: string): string {
  return hashTokenValue(secret)
}

/** A refresh-token family id: `rf_` and 16 base62 characters. */
export function generateFamilyId(): string {
  return `rf_${generateRandomBase62(16)}`
}
