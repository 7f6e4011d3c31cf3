// The shape that keeps `decide` near a hand-written check (bench/decision-mix.ts): its answers are
// shared, frozen values, so deciding allocates nothing, whatever the request. Behaviour, not timing:
// a change that builds a decision per call fails here before any benchmark notices it.
import { describe, expect, test } from 'vitest'
import { decide } from '../../src/decisions/decide.js'
import type { Decision } from '../../src/decisions/decision.js'
import {
  DATASET_LEVELS,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  WORKFLOW_LEVELS,
} from '../../src/decisions/levels.js'
import { OPERATION_NAMES, OPERATIONS, type Operation } from '../../src/decisions/operations.js'
import { ANONYMOUS, type Principal } from '../../src/decisions/principal.js'
import type { Resource } from '../../src/decisions/resources.js'
import { parseScopes, SCOPES } from '../../src/decisions/scopes.js'
import { compileExportRestrictions } from '../../src/restrictions/export-restrictions.js'

// Fresh but equal inputs on every call, as a resolver builds them per request.
function resources(kind: Resource['kind']): (() => Resource)[] {
  switch (kind) {
    case 'dataset':
      return PUBLIC_DATASET_LEVELS.flatMap((publicLevel) =>
        DATASET_LEVELS.map((userLevel) => () => ({ kind, publicLevel, userLevel })),
      )
    case 'workflow':
      return PUBLIC_WORKFLOW_LEVELS.flatMap((publicLevel) =>
        WORKFLOW_LEVELS.map((userLevel) => () => ({ kind, publicLevel, userLevel })),
      )
    case 'organization':
      return [true, false].map((administered) => () => ({ kind, administered }))
  }
}

const principals: Principal[] = [
  ANONYMOUS,
  ...SCOPES.map((scope): Principal => ({ kind: 'token', userId: 'u', scopes: parseScopes([scope]) })),
]

describe('decide answers with shared, frozen decisions', () => {
  test.each(OPERATION_NAMES)(
    '%s: every principal and resource, decided twice, gives the same object',
    (operation) => {
      let decided = 0
      for (const principal of principals) {
        for (const resource of resources(OPERATIONS[operation].need.kind)) {
          const first = decide({ principal, operation, resource: resource() })
          const again = decide({ principal: { ...principal }, operation, resource: resource() })
          expect(again).toBe(first)
          expect(Object.isFrozen(first)).toBe(true)
          decided++
        }
      }
      expect(decided).toBeGreaterThan(principals.length)
    },
  )

  test('so do invalid inputs', () => {
    const principal = principals[4]!
    const inputs = [
      () => ({ principal, operation: 'dataset.read', resource: { kind: 'dataset', publicLevel: 'none' } }),
      () => ({ principal, operation: 'table.read', resource: { kind: 'workflow', publicLevel: 'none' } }),
      () => ({ principal, operation: 'table.read', resource: { kind: 'dataset', publicLevel: 'edit' } }),
      () => ({ principal: { scopes: {} }, operation: 'table.read', resource: { kind: 'dataset' } }),
      () => ({ principal, operation: 'organization.read', resource: { kind: 'organization' } }),
    ]
    for (const input of inputs) {
      const first = decide(input() as never)
      expect(first).toMatchObject({ allowed: false, code: 'invalid_input' })
      expect(decide(input() as never)).toBe(first)
    }
  })
})

describe('an allowed export under caps', () => {
  const reader: Principal = { kind: 'token', userId: 'u', scopes: parseScopes(['data.data']) }
  const dataContent = OPERATION_NAMES.filter((operation) => OPERATIONS[operation].dataContent)
  const capped = (restrictions: ReturnType<typeof compileExportRestrictions>, operation: Operation) =>
    decide({
      principal: reader,
      operation,
      resource: { kind: 'dataset', publicLevel: 'none', userLevel: 'data', exportRestrictions: restrictions },
      request: { clientAddress: '10.1.2.3', size: { records: 3 } },
    })

  test.each([
    ['a record cap', { maxRecords: 10 }],
    ['a byte cap', { maxBytes: 100 }],
    ['both caps and an allow-list', { maxRecords: 10, maxBytes: 100, allowedIps: ['10.0.0.0/8'] }],
  ])('%s: one frozen allow per operation and restrictions, made once', (_name, input) => {
    const restrictions = compileExportRestrictions(input)
    const allows = new Set<Decision>()
    for (const operation of dataContent) {
      const first = capped(restrictions, operation)
      expect(first).toMatchObject({ allowed: true, operation, dataContent: true })
      expect(Object.isFrozen(first)).toBe(true)
      expect(first.allowed && Object.isFrozen(first.limits)).toBe(true)
      expect(capped(restrictions, operation)).toBe(first)
      allows.add(first)
    }
    expect(allows.size).toBe(dataContent.length)
    // Other restrictions with the same caps answer alike, with their own allow.
    const twin = capped(compileExportRestrictions(input), 'table.read')
    expect(twin).toStrictEqual(capped(restrictions, 'table.read'))
  })

  test('restrictions without caps answer with the operation’s plain allow', () => {
    const listed = compileExportRestrictions({ allowedIps: ['10.0.0.0/8'] })
    const open = decide({
      principal: reader,
      operation: 'table.read',
      resource: { kind: 'dataset', publicLevel: 'none', userLevel: 'data' },
    })
    expect(capped(listed, 'table.read')).toBe(open)
  })
})
