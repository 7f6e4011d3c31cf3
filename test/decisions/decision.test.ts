import { describe, expect, test } from 'vitest'
import { DENY_STATUS, type DenyCode, deny } from '../../src/decisions/decision.js'
import type { Scope } from '../../src/decisions/scopes.js'

const CODES = Object.keys(DENY_STATUS) as DenyCode[]

describe('deny: one shared, frozen denial per code and scope', () => {
  test.each(CODES)('%s without a scope is one value, with its status and no scope', (code) => {
    const denial = deny(code)
    expect(deny(code)).toBe(denial)
    expect(Object.isFrozen(denial)).toBe(true)
    expect(denial).toMatchObject({ allowed: false, code, status: DENY_STATUS[code] })
    expect(Object.hasOwn(denial, 'scope')).toBe(false)
  })

  test('each scope has its own denial, shared by every call that names it', () => {
    const data = deny('insufficient_scope', 'data.data')
    expect(deny('insufficient_scope', 'data.data')).toBe(data)
    expect(deny('insufficient_scope', 'data.metadata')).not.toBe(data)
    expect(deny('insufficient_scope', 'data.metadata').scope).toBe('data.metadata')
    expect(deny('insufficient_access', 'data.data')).toMatchObject({
      code: 'insufficient_access',
      scope: 'data.data',
    })
  })

  // A scope outside the type (a host's cast, a caller in plain JavaScript) cannot make the key of a
  // denial without one, nor of another scope's.
  test.each([['undefined'], [''], [' '], ['insufficient_scope'], ['data.data ']])(
    'a scope spelled %j is kept apart from the denial without a scope',
    (odd) => {
      const scoped = deny('insufficient_scope', odd as Scope)
      expect(scoped.scope).toBe(odd)
      const plain = deny('insufficient_scope')
      expect(Object.hasOwn(plain, 'scope')).toBe(false)
      expect(deny('insufficient_scope', odd as Scope)).toBe(scoped)
      expect(deny('insufficient_scope', 'data.data').scope).toBe('data.data')
    },
  )
})
