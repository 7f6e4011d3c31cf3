import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  formatScopes,
  impliedScopes,
  isScope,
  isScopeSet,
  parseScopes,
  SCOPES,
  type Scope,
  ScopeSet,
  scopeSetOf,
} from '../../src/decisions/scopes.js'
import { ScopeError } from '../../src/errors.js'

// The contract's scope table (§2), row by row, in its order.
const CONTRACT_SCOPES = [
  'public',
  'data.overview',
  'data.metadata',
  'data.data',
  'data.edit',
  'wokflow.read',
  'workflow.write',
  'organization.read',
  'organization.write',
]

describe('the contract scope table', () => {
  test('lists exactly the nine names in contract order', () => {
    expect([...SCOPES]).toEqual(CONTRACT_SCOPES)
  })

  test.each(CONTRACT_SCOPES)('%s parses and always brings public', (scope) => {
    const set = parseScopes(scope)
    expect(set.granted).toContain(scope)
    expect(set.granted[0]).toBe('public')
    expect(set.has('public')).toBe(true)
  })
})

describe('parseScopes', () => {
  test.each([
    ['', ['public']],
    ['public', ['public']],
    ['data.metadata', ['public', 'data.metadata']],
    ['data.metadata data.metadata', ['public', 'data.metadata']],
    ['organization.write data.overview public', ['public', 'data.overview', 'organization.write']],
    ['wokflow.read workflow.write', ['public', 'wokflow.read', 'workflow.write']],
  ])('%j → %j (duplicates collapse, contract order)', (input, granted) => {
    expect(parseScopes(input).granted).toEqual(granted)
  })

  test('accepts an array', () => {
    expect(parseScopes(['data.edit', 'public']).granted).toEqual(['public', 'data.edit'])
  })

  test.each([
    ['workflow.read', 'workflow.read', 'unknown scope "workflow.read"; did you mean "wokflow.read"?'],
    [
      'Data.Metadata',
      'Data.Metadata',
      'unknown scope "Data.Metadata"; scope names are case-sensitive: "data.metadata"',
    ],
    ['PUBLIC', 'PUBLIC', 'unknown scope "PUBLIC"; scope names are case-sensitive: "public"'],
    ['data.all', 'data.all', `unknown scope "data.all"; expected one of ${CONTRACT_SCOPES.join(', ')}`],
    ['data.metadata  data.data', '', 'scope names must not be empty'],
    [' data.data', '', 'scope names must not be empty'],
    ['data.data ', '', 'scope names must not be empty'],
    [
      'data.data\tdata.edit',
      'data.data\tdata.edit',
      'malformed scope "data.data\\tdata.edit": not an RFC 6749 scope-token',
    ],
    ['data"data', 'data"data', 'malformed scope "data\\"data": not an RFC 6749 scope-token'],
    ['données', 'données', 'malformed scope "données": not an RFC 6749 scope-token'],
  ])('rejects %j naming the entry', (input, entry, message) => {
    const error = captureScopeError(() => parseScopes(input))
    expect(error.code).toBe('ERR_INVALID_SCOPE')
    expect(error.entry).toBe(entry)
    expect(error.message).toBe(message)
  })

  test('rejects a non-string entry in an array', () => {
    const error = captureScopeError(() => parseScopes(['data.data', 7]))
    expect(error.message).toBe('scopes[1] must be a string, got number')
  })

  test('rejects input that is neither string nor array', () => {
    expect(() => parseScopes({} as unknown as string)).toThrow(
      expect.objectContaining({
        name: 'ScopeError',
        message: expect.stringContaining(
          'scopes must be a space-delimited string or an array of scope names',
        ),
      }),
    )
  })
})

describe('implication within a family only', () => {
  const cases: [Scope, Scope[]][] = [
    ['public', ['public']],
    ['data.overview', ['public', 'data.overview']],
    ['data.metadata', ['public', 'data.overview', 'data.metadata']],
    ['data.data', ['public', 'data.overview', 'data.metadata', 'data.data']],
    ['data.edit', ['public', 'data.overview', 'data.metadata', 'data.data', 'data.edit']],
    ['wokflow.read', ['public', 'wokflow.read']],
    ['workflow.write', ['public', 'wokflow.read', 'workflow.write']],
    ['organization.read', ['public', 'organization.read']],
    ['organization.write', ['public', 'organization.read', 'organization.write']],
  ]
  test.each(cases)('%s grants exactly %j', (scope, grants) => {
    const set = scopeSetOf(scope)
    for (const other of SCOPES) expect(set.has(other), other).toBe(grants.includes(other))
  })

  test('impliedScopes lists the narrower scopes of the family', () => {
    expect(impliedScopes('data.edit')).toEqual(['data.data', 'data.metadata', 'data.overview'])
    expect(impliedScopes('organization.read')).toEqual([])
  })

  // Issue 27: the lists are the module's own, so a caller must not be able to change them (a push
  // would make every later `data.metadata` grant whatever was pushed).
  test.each(SCOPES)('impliedScopes(%s) is frozen, and the narrowest scopes imply nothing', (scope) => {
    const implied = impliedScopes(scope)
    expect(Object.isFrozen(implied)).toBe(true)
    expect(() => (implied as Scope[]).push('data.edit')).toThrow(TypeError)
    expect(impliedScopes(scope)).not.toContain('data.edit')
    if (scope === 'public' || scope === 'data.overview' || scope.endsWith('.read')) {
      expect(implied).toEqual([])
    }
  })

  test('has() is false for names that are not scopes', () => {
    expect(parseScopes('data.edit').has('workflow.read' as Scope)).toBe(false)
  })
})

describe('ScopeSet', () => {
  test('formats as the OAuth scope string and as JSON', () => {
    const set = parseScopes('data.data wokflow.read')
    expect(formatScopes(set)).toBe('public data.data wokflow.read')
    expect(JSON.stringify(set)).toBe('["public","data.data","wokflow.read"]')
  })

  test('equals compares granted scopes', () => {
    expect(parseScopes('data.data').equals(parseScopes('public data.data'))).toBe(true)
    expect(parseScopes('data.data').equals(parseScopes('data.edit'))).toBe(false)
  })

  test('isScopeSet accepts the sets this module made, and nothing built to look like one', () => {
    expect(isScopeSet(parseScopes('data.data'))).toBe(true)
    expect(isScopeSet(scopeSetOf())).toBe(true)
    const lookAlike = Object.create(ScopeSet.prototype, { datasetCeiling: { value: 4 } })
    expect(lookAlike instanceof ScopeSet).toBe(true)
    for (const value of [
      lookAlike,
      { ...parseScopes('data.edit') },
      null,
      undefined,
      4,
      'data.edit',
      () => 0,
    ])
      expect(isScopeSet(value)).toBe(false)
  })

  test('isScope accepts exact names only', () => {
    expect(isScope('wokflow.read')).toBe(true)
    expect(isScope('workflow.read')).toBe(false)
    expect(isScope(3)).toBe(false)
  })
})

describe('design §10 invariant 8: parse(format(s)) == s', () => {
  test('round-trips every subset of the nine scopes', () => {
    fc.assert(
      fc.property(fc.subarray([...SCOPES]), (subset) => {
        const set = parseScopes(subset)
        const again = parseScopes(formatScopes(set))
        return again.equals(set) && formatScopes(again) === formatScopes(set)
      }),
      { numRuns: 1000, seed: 8 },
    )
  })
})

function captureScopeError(run: () => unknown): ScopeError {
  try {
    run()
  } catch (error) {
    if (error instanceof ScopeError) return error
    throw error
  }
  throw new Error('expected a ScopeError')
}
