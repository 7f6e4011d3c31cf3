import { describe, expect, test } from 'vitest'
import { deny } from '../../src/decisions/decision.js'
import { OPERATION_NAMES, OPERATIONS, operationSpec } from '../../src/decisions/operations.js'

describe('operationSpec', () => {
  test('every catalogue name has its entry', () => {
    for (const name of OPERATION_NAMES) expect(operationSpec(name)).toBe(OPERATIONS[name])
  })

  test.each([
    ['an unknown name', 'dataset.destroy'],
    ['a near miss', 'Dataset.metadata'],
    ['an inherited property', 'toString'],
    ['an object that stringifies to an operation', { toString: () => 'dataset.metadata' }],
    ['a number', 42],
    ['nothing', undefined],
  ])('%s has none', (_name, operation) => {
    expect(operationSpec(operation)).toBeUndefined()
  })
})

describe('the catalogue is frozen to its leaves', () => {
  test.each(OPERATION_NAMES)('%s: its entry and its need cannot be changed', (name) => {
    const spec = OPERATIONS[name] as { dataContent: boolean; need: { kind: string } }
    expect(() => {
      spec.dataContent = !spec.dataContent
    }).toThrow(TypeError)
    expect(() => {
      spec.need.kind = 'organization'
    }).toThrow(TypeError)
    expect(() => {
      ;(OPERATIONS as Record<string, unknown>)[name] = { need: { kind: 'dataset', level: 'overview' } }
    }).toThrow(TypeError)
  })

  test('no operation can be added', () => {
    expect(() => {
      ;(OPERATIONS as Record<string, unknown>)['dataset.peek'] = {
        need: { kind: 'dataset', level: 'overview' },
      }
    }).toThrow(TypeError)
    expect(operationSpec('dataset.peek')).toBeUndefined()
  })
})

describe('deny', () => {
  test('a denial without a scope has no scope field at all', () => {
    expect(Object.hasOwn(deny('not_found'), 'scope')).toBe(false)
    expect(deny('insufficient_scope', 'data.data')).toMatchObject({ scope: 'data.data' })
  })
})
