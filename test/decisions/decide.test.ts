import { describe, expect, test } from 'vitest'
import { checkResponseSize, decide } from '../../src/decisions/decide.js'
import type { Allow, Decision } from '../../src/decisions/decision.js'
import {
  DATASET_LEVELS,
  type DatasetLevel,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  type PublicDatasetLevel,
  type PublicWorkflowLevel,
  WORKFLOW_LEVELS,
  type WorkflowLevel,
} from '../../src/decisions/levels.js'
import { OPERATION_NAMES, OPERATIONS } from '../../src/decisions/operations.js'
import { ANONYMOUS, type Principal } from '../../src/decisions/principal.js'
import type { Resource } from '../../src/decisions/resources.js'
import { parseScopes, ScopeSet } from '../../src/decisions/scopes.js'
import {
  combineRestrictions,
  compileExportRestrictions,
  type ExportRestrictions,
} from '../../src/restrictions/export-restrictions.js'

function principal(scopes: string): Principal {
  return { kind: 'token', userId: 'bob', scopes: parseScopes(scopes), tokenId: 't1', tokenKind: 'api' }
}

function dataset(publicLevel: PublicDatasetLevel, userLevel: DatasetLevel = 'none'): Resource {
  return { kind: 'dataset', publicLevel, userLevel }
}

function outcome(decision: Decision): string {
  if (decision.allowed) return 'allow'
  return decision.scope === undefined
    ? `${decision.status} ${decision.code}`
    : `${decision.status} ${decision.code} ${decision.scope}`
}

describe('the operation catalogue (design §3)', () => {
  test.each([
    ['dataset.list', 'dataset', 'overview', false],
    ['dataset.overview', 'dataset', 'overview', false],
    ['dataset.metadata', 'dataset', 'metadata', false],
    ['table.read', 'dataset', 'data', true],
    ['query.run', 'dataset', 'data', true],
    ['export.create', 'dataset', 'data', true],
    ['dataset.create', 'dataset', 'edit', false],
    ['dataset.update', 'dataset', 'edit', false],
    ['dataset.delete', 'dataset', 'edit', false],
    ['version.release', 'dataset', 'edit', false],
    ['workflow.read', 'workflow', 'read', false],
    ['workflow.write', 'workflow', 'write', false],
    ['workflow.run', 'workflow', 'write', false],
  ] as const)('%s needs %s level %s, data content: %s', (operation, kind, level, dataContent) => {
    expect(OPERATIONS[operation]).toEqual({ need: { kind, level }, dataContent })
  })

  test.each([
    ['organization.read', 'organization.read'],
    ['organization.write', 'organization.write'],
  ] as const)('%s needs the %s scope', (operation, scope) => {
    expect(OPERATIONS[operation]).toEqual({ need: { kind: 'organization', scope }, dataContent: false })
  })

  test('lists every operation', () => {
    expect(OPERATION_NAMES).toHaveLength(15)
  })
})

