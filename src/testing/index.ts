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
