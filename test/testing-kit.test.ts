import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { decide } from '../src/decisions/decide.js'
import { createAccessPolicy } from '../src/policy.js'
import { isExportRestrictions } from '../src/restrictions/export-restrictions.js'
import {
  datasetArbitrary,
  exportRestrictionsArbitrary,
  scopeSetArbitrary,
} from '../src/testing/arbitraries.js'
import {
  expectDecision,
  FIXED_NOW,
  fixedClock,
  PRINCIPALS,
  principalWith,
  tokenFixture,
} from '../src/testing/index.js'
import { MemoryTokenStore } from '../src/tokens/memory-token-store.js'
import { packagesReachedFrom } from './adapters/runtime-imports.js'

const hidden = { kind: 'dataset', publicLevel: 'none', userLevel: 'data' } as const

describe('expectDecision', () => {
  test('passes on the expected outcome', () => {
    expectDecision(
      decide({ principal: PRINCIPALS['data.data'], operation: 'table.read', resource: hidden }),
      'allow',
    )
    expectDecision(
      decide({ principal: PRINCIPALS['data.metadata'], operation: 'table.read', resource: hidden }),
      {
        code: 'insufficient_scope',
        status: 403,
        scope: 'data.data',
      },
    )
    expectDecision(
      decide({ principal: PRINCIPALS.public, operation: 'table.read', resource: hidden }),
      'not_found',
    )
  })

  test.each([
    [
      'allow',
      PRINCIPALS['data.metadata'],
      'route GET rows: expected allow, got deny 403 insufficient_scope, scope data.data',
    ],
    ['not_found', PRINCIPALS['data.data'], 'route GET rows: expected deny not_found, got allow'],
    [
      { code: 'insufficient_scope', scope: 'data.edit' },
      PRINCIPALS['data.metadata'],
      'route GET rows: expected deny insufficient_scope, scope data.edit, got deny 403 insufficient_scope, scope data.data',
    ],
    [
      { code: 'insufficient_scope', status: 401 },
      PRINCIPALS['data.metadata'],
      'route GET rows: expected deny 401 insufficient_scope, got deny 403 insufficient_scope, scope data.data',
    ],
    [
      'insufficient_access',
      PRINCIPALS['data.metadata'],
      'route GET rows: expected deny insufficient_access, got deny 403 insufficient_scope, scope data.data',
    ],
  ] as const)('fails readably: expected %j', (expected, principal, message) => {
    const decision = decide({ principal, operation: 'table.read', resource: hidden })
    expect(() => expectDecision(decision, expected, 'route GET rows')).toThrow(message)
  })
})

describe('fixtures', () => {
  test('a fixed clock moves only when told', () => {
    const clock = fixedClock()
    expect(clock.now()).toBe(FIXED_NOW)
    clock.advance(1000)
    expect(clock.now()).toBe(FIXED_NOW + 1000)
    clock.set(5)
    expect(clock.now()).toBe(5)
  })

  test('token fixtures authenticate through a real policy, and expire on the fixed clock', async () => {
    const clock = fixedClock()
    const tokens = new MemoryTokenStore({ now: clock.now })
    const { record, value } = tokenFixture({ scopes: 'data.metadata', expiresAt: FIXED_NOW + 60_000 })
    await tokens.save(record)
    const policy = createAccessPolicy({ tokens, now: clock.now })
    const request = { authorization: [`Bearer ${value}`], protocol: 'https', clientAddress: '127.0.0.1' }
    expect(await policy.authenticate(request)).toMatchObject({ ok: true, principal: { userId: 'alice' } })
    clock.advance(60_000)
    expect(await policy.authenticate(request)).toMatchObject({
      ok: false,
      decision: { code: 'invalid_token' },
    })
  })

  test('principalWith adds public and keeps the user', () => {
    expect(principalWith('data.data', 'bob')).toMatchObject({ userId: 'bob' })
    expect(principalWith(['data.data']).scopes.granted).toEqual(['public', 'data.data'])
  })
})

describe('arbitraries', () => {
  test('generate valid inputs for the core', () => {
    fc.assert(
      fc.property(
        scopeSetArbitrary,
        datasetArbitrary,
        exportRestrictionsArbitrary,
        (scopes, dataset, restrictions) => {
          return (
            scopes.has('public') &&
            ['none', 'overview', 'metadata', 'data'].includes(dataset.publicLevel) &&
            isExportRestrictions(restrictions)
          )
        },
      ),
      { numRuns: 200, seed: 1 },
    )
  })
})

describe('entries', () => {
  // fast-check is an optional peer: a host without it can still use the fixtures and expectDecision.
  test.each([
    ['src/testing/index.ts', false],
    ['src/testing/arbitraries.ts', true],
  ])('%s loads fast-check: %s', (entry, loadsFastCheck) => {
    expect(packagesReachedFrom(entry).has('fast-check')).toBe(loadsFastCheck)
  })
})
