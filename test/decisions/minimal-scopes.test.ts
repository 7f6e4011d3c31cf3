import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { decide } from '../../src/decisions/decide.js'
import { minimalScopes } from '../../src/decisions/minimal-scopes.js'
import { OPERATION_NAMES, OPERATIONS, type Operation } from '../../src/decisions/operations.js'
import type { Resource } from '../../src/decisions/resources.js'
import { parseScopes, SCOPES } from '../../src/decisions/scopes.js'
import { InvalidArgumentError } from '../../src/errors.js'

// A resource hidden from the public that the user fully controls: only the scopes decide.
function ownedResource(operation: Operation): Resource {
  const kind = OPERATIONS[operation].need.kind
  if (kind === 'dataset') return { kind, publicLevel: 'none', userLevel: 'edit' }
  if (kind === 'workflow') return { kind, publicLevel: 'none', userLevel: 'write' }
  return { kind, administered: true }
}

describe('minimalScopes', () => {
  test.each([
    [[], 'public'],
    [['dataset.list'], 'public data.overview'],
    [['dataset.metadata'], 'public data.metadata'],
    [['dataset.metadata', 'table.read'], 'public data.data'],
    [['dataset.overview', 'version.release'], 'public data.edit'],
    [['workflow.read'], 'public wokflow.read'],
    [['workflow.read', 'workflow.run'], 'public workflow.write'],
    [['organization.read', 'table.read'], 'public data.data organization.read'],
    [['organization.write', 'organization.read'], 'public organization.write'],
  ] as [Operation[], string][])('%j → %s', (operations, scopes) => {
    expect(minimalScopes(operations).toString()).toBe(scopes)
  })

  test('names an unknown operation', () => {
    expect(() => minimalScopes(['table.read', 'table.write' as Operation])).toThrow(InvalidArgumentError)
    expect(() => minimalScopes(['table.write' as Operation])).toThrow(
      /operations\[0\]: unknown operation "table.write"; expected one of dataset\.list, dataset\.overview, dataset\.metadata, /,
    )
  })

  test('is sufficient and minimal: it allows every operation, and dropping any granted scope denies one', () => {
    fc.assert(
      fc.property(fc.subarray([...OPERATION_NAMES], { minLength: 1 }), (operations) => {
        const scopes = minimalScopes(operations)
        const allows = (granted: readonly string[]) =>
          operations.every((operation) => {
            const principal = { kind: 'token' as const, userId: 'u', scopes: parseScopes(granted) }
            return decide({ principal, operation, resource: ownedResource(operation) }).allowed
          })
        if (!allows(scopes.granted)) return false
        return scopes.granted
          .filter((scope) => scope !== 'public')
          .every((dropped) => !allows(scopes.granted.filter((scope) => scope !== dropped)))
      }),
      { numRuns: 1000, seed: 3 },
    )
  })

  test('never grants more than a full scope set', () => {
    expect(minimalScopes([...OPERATION_NAMES]).granted.every((scope) => SCOPES.includes(scope))).toBe(true)
  })
})
