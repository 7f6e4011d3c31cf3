/**
 * Fixtures, fast-check arbitraries and assertions for host apps' policy tests.
 *
 * @packageDocumentation
 * @module data-access-policy/testing
 */

export { type DecideInput, decide } from '../decisions/decide.js'
export {
  addressArbitrary,
  datasetArbitrary,
  datasetLevelArbitrary,
  exportRestrictionsArbitrary,
  ipv4Arbitrary,
  ipv6Arbitrary,
  operationArbitrary,
  organizationArbitrary,
  principalArbitrary,
  resourceArbitrary,
  scopeArbitrary,
  scopeSetArbitrary,
  workflowArbitrary,
} from './arbitraries.js'
export { type ExpectedDecision, expectDecision } from './expect-decision.js'
export {
  FIXED_NOW,
  type FixedClock,
  fixedClock,
  PRINCIPALS,
  principalWith,
  tokenFixture,
} from './fixtures.js'
