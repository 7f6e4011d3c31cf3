/**
 * `data-access-policy/dpop`: sender-constrained tokens (RFC 9449). The policy and the issuer
 * verify proofs themselves once configured; this entry is for a host that verifies a proof of its
 * own (another route, another framework) or keeps its replay cache elsewhere.
 *
 * @packageDocumentation
 * @module data-access-policy/dpop
 */
export { DpopProofError } from '../errors.js'
export {
  DPOP_ALGORITHMS,
  DPOP_PROOF_LEEWAY_SECONDS,
  DPOP_PROOF_MAX_AGE_SECONDS,
  type DpopProofOptions,
  type DpopProofRequest,
  type VerifiedDpopProof,
  verifyDpopProof,
} from './dpop-proof.js'
export { jwkThumbprint } from './jwk-thumbprint.js'
export { createDpopNonces, type DpopNonceOptions, type DpopNonces } from './nonces.js'
export type { DpopPolicyOptions } from './policy-options.js'
export {
  type DpopReplayCache,
  MemoryDpopReplayCache,
  type MemoryDpopReplayCacheOptions,
} from './replay-cache.js'