describe('datasets: effective = max(P, min(U, S))', () => {
  test.each([
    // each row of the operation table, on a dataset hidden from the public that the user can edit
    ['data.overview', 'none', 'edit', 'dataset.overview', 'allow'],
    ['data.overview', 'none', 'edit', 'dataset.list', 'allow'],
    ['data.overview', 'none', 'edit', 'dataset.metadata', '403 insufficient_scope data.metadata'],
    ['data.metadata', 'none', 'edit', 'dataset.metadata', 'allow'],
    ['data.metadata', 'none', 'edit', 'table.read', '403 insufficient_scope data.data'],
    ['data.data', 'none', 'edit', 'table.read', 'allow'],
    ['data.data', 'none', 'edit', 'query.run', 'allow'],
    ['data.data', 'none', 'edit', 'export.create', 'allow'],
    ['data.data', 'none', 'edit', 'dataset.update', '403 insufficient_scope data.edit'],
    ['data.edit', 'none', 'edit', 'dataset.update', 'allow'],
    ['data.edit', 'none', 'edit', 'dataset.create', 'allow'],
    ['data.edit', 'none', 'edit', 'dataset.delete', 'allow'],
    ['data.edit', 'none', 'edit', 'version.release', 'allow'],
    // 404 versus 403: existence is never revealed without overview
    ['public', 'none', 'edit', 'dataset.overview', '404 not_found'],
    ['public', 'none', 'edit', 'table.read', '404 not_found'],
    ['data.edit', 'none', 'none', 'dataset.overview', '404 not_found'],
    ['data.edit', 'none', 'none', 'dataset.update', '404 not_found'],
    ['wokflow.read organization.write', 'none', 'edit', 'dataset.overview', '404 not_found'],
    // visible, but the user's own level falls short: no scope would help
    ['data.edit', 'none', 'overview', 'dataset.metadata', '403 insufficient_access'],
    ['data.edit', 'none', 'metadata', 'table.read', '403 insufficient_access'],
    ['data.edit', 'none', 'data', 'dataset.update', '403 insufficient_access'],
    ['data.edit', 'overview', 'none', 'dataset.metadata', '403 insufficient_access'],
    // the public level is what a logged-out caller sees, whatever the token
    ['public', 'overview', 'none', 'dataset.overview', 'allow'],
    ['public', 'metadata', 'none', 'dataset.metadata', 'allow'],
    ['public', 'data', 'none', 'table.read', 'allow'],
    ['public', 'data', 'edit', 'dataset.update', '403 insufficient_scope data.edit'],
    ['public', 'overview', 'metadata', 'dataset.metadata', '403 insufficient_scope data.metadata'],
    // the user's level caps the scope ceiling
    ['data.edit', 'overview', 'metadata', 'dataset.metadata', 'allow'],
    ['data.edit', 'overview', 'metadata', 'table.read', '403 insufficient_access'],
    // implication within the data family
    ['data.edit', 'none', 'data', 'table.read', 'allow'],
    ['data.data', 'none', 'metadata', 'dataset.metadata', 'allow'],
  ] as const)(
    'scopes %j, public %s, user %s: %s → %s',
    (scopes, publicLevel, userLevel, operation, expected) => {
      const decision = decide({
        principal: principal(scopes),
        operation,
        resource: dataset(publicLevel, userLevel),
      })
      expect(outcome(decision)).toBe(expected)
    },
  )

  test('every 403 says Not authorized and every 404 Not found', () => {
    const forbidden = decide({
      principal: principal('data.overview'),
      operation: 'dataset.metadata',
      resource: dataset('none', 'edit'),
    })
    const missing = decide({
      principal: principal('public'),
      operation: 'dataset.metadata',
      resource: dataset('none', 'edit'),
    })
    expect(forbidden).toMatchObject({ allowed: false, status: 403, message: 'Not authorized' })
    expect(missing).toMatchObject({ allowed: false, status: 404, message: 'Not found' })
  })

  test('an allow says whether the response carries data content', () => {
    const read = decide({
      principal: principal('data.data'),
      operation: 'table.read',
      resource: dataset('none', 'data'),
    })
    const meta = decide({
      principal: principal('data.data'),
      operation: 'dataset.metadata',
      resource: dataset('none', 'data'),
    })
    expect(read).toEqual({ allowed: true, operation: 'table.read', dataContent: true })
    expect(meta).toEqual({ allowed: true, operation: 'dataset.metadata', dataContent: false })
  })
})

