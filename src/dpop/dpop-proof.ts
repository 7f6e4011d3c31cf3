import { EmbeddedJWK, errors as joseErrors, jwtVerify } from 'jose'
import { DpopProofError } from '../errors.js'
import { htuOf } from './htu.js'
import { accessTokenHash, jwkThumbprint } from './jwk-thumbprint.js'
import { proofKeyRefusal } from './proof-key-limits.js'
import {
  DPOP_PROOF_LEEWAY_SECONDS,
  DPOP_PROOF_MAX_AGE_SECONDS,
  DPOP_REPLAY_SKEW_SECONDS,
} from './proof-window.js'
import type { DpopReplayCache } from './replay-cache.js'

/**
 * The proof algorithms accepted unless a host narrows them: asymmetric only (RFC 9449 §4.2), and
 * only those WebCrypto verifies on Node, Bun, Deno and Workers alike.
 */
export const DPOP_ALGORITHMS: readonly string[] = Object.freeze([
  'ES256',
  'EdDSA',
  'Ed25519',
  'RS256',
  'PS256',
])

// Symmetric and unsecured algorithms can never sign a proof: the verifier only has the public key.
const REFUSED_ALGORITHMS = /^(?:none|HS\d+)$/i

export {
  DPOP_PROOF_LEEWAY_SECONDS,
  DPOP_PROOF_MAX_AGE_SECONDS,
  DPOP_REPLAY_SKEW_SECONDS,
  MAX_DPOP_PROOF_LEEWAY_SECONDS,
  MAX_DPOP_PROOF_MAX_AGE_SECONDS,
  MAX_DPOP_REPLAY_SECONDS,
} from './proof-window.js'

// A proof is a header, a few claims and a public key: an RSA-4096 key is under 1 KiB of base64url.
// Anything far larger is refused before a byte of it is decoded.
const MAX_PROOF_LENGTH = 8192
const MAX_JTI_LENGTH = 256

/** What the proof must match: the request it came with and, at a resource, the token. */
export interface DpopProofRequest {
  /** The request's method (`htm`), exactly as sent: `GET`, `POST`. */
  readonly method: string
  /** The request's absolute URL as the server resolved it (`htu`); its query and fragment are ignored. */
  readonly url: string
  /** The access token the proof comes with, at a resource: its hash must be the proof's `ath`. */
  readonly accessToken?: string
  /** The thumbprint the token is bound to: the proof's key must have it. */
  readonly jkt?: string
}

/** Options of {@link verifyDpopProof}. */
export interface DpopProofOptions {
  /** The allowed `alg` values; {@link DPOP_ALGORITHMS} by default. `none` and HMAC are always refused. */
  readonly algorithms?: readonly string[]
  /** The clock, epoch ms; `Date.now()` by default. */
  readonly now?: number
  /** The acceptance window after `iat`, in seconds; {@link DPOP_PROOF_MAX_AGE_SECONDS} by default. */
  readonly maxAgeSeconds?: number
  /** How far ahead of the clock an `iat` may be, in seconds; {@link DPOP_PROOF_LEEWAY_SECONDS} by default. */
  readonly leewaySeconds?: number
  /**
   * Server nonces (RFC 9449 §8): answers whether the proof's `nonce` (undefined when it has none) is
   * one the server currently accepts. A refusal is `use_dpop_nonce`. Absent: nonces are not used.
   */
  readonly acceptNonce?: (nonce: string | undefined) => boolean
  /**
   * Where used proofs are remembered (§11.1): a proof whose `jti` was seen with the same key is
   * refused. Its failure is thrown as it is (the caller answers 503); absent, replays are not checked.
   */
  readonly replayCache?: DpopReplayCache
}

/** What a valid proof establishes. */
export interface VerifiedDpopProof {
  /** The RFC 7638 thumbprint of the proof's key: what a token is bound to. */
  readonly jkt: string
  /** The proof's `jti`. */
  readonly jti: string
  /** The proof's `iat`, epoch seconds. */
  readonly iat: number
}

function refuse(message: string, cause?: unknown): never {
  throw new DpopProofError('invalid_dpop_proof', message, cause === undefined ? undefined : { cause })
}

/**
 * Verifies a DPoP proof (RFC 9449 §4.3): one compact JWS of `typ` `dpop+jwt`, signed with an
 * allowed asymmetric algorithm by the public `jwk` of its header; `jti`, `htm`, `htu` and `iat`
 * present; `htm` and `htu` those of the request; `iat` within the window; `ath` the token's hash
 * and the key's thumbprint the token's binding when a token is given; a nonce the server accepts
 * when nonces are on; and a `jti` never seen before with that key when a replay cache is given.
 * Throws {@link DpopProofError} for a bad proof; a failing replay cache's error as it is.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-4.3
 * @example
 * const { jkt } = await verifyDpopProof(request.headers.get('dpop') ?? '', {
 *   method: 'POST',
 *   url: 'https://api.example.com/oauth/token',
 * }, { replayCache })
 */
