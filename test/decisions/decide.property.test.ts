import fc from 'fast-check'
import { describe, test } from 'vitest'
import { decide } from '../../src/decisions/decide.js'
import type { Decision } from '../../src/decisions/decision.js'
import {
  DATASET_LEVELS,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  WORKFLOW_LEVELS,
} from '../../src/decisions/levels.js'
import { OPERATIONS } from '../../src/decisions/operations.js'
import { ANONYMOUS, type Principal } from '../../src/decisions/principal.js'
import type { Resource } from '../../src/decisions/resources.js'
import { parseScopes, SCOPES, type ScopeSet } from '../../src/decisions/scopes.js'
import {
  addressArbitrary,
  exportRestrictionsArbitrary,
  operationArbitrary,
  resourceArbitrary,
  scopeSetArbitrary,
} from '../../src/testing/arbitraries.js'

// Fixed seeds make every run replayable; fast-check prints the seed and path of a failure.
const RUNS = { numRuns: 1000, seed: 20261122 } as const

function tokenPrincipal(scopes: ScopeSet): Principal {
  return { kind: 'token', userId: 'user', scopes, tokenId: 'tok_x', tokenKind: 'api' }
}

function same(a: Decision, b: Decision): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

describe('design §10 invariant 1: deny by default', () => {
  test('an unknown operation, resource kind or level never allows', () => {
    const unknownOperation = fc.string().filter((name) => !Object.hasOwn(OPERATIONS, name))
    const unknownLevel = fc.string().filter((level) => !(DATASET_LEVELS as readonly string[]).includes(level))
    fc.assert(
      fc.property(
        scopeSetArbitrary,
        operationArbitrary,
        unknownOperation,
        unknownLevel,
        fc.string().filter((kind) => !['dataset', 'workflow', 'organization'].includes(kind)),
        resourceArbitrary,
        (scopes, operation, badOperation, badLevel, badKind, resource) => {
          const principal = tokenPrincipal(scopes)
          const asUnknownOperation = decide({ principal, operation: badOperation as never, resource })
          const asUnknownKind = decide({
            principal,
            operation,
            resource: { ...resource, kind: badKind } as never,
          })
          const badPublic = decide({
            principal,
            operation,
            resource: { ...resource, publicLevel: badLevel } as never,
          })
          const badUser = decide({
            principal,
            operation,
            resource: { ...resource, userLevel: badLevel } as never,
          })
          return (
            !asUnknownOperation.allowed &&
            !asUnknownKind.allowed &&
            (resource.kind === 'organization' || (!badPublic.allowed && !badUser.allowed))
          )
        },
      ),
      RUNS,
    )
  })
})

describe('design §10 invariant 2: monotonicity', () => {
  const datasetCase = fc.record({
    scopes: fc.subarray([...SCOPES]),
    extra: fc.constantFrom(...SCOPES),
    publicLevel: fc.integer({ min: 0, max: PUBLIC_DATASET_LEVELS.length - 1 }),
    userLevel: fc.integer({ min: 0, max: DATASET_LEVELS.length - 1 }),
    raise: fc.constantFrom('scope', 'user', 'public'),
    operation: operationArbitrary,
    workflowPublic: fc.integer({ min: 0, max: PUBLIC_WORKFLOW_LEVELS.length - 1 }),
    workflowUser: fc.integer({ min: 0, max: WORKFLOW_LEVELS.length - 1 }),
    administered: fc.boolean(),
  })

  type MonotonicCase = typeof datasetCase extends fc.Arbitrary<infer T> ? T : never

  function resourceFor(c: MonotonicCase, up: boolean): Resource {
    const raise = up ? 1 : 0
    const spec = OPERATIONS[c.operation]
    if (spec.need.kind === 'dataset') {
      return {
        kind: 'dataset',
        publicLevel: PUBLIC_DATASET_LEVELS[Math.min(c.publicLevel + (c.raise === 'public' ? raise : 0), 3)]!,
        userLevel: DATASET_LEVELS[Math.min(c.userLevel + (c.raise === 'user' ? raise : 0), 4)]!,
      }
    }
    if (spec.need.kind === 'workflow') {
      return {
        kind: 'workflow',
        publicLevel:
          PUBLIC_WORKFLOW_LEVELS[Math.min(c.workflowPublic + (c.raise === 'public' ? raise : 0), 1)]!,
        userLevel: WORKFLOW_LEVELS[Math.min(c.workflowUser + (c.raise === 'user' ? raise : 0), 2)]!,
      }
    }
    return { kind: 'organization', administered: c.administered || (up && c.raise === 'user') }
  }

  test('adding a scope or raising U or P never turns allow into deny, and removing never the reverse', () => {
    fc.assert(
      fc.property(datasetCase, (c) => {
        const lower = tokenPrincipal(parseScopes(c.scopes))
        const higher = tokenPrincipal(parseScopes(c.raise === 'scope' ? [...c.scopes, c.extra] : c.scopes))
        const before = decide({ principal: lower, operation: c.operation, resource: resourceFor(c, false) })
        const after = decide({ principal: higher, operation: c.operation, resource: resourceFor(c, true) })
        return !before.allowed || after.allowed
      }),
      RUNS,
    )
  })
})

describe('design §10 invariant 3: a public-only token decides exactly as the anonymous caller', () => {
  test('for every operation and resource', () => {
    const publicOnly = tokenPrincipal(parseScopes('public'))
    fc.assert(
      fc.property(
        operationArbitrary,
        resourceArbitrary,
        addressArbitrary,
        (operation, resource, clientAddress) => {
          const request = { clientAddress }
          return same(
            decide({ principal: publicOnly, operation, resource, request }),
            decide({ principal: ANONYMOUS, operation, resource, request }),
          )
        },
      ),
      RUNS,
    )
  })
})

describe('design §10 invariant 4: export restrictions never change a non-data-content decision', () => {
  test('with or without restrictions, from any address', () => {
    const nonData = operationArbitrary.filter(
      (operation) => OPERATIONS[operation].need.kind === 'dataset' && !OPERATIONS[operation].dataContent,
    )
    fc.assert(
      fc.property(
        scopeSetArbitrary,
        nonData,
        fc.constantFrom(...PUBLIC_DATASET_LEVELS),
        fc.constantFrom(...DATASET_LEVELS),
        exportRestrictionsArbitrary,
        addressArbitrary,
        (scopes, operation, publicLevel, userLevel, exportRestrictions, clientAddress) => {
          const principal = tokenPrincipal(scopes)
          const bare: Resource = { kind: 'dataset', publicLevel, userLevel }
          const restricted: Resource = { ...bare, exportRestrictions }
          const request = { clientAddress, size: { records: 1e6, bytes: 1e9 } }
          return same(
            decide({ principal, operation, resource: restricted, request }),
            decide({ principal, operation, resource: bare }),
          )
        },
      ),
      RUNS,
    )
  })
})