describe('workflows', () => {
  function workflow(publicLevel: PublicWorkflowLevel, userLevel: WorkflowLevel): Resource {
    return { kind: 'workflow', publicLevel, userLevel }
  }
  test.each([
    ['public', 'none', 'write', 'workflow.read', '404 not_found'],
    ['public', 'read', 'none', 'workflow.read', 'allow'],
    ['public', 'read', 'write', 'workflow.run', '403 insufficient_scope workflow.write'],
    ['wokflow.read', 'none', 'read', 'workflow.read', 'allow'],
    ['wokflow.read', 'none', 'write', 'workflow.write', '403 insufficient_scope workflow.write'],
    ['wokflow.read', 'none', 'none', 'workflow.read', '404 not_found'],
    ['workflow.write', 'none', 'write', 'workflow.write', 'allow'],
    ['workflow.write', 'none', 'write', 'workflow.run', 'allow'],
    ['workflow.write', 'none', 'write', 'workflow.read', 'allow'],
    ['workflow.write', 'none', 'read', 'workflow.run', '403 insufficient_access'],
    ['workflow.write', 'read', 'none', 'workflow.run', '403 insufficient_access'],
    ['data.edit', 'none', 'write', 'workflow.read', '404 not_found'],
  ] as const)(
    'scopes %j, public %s, user %s: %s → %s',
    (scopes, publicLevel, userLevel, operation, expected) => {
      expect(
        outcome(
          decide({ principal: principal(scopes), operation, resource: workflow(publicLevel, userLevel) }),
        ),
      ).toBe(expected)
    },
  )

  test('a workflow with no user level is decided on its public level alone (the user has none)', () => {
    const reader = principal('wokflow.read')
    const open: Resource = { kind: 'workflow', publicLevel: 'read' }
    const hidden: Resource = { kind: 'workflow', publicLevel: 'none' }
    expect(outcome(decide({ principal: reader, operation: 'workflow.read', resource: open }))).toBe('allow')
    expect(outcome(decide({ principal: reader, operation: 'workflow.read', resource: hidden }))).toBe(
      '404 not_found',
    )
  })
})

describe('organizations', () => {
  test.each([
    ['organization.read', true, 'organization.read', 'allow'],
    ['organization.write', true, 'organization.read', 'allow'],
    ['organization.write', true, 'organization.write', 'allow'],
    ['organization.read', true, 'organization.write', '403 insufficient_scope organization.write'],
    ['data.edit', true, 'organization.read', '403 insufficient_scope organization.read'],
    ['organization.write', false, 'organization.read', '403 insufficient_access'],
    ['organization.write', false, 'organization.write', '403 insufficient_access'],
  ] as const)('scopes %j, administered %s: %s → %s', (scopes, administered, operation, expected) => {
    expect(
      outcome(
        decide({ principal: principal(scopes), operation, resource: { kind: 'organization', administered } }),
      ),
    ).toBe(expected)
  })
})

describe('deny by default (design §10 invariant 1)', () => {
  const ok = principal('data.edit wokflow.read workflow.write organization.write')
  test.each([
    ['an unknown operation', { principal: ok, operation: 'dataset.read', resource: dataset('data', 'edit') }],
    [
      'an operation on the wrong kind',
      { principal: ok, operation: 'table.read', resource: { kind: 'workflow', publicLevel: 'read' } },
    ],
    [
      'an unknown resource kind',
      { principal: ok, operation: 'dataset.overview', resource: { kind: 'table', publicLevel: 'data' } },
    ],
    [
      'an unknown public level',
      { principal: ok, operation: 'dataset.overview', resource: { kind: 'dataset', publicLevel: 'all' } },
    ],
    [
      'the edit public level',
      { principal: ok, operation: 'dataset.overview', resource: { kind: 'dataset', publicLevel: 'edit' } },
    ],
    [
      'an unknown user level',
      {
        principal: ok,
        operation: 'dataset.overview',
        resource: { kind: 'dataset', publicLevel: 'none', userLevel: 'owner' },
      },
    ],
    [
      'an unknown workflow level',
      { principal: ok, operation: 'workflow.read', resource: { kind: 'workflow', publicLevel: 'write' } },
    ],
    [
      'a non-boolean administered',
      {
        principal: ok,
        operation: 'organization.read',
        resource: { kind: 'organization', administered: 'yes' },
      },
    ],
    ['a missing resource', { principal: ok, operation: 'dataset.overview', resource: null }],
    [
      'a principal without a ScopeSet',
      {
        principal: { kind: 'token', scopes: ['data.edit'] },
        operation: 'dataset.overview',
        resource: dataset('data'),
      },
    ],
    ['no principal', { principal: undefined, operation: 'dataset.overview', resource: dataset('data') }],
    ['no input at all', undefined],
  ])('%s is denied', (_name, input) => {
    const decision = decide(input as never)
    expect(decision).toMatchObject({ allowed: false, status: 403, code: 'invalid_input' })
  })
})

