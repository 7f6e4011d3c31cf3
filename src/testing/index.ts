/**
 * Fixtures and assertions for host apps' policy tests. It needs no other package: the fast-check
 * arbitraries have their own entry, `data-access-policy/testing/arbitraries`.
 *
 * @packageDocumentation
 * @module data-access-policy/testing
 */

export { type DecideInput, decide } from '../decisions/decide.js'
export { DENY_STATUS, STATUS_MESSAGES } from '../decisions/decision.js'
export { OPERATION_NAMES, OPERATIONS } from '../decisions/operations.js'
export { ANONYMOUS } from '../decisions/principal.js'
export { scopeSetOf } from '../decisions/scopes.js'
export { BASE62_ALPHABET } from '../tokens/token-format.js'
export { tokenHashBackend } from '../tokens/token-hash.js'
export { DAY_MS } from '../tokens/token-lifetime.js'
export { MAX_ROTATION_OVERLAP_MS } from '../tokens/token-record.js'
export { type ExpectedDecision, expectDecision } from './expect-decision.js'
export {
  FIXED_NOW,
  type FixedClock,
  fixedClock,
  PRINCIPALS,
  principalWith,
  tokenFixture,
} from './fixtures.js'
