/**
 * Fixtures and assertions for host apps' policy tests. It needs no other package: the fast-check
 * arbitraries have their own entry, `data-access-policy/testing/arbitraries`.
 *
 * @packageDocumentation
 * @module data-access-policy/testing
 */

export { type DecideInput, decide } from '../decisions/decide.js'
export { type ExpectedDecision, expectDecision } from './expect-decision.js'
export {
  FIXED_NOW,
  type FixedClock,
  fixedClock,
  PRINCIPALS,
  principalWith,
  tokenFixture,
} from './fixtures.js'