describe('the anonymous principal', () => {
  test('sees what the public sees', () => {
    expect(
      outcome(decide({ principal: ANONYMOUS, operation: 'dataset.metadata', resource: dataset('metadata') })),
    ).toBe('allow')
    expect(
      outcome(
        decide({ principal: ANONYMOUS, operation: 'dataset.overview', resource: dataset('none', 'edit') }),
      ),
    ).toBe('404 not_found')
  })
})

describe('checkResponseSize', () => {
  const limited: Allow = {
    allowed: true,
    operation: 'table.read',
    dataContent: true,
    limits: { maxRecords: 3, maxBytes: 10 },
  }
  test.each([
    [{ records: 3, bytes: 10 }, 'allow'],
    [{ records: 4 }, '403 export_restricted'],
    [{ bytes: 11 }, '403 export_restricted'],
    [{ records: -1 }, '403 export_restricted'],
    [{ records: 1.5 }, '403 export_restricted'],
    [{ records: Number.NaN }, '403 export_restricted'],
    [{}, 'allow'],
  ])('%j → %s', (size, expected) => {
    expect(outcome(checkResponseSize(limited, size))).toBe(expected)
  })

  test('an allow without limits passes any size', () => {
    const plain: Allow = { allowed: true, operation: 'table.read', dataContent: true }
    expect(checkResponseSize(plain, { records: 1e9 })).toBe(plain)
  })
})

