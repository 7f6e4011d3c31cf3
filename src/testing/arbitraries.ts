/**
 * fast-check arbitraries of the core's vocabulary and resources, for property tests of a host's
 * policy. It needs `fast-check` (an optional peer dependency); `data-access-policy/testing` does not.
 *
 * @packageDocumentation
 * @module data-access-policy/testing/arbitraries
 */
import fc from 'fast-check'
import {
  DATASET_LEVELS,
  type DatasetLevel,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  WORKFLOW_LEVELS,
} from '../decisions/levels.js'
import { OPERATION_NAMES, type Operation } from '../decisions/operations.js'
import type { Principal } from '../decisions/principal.js'
import type {
  DatasetResource,
  OrganizationResource,
  Resource,
  WorkflowResource,
} from '../decisions/resources.js'
import { parseScopes, SCOPES, type Scope, type ScopeSet } from '../decisions/scopes.js'
import { compileExportRestrictions, type ExportRestrictions } from '../restrictions/export-restrictions.js'

/** Any one of the nine scope names. */
export const scopeArbitrary: fc.Arbitrary<Scope> = fc.constantFrom(...SCOPES)

/** Any scope set (always containing `public`). */
export const scopeSetArbitrary: fc.Arbitrary<ScopeSet> = fc
  .subarray([...SCOPES])
  .map((scopes) => parseScopes(scopes))

/** Any operation of the catalogue. */
export const operationArbitrary: fc.Arbitrary<Operation> = fc.constantFrom(...OPERATION_NAMES)

/** Any dataset level, `none` to `edit`. */
export const datasetLevelArbitrary: fc.Arbitrary<DatasetLevel> = fc.constantFrom(...DATASET_LEVELS)

/** A token principal with arbitrary scopes. */
export const principalArbitrary: fc.Arbitrary<Principal> = scopeSetArbitrary.map((scopes) => ({
  kind: 'token' as const,
  userId: 'user',
  scopes,
  tokenId: 'tok_fixture',
  tokenKind: 'api' as const,
}))

/** An IPv4 address in dotted-decimal form. */
export const ipv4Arbitrary: fc.Arbitrary<string> = fc.ipV4()

/** An IPv6 address in any standard text form. */
export const ipv6Arbitrary: fc.Arbitrary<string> = fc.ipV6()

/** A client address: IPv4, IPv6 or IPv4-mapped IPv6. */
export const addressArbitrary: fc.Arbitrary<string> = fc.oneof(
  ipv4Arbitrary,
  ipv6Arbitrary,
  ipv4Arbitrary.map((v4) => `::ffff:${v4}`),
)

const cidrArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.nat({ max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([value, prefix]) => {
    const network = prefix === 0 ? 0 : ((value >>> (32 - prefix)) << (32 - prefix)) >>> 0
    return `${network >>> 24}.${(network >>> 16) & 255}.${(network >>> 8) & 255}.${network & 255}/${prefix}`
  }),
  fc.constantFrom('::/0', '::1', '2001:db8::/32', 'fe80::/10', '::ffff:10.0.0.0/104'),
)

/** Compiled export restrictions with arbitrary caps and allow-lists. */
export const exportRestrictionsArbitrary: fc.Arbitrary<ExportRestrictions> = fc
  .record(
    {
      maxBytes: fc.nat({ max: 1_000_000 }),
      maxRecords: fc.nat({ max: 10_000 }),
      allowedIps: fc.array(cidrArbitrary, { maxLength: 5 }),
    },
    { requiredKeys: [] },
  )
  .map((input) => compileExportRestrictions(input))

/** A dataset description with arbitrary levels and, sometimes, export restrictions. */
export const datasetArbitrary: fc.Arbitrary<DatasetResource> = fc
  .record({
    publicLevel: fc.constantFrom(...PUBLIC_DATASET_LEVELS),
    userLevel: datasetLevelArbitrary,
    exportRestrictions: fc.option(exportRestrictionsArbitrary, { nil: undefined }),
  })
  .map(({ publicLevel, userLevel, exportRestrictions }) =>
    exportRestrictions === undefined
      ? { kind: 'dataset', publicLevel, userLevel }
      : { kind: 'dataset', publicLevel, userLevel, exportRestrictions },
  )

/** A workflow description with arbitrary levels. */
export const workflowArbitrary: fc.Arbitrary<WorkflowResource> = fc.record({
  kind: fc.constant('workflow' as const),
  publicLevel: fc.constantFrom(...PUBLIC_WORKFLOW_LEVELS),
  userLevel: fc.constantFrom(...WORKFLOW_LEVELS),
})

/** An organization description. */
export const organizationArbitrary: fc.Arbitrary<OrganizationResource> = fc.record({
  kind: fc.constant('organization' as const),
  administered: fc.boolean(),
})

/** Any resource description. */
export const resourceArbitrary: fc.Arbitrary<Resource> = fc.oneof(
  datasetArbitrary,
  workflowArbitrary,
  organizationArbitrary,
)
