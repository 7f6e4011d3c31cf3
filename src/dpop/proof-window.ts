// The time window of DPoP proofs, apart from the verifier so that a replay cache adapter can read
// it without loading the JOSE library.

/** How long a proof is accepted after its `iat`, in seconds, unless a host sets another window. */
export const DPOP_PROOF_MAX_AGE_SECONDS = 300
/** How far in the future an `iat` may be, in seconds: clients' clocks run a little ahead. */
export const DPOP_PROOF_LEEWAY_SECONDS = 30

/**
 * How much longer than the acceptance window a used proof is remembered, in seconds. Instances
 * sharing one replay cache do not agree exactly on the time: the entry expires by the writer's
 * clock while another instance checks `iat` by its own, so a proof must outlive its window by more
 * than any skew between them, or a slower instance would accept it again.
 */
export const DPOP_REPLAY_SKEW_SECONDS = 60

/** The longest acceptance window a host may set, in seconds. */
export const MAX_DPOP_PROOF_MAX_AGE_SECONDS = 3600
/** The largest leeway for an `iat` ahead of the clock a host may set, in seconds. */
export const MAX_DPOP_PROOF_LEEWAY_SECONDS = 300
/**
 * The longest a replay cache is asked to remember a proof, from now, in seconds: an `iat` up to
 * the leeway ahead, plus the longest window, leeway and skew allowance the verifier adds.
 * A cache may treat a longer expiry as a broken clock and cap it.
 */
export const MAX_DPOP_REPLAY_SECONDS =
  MAX_DPOP_PROOF_MAX_AGE_SECONDS + 2 * MAX_DPOP_PROOF_LEEWAY_SECONDS + DPOP_REPLAY_SKEW_SECONDS