describe('export restrictions in the decision (contract §7, §8; design §5)', () => {
  const reader = principal('data.data')
  const restricted = (input: object): Resource => ({
    kind: 'dataset',
    publicLevel: 'none',
    userLevel: 'data',
    exportRestrictions: compileExportRestrictions(input),
  })

  test.each([
    [
      'an allowed address',
      { allowedIps: ['10.0.0.0/8'] },
      'table.read',
      { clientAddress: '10.1.2.3' },
      'allow',
    ],
    [
      'an address outside the list',
      { allowedIps: ['10.0.0.0/8'] },
      'table.read',
      { clientAddress: '11.0.0.1' },
      '403 export_restricted',
    ],
    ['no address at all', { allowedIps: ['10.0.0.0/8'] }, 'query.run', {}, '403 export_restricted'],
    [
      'an unparsable address',
      { allowedIps: ['10.0.0.0/8'] },
      'export.create',
      { clientAddress: '10.1.2.3:80' },
      '403 export_restricted',
    ],
    [
      'an empty allow-list',
      { allowedIps: [] },
      'table.read',
      { clientAddress: '10.1.2.3' },
      '403 export_restricted',
    ],
    ['maxRecords 0', { maxRecords: 0 }, 'table.read', {}, '403 export_restricted'],
    ['maxBytes 0', { maxBytes: 0 }, 'export.create', {}, '403 export_restricted'],
    ['N records', { maxRecords: 10 }, 'table.read', { size: { records: 10 } }, 'allow'],
    ['N+1 records', { maxRecords: 10 }, 'table.read', { size: { records: 11 } }, '403 export_restricted'],
    ['N bytes', { maxBytes: 100 }, 'export.create', { size: { bytes: 100 } }, 'allow'],
    ['N+1 bytes', { maxBytes: 100 }, 'export.create', { size: { bytes: 101 } }, '403 export_restricted'],
    [
      'metadata from outside the list',
      { allowedIps: [], maxRecords: 0 },
      'dataset.metadata',
      { clientAddress: '11.0.0.1' },
      'allow',
    ],
    ['overview with no address', { allowedIps: ['10.0.0.0/8'] }, 'dataset.overview', {}, 'allow'],
  ] as const)('%s: %s → %s', (_name, input, operation, request, expected) => {
    const decision = decide({ principal: reader, operation, resource: restricted(input), request })
    expect(outcome(decision)).toBe(expected)
  })

  test.each([
    // No request facts at all: caps alone need none (the meter enforces an undeclared size).
    ['both caps', { maxRecords: 5, maxBytes: 50 }, undefined, { limits: { maxRecords: 5, maxBytes: 50 } }],
    ['a byte cap only', { maxBytes: 50 }, undefined, { limits: { maxBytes: 50 } }],
    ['a record cap only', { maxRecords: 5 }, undefined, { limits: { maxRecords: 5 } }],
    [
      'an allow-list only: nothing to meter',
      { allowedIps: ['10.0.0.0/8'] },
      { clientAddress: '10.1.2.3' },
      {},
    ],
  ])(
    'an allowed data-content decision carries exactly the caps to enforce: %s',
    (_name, input, request, caps) => {
      const resource = restricted(input)
      const decision = decide(
        request === undefined
          ? { principal: reader, operation: 'table.read', resource }
          : { principal: reader, operation: 'table.read', resource, request },
      )
      // Exactly these keys: an adapter meters every cap present, so an empty one must not appear.
      expect(decision).toStrictEqual({ allowed: true, operation: 'table.read', dataContent: true, ...caps })
    },
  )

  test('an allow under caps is made once per operation and restrictions, then shared', () => {
    const restrictions = compileExportRestrictions({ maxRecords: 7 })
    const resource: Resource = { kind: 'dataset', publicLevel: 'data', exportRestrictions: restrictions }
    const allows = (['table.read', 'query.run', 'export.create'] as const).map((operation) => {
      const first = decide({ principal: reader, operation, resource })
      // The same frozen value the second time: an allowed export allocates nothing.
      expect(decide({ principal: reader, operation, resource })).toBe(first)
      expect(first).toStrictEqual({ allowed: true, operation, dataContent: true, limits: { maxRecords: 7 } })
      expect(Object.isFrozen(first)).toBe(true)
      return first
    })
    // Each operation its own: one restrictions' allows never answer for another operation.
    expect(new Set(allows).size).toBe(3)
    // Other restrictions with other caps get their own allow, never the first one's.
    const other: Resource = { ...resource, exportRestrictions: compileExportRestrictions({ maxBytes: 9 }) }
    expect(decide({ principal: reader, operation: 'table.read', resource: other })).toStrictEqual({
      allowed: true,
      operation: 'table.read',
      dataContent: true,
      limits: { maxBytes: 9 },
    })
  })

  test.each([
    ['a record cap of 0', { maxRecords: 0 }],
    ['a byte cap of 0 beside a record cap', { maxBytes: 0, maxRecords: 5 }],
  ])('%s refuses an export that declares no size, with no request facts at all', (_name, input) => {
    const resource = restricted(input)
    expect(outcome(decide({ principal: reader, operation: 'query.run', resource }))).toBe(
      '403 export_restricted',
    )
    expect(
      outcome(
        decide({ principal: reader, operation: 'query.run', resource, request: { size: { records: 0 } } }),
      ),
    ).toBe('403 export_restricted')
  })

  test('combined restrictions keep a cap of 0 that one of them has', () => {
    const resource: Resource = {
      kind: 'dataset',
      publicLevel: 'data',
      exportRestrictions: combineRestrictions(
        compileExportRestrictions({ maxRecords: 5 }),
        compileExportRestrictions({ maxRecords: 0 }),
      ),
    }
    expect(outcome(decide({ principal: reader, operation: 'table.read', resource }))).toBe(
      '403 export_restricted',
    )
  })

  test.each([null, 5, 'maxRecords=5', true])(
    'restrictions that are not an object (%j) are denied, never a throw',
    (exportRestrictions) => {
      const resource = { kind: 'dataset', publicLevel: 'data', exportRestrictions } as never
      expect(outcome(decide({ principal: reader, operation: 'export.create', resource }))).toBe(
        '403 export_restricted',
      )
    },
  )

  test('restrictions inheriting or copying compiled ones are raw input: denied, and the originals keep their caps', () => {
    const compiled = compileExportRestrictions({ maxRecords: 5 })
    const inheriting = Object.create(compiled, { maxRecords: { value: 1e9 } }) as ExportRestrictions
    const copied = Object.defineProperties(
      {},
      { ...Object.getOwnPropertyDescriptors(compiled), maxRecords: { value: undefined, enumerable: true } },
    ) as ExportRestrictions
    for (const exportRestrictions of [inheriting, copied]) {
      const resource: Resource = { kind: 'dataset', publicLevel: 'data', exportRestrictions }
      expect(outcome(decide({ principal: reader, operation: 'export.create', resource }))).toBe(
        '403 export_restricted',
      )
    }
    const resource: Resource = { kind: 'dataset', publicLevel: 'data', exportRestrictions: compiled }
    expect(decide({ principal: reader, operation: 'export.create', resource })).toMatchObject({
      allowed: true,
      limits: { maxRecords: 5 },
    })
  })

  test('the state compiled restrictions carry is frozen and offers no way to plant an allow', () => {
    const compiled = compileExportRestrictions({ maxRecords: 5 })
    const [symbol] = Object.getOwnPropertySymbols(compiled)
    const state = (compiled as unknown as Record<symbol, object>)[symbol!]!
    expect(Object.isFrozen(state)).toBe(true)
    // Nothing callable on the state or its class: the kept allows are private to the module.
    const reachable = [
      ...Object.getOwnPropertyNames(Object.getPrototypeOf(state)),
      ...Object.getOwnPropertyNames(state.constructor),
    ].filter(
      (name) =>
        typeof (state as Record<string, unknown>)[name] === 'function' ||
        typeof (state.constructor as unknown as Record<string, unknown>)[name] === 'function',
    )
    expect(reachable).toEqual(['constructor'])
    const resource: Resource = { kind: 'dataset', publicLevel: 'data', exportRestrictions: compiled }
    expect(decide({ principal: reader, operation: 'table.read', resource })).toStrictEqual({
      allowed: true,
      operation: 'table.read',
      dataContent: true,
      limits: { maxRecords: 5 },
    })
  })

  test.each([
    ['a ScopeSet-like object without ceilings', () => Object.create(ScopeSet.prototype) as ScopeSet],
    [
      'an object built on the ScopeSet prototype that declares the highest ceilings',
      () =>
        Object.create(ScopeSet.prototype, {
          datasetCeiling: { value: 4 },
          workflowCeiling: { value: 2 },
          organizationCeiling: { value: 2 },
        }) as ScopeSet,
    ],
  ])('a principal with %s is denied, never allowed', (_name, scopes) => {
    const forged = { kind: 'token', scopes: scopes() } as Principal
    for (const operation of ['table.read', 'dataset.delete'] as const)
      for (const publicLevel of ['none', 'data'] as const)
        expect(
          decide({
            principal: forged,
            operation,
            resource: { kind: 'dataset', publicLevel, userLevel: 'edit' },
          }).allowed,
        ).toBe(false)
    expect(Object.isFrozen(parseScopes('data.data'))).toBe(true)
  })

  test.each([
    [
      'a resource whose level getter throws',
      () => ({
        kind: 'dataset',
        publicLevel: 'data',
        get userLevel(): never {
          throw new Error('lookup failed')
        },
      }),
    ],
    [
      'a resource Proxy that throws on every read',
      () =>
        new Proxy(
          {},
          {
            get() {
              throw new Error('revoked')
            },
          },
        ),
    ],
    [
      'a revoked Proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({ kind: 'dataset', publicLevel: 'data' }, {})
        revoke()
        return proxy
      },
    ],
  ])('%s is 403 invalid_input, never a throw', (_name, resource) => {
    const input = { principal: reader, operation: 'table.read', resource: resource() as Resource } as const
    expect(outcome(decide(input))).toBe('403 invalid_input')
  })

  test('the user level is read once: a getter cannot answer garbage to the check and a level to the rule', () => {
    const answers = ['bogus', 'edit']
    let reads = 0
    const resource = {
      kind: 'dataset',
      publicLevel: 'none',
      get userLevel() {
        return answers[reads++]
      },
    } as Resource
    expect(
      outcome(decide({ principal: principal('data.edit'), operation: 'dataset.delete', resource })),
    ).toBe('403 invalid_input')
    expect(reads).toBe(1)
  })

  test('raw, uncompiled restrictions are denied rather than trusted', () => {
    const resource = {
      kind: 'dataset',
      publicLevel: 'data',
      exportRestrictions: { allowedIps: ['0.0.0.0/0'] },
    } as never
    expect(
      outcome(
        decide({
          principal: reader,
          operation: 'table.read',
          resource,
          request: { clientAddress: '1.2.3.4' },
        }),
      ),
    ).toBe('403 export_restricted')
  })

  test('scope and visibility are decided before restrictions: no leak of restricted existence', () => {
    const decision = decide({
      principal: principal('public'),
      operation: 'table.read',
      resource: restricted({ allowedIps: [] }),
    })
    expect(outcome(decision)).toBe('404 not_found')
  })
})