export async function verifyDpopProof(
  proof: string,
  request: DpopProofRequest,
  options: DpopProofOptions = {},
): Promise<VerifiedDpopProof> {
  if (typeof proof !== 'string' || proof.length === 0) refuse('no DPoP proof')
  if (proof.length > MAX_PROOF_LENGTH) refuse(`the proof is longer than ${MAX_PROOF_LENGTH} characters`)
  const keyRefusal = proofKeyRefusal(proof)
  if (keyRefusal !== undefined) refuse(keyRefusal)
  const algorithms = (options.algorithms ?? DPOP_ALGORITHMS).filter((alg) => !REFUSED_ALGORITHMS.test(alg))
  let verified: Awaited<ReturnType<typeof jwtVerify>>
  try {
    // The claims' presence is checked below with their values: jose's `requiredClaims` would only
    // repeat it. Its clock is the caller's, for `exp` and `nbf` should a proof carry them.
    verified = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms,
      currentDate: new Date(options.now ?? Date.now()),
    })
  } catch (error) {
    refuse(describeJoseFailure(error), error)
  }
  const claims = verified.payload
  const jwk = verified.protectedHeader.jwk
  const jkt = jwk === undefined ? undefined : jwkThumbprint(jwk as Record<string, unknown>)
  // jose imported the key, so its type is one of the three: this only guards against a future one.
  if (jkt === undefined) refuse('the proof key is not an EC, OKP or RSA public key')
  const jti = checkClaims(claims, request, options)
  if (request.jkt !== undefined && request.jkt !== jkt)
    refuse('the proof is signed by another key than the token is bound to')
  if (options.acceptNonce !== undefined && !options.acceptNonce(stringClaim(claims.nonce))) {
    throw new DpopProofError('use_dpop_nonce', 'the proof does not carry the current server nonce')
  }
  const proven = { jkt, jti, iat: claims.iat as number }
  if (options.replayCache !== undefined) await claimDpopProof(proven, options.replayCache, options)
  return proven
}

/**
 * Records a verified proof in the replay cache (RFC 9449 §11.1), refusing it as
 * `invalid_dpop_proof` when it was used before. {@link verifyDpopProof} does it when given a cache;
 * the token endpoint does it apart, once the grant is known good, so that refused requests leave
 * nothing in the cache. A failing cache's error is thrown as it is.
 */
export async function claimDpopProof(
  proof: VerifiedDpopProof,
  replayCache: DpopReplayCache,
  options: Pick<DpopProofOptions, 'maxAgeSeconds' | 'leewaySeconds'> = {},
): Promise<void> {
  const maxAge = options.maxAgeSeconds ?? DPOP_PROOF_MAX_AGE_SECONDS
  const leeway = options.leewaySeconds ?? DPOP_PROOF_LEEWAY_SECONDS
  // Remembered for as long as any instance could still accept it: each accepts until `iat + maxAge`
  // by its own clock, while the entry expires by the writer's; the leeway and the skew allowance
  // cover instances whose clocks run behind the writer's.
  const expiresAt = (proof.iat + maxAge + leeway + DPOP_REPLAY_SKEW_SECONDS) * 1000
  const fresh = await replayCache.claim(`${proof.jkt}.${proof.jti}`, expiresAt)
  if (!fresh) refuse('the proof was used before')
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function checkClaims(
  claims: Readonly<Record<string, unknown>>,
  request: DpopProofRequest,
  options: DpopProofOptions,
): string {
  const jti = claims.jti
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
    refuse(`the proof's jti must be a string of 1-${MAX_JTI_LENGTH} characters`)
  }
  if (claims.htm !== request.method) {
    refuse(`the proof's htm is ${JSON.stringify(claims.htm)}, expected ${JSON.stringify(request.method)}`)
  }
  const expectedHtu = htuOf(request.url)
  if (expectedHtu === undefined)
    refuse(`the request URL ${JSON.stringify(request.url)} is not an absolute http(s) URL`)
  const htu = typeof claims.htu === 'string' ? htuOf(claims.htu) : undefined
  if (htu !== expectedHtu) {
    refuse(`the proof's htu is ${JSON.stringify(claims.htu)}, expected ${JSON.stringify(expectedHtu)}`)
  }
  checkIssuedAt(claims.iat, options)
  if (request.accessToken !== undefined && claims.ath !== accessTokenHash(request.accessToken)) {
    refuse("the proof's ath is not the hash of the access token it came with")
  }
  return jti
}

function checkIssuedAt(iat: unknown, options: DpopProofOptions): void {
  const now = (options.now ?? Date.now()) / 1000
  const maxAge = options.maxAgeSeconds ?? DPOP_PROOF_MAX_AGE_SECONDS
  const leeway = options.leewaySeconds ?? DPOP_PROOF_LEEWAY_SECONDS
  if (typeof iat !== 'number' || !Number.isFinite(iat)) refuse("the proof's iat must be a number")
  if (iat > now + leeway) refuse(`the proof's iat is more than ${leeway} s in the future`)
  if (iat < now - maxAge) refuse(`the proof's iat is more than ${maxAge} s in the past`)
}

// jose's messages name the failing check without quoting the token; they are kept as the reason.
function describeJoseFailure(error: unknown): string {
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return 'the proof is signed with an algorithm that is not allowed'
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'the proof signature does not verify'
  if (error instanceof joseErrors.JOSEError) return `the proof is not a valid DPoP JWT: ${error.message}`
  return 'the proof is not a valid DPoP JWT'
}