describe('the compiled catalogue', () => {
  test('covers exactly the operation catalogue', async () => {
    const { compiledOperation } = await import('../../src/decisions/decide.js')
    for (const operation of OPERATION_NAMES) {
      expect(compiledOperation(operation)).toMatchObject({ operation, spec: OPERATIONS[operation] })
    }
    expect(compiledOperation('dataset.read')).toBeUndefined()
    expect(compiledOperation('toString')).toBeUndefined()
  })

  // decide ranks levels by position in levels.ts: every listed level must rank, in list order, and
  // nothing else; a level added to a list without a case in decide.ts fails here.
  test.each([
    [
      'dataset',
      DATASET_LEVELS,
      PUBLIC_DATASET_LEVELS,
      'data.edit',
      ['dataset.overview', 'dataset.metadata', 'table.read', 'dataset.update'],
    ],
    [
      'workflow',
      WORKFLOW_LEVELS,
      PUBLIC_WORKFLOW_LEVELS,
      'workflow.write',
      ['workflow.read', 'workflow.write'],
    ],
  ] as const)(
    'every %s level ranks in list order, public ones as public',
    (kind, levels, publicLevels, scope, byNeed) => {
      const owner = principal(scope)
      const outcomes = (publicLevel: string, userLevel: string) =>
        byNeed.map((operation) =>
          outcome(
            decide({ principal: owner, operation, resource: { kind, publicLevel, userLevel } as Resource }),
          ),
        )
      levels.forEach((userLevel, rank) => {
        const expected = byNeed.map((_, index) =>
          rank === 0 ? '404 not_found' : index + 1 <= rank ? 'allow' : '403 insufficient_access',
        )
        expect(outcomes('none', userLevel)).toEqual(expected)
        if (rank < publicLevels.length) expect(outcomes(userLevel, 'none')).toEqual(expected)
        else expect(outcomes(userLevel, 'none')).toEqual(byNeed.map(() => '403 invalid_input'))
      })
      expect(outcomes('none', 'admin')).toEqual(byNeed.map(() => '403 invalid_input'))
    },
  )
})

describe('checkResponseSize and checkExportSize share one size rule', () => {
  test('a cap of 0 refuses even a declared empty response', () => {
    const zero: Allow = {
      allowed: true,
      operation: 'table.read',
      dataContent: true,
      limits: { maxRecords: 0 },
    }
    expect(checkResponseSize(zero, { records: 0 })).toMatchObject({
      allowed: false,
      code: 'export_restricted',
    })
  })
})
