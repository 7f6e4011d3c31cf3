import { describe, expect, test, vi } from 'vitest'
import { deny } from '../../src/decisions/decision.js'
import type { DatasetLevel, WorkflowLevel } from '../../src/decisions/levels.js'
import type { DatasetResource, Resource, WorkflowResource } from '../../src/decisions/resources.js'
import { parseScopes } from '../../src/decisions/scopes.js'
import { InvalidArgumentError } from '../../src/errors.js'
import { calledTools, createMcpGate, type McpAuthInfo, type McpGate } from '../../src/mcp/gate.js'
import { type McpAnswer, toolDenial, toolResult } from '../../src/mcp/tool-results.js'
import {
  accumulatedScope,
  checkToolOperations,
  MCP_TOOL_OPERATIONS,
  reduceScopes,
  toolScope,
} from '../../src/mcp/tools.js'
import { createAccessPolicy } from '../../src/policy.js'
import { compileExportRestrictions } from '../../src/restrictions/export-restrictions.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createApiToken, createOAuthToken } from '../../src/tokens/token-record.js'

const NOW = Date.parse('2026-11-22T12:00:00Z')
const RESOURCE = 'https://data.example.org/mcp'
const METADATA = 'https://data.example.org/.well-known/oauth-protected-resource/mcp'

async function setup(scopes: string, audience: readonly string[] = [RESOURCE]) {
  const tokens = new MemoryTokenStore({ now: () => NOW })
  const { record, value } = createOAuthToken({
    userId: 'alice',
    scopes,
    clientId: 'agent',
    audience,
    now: NOW - 1,
  })
  await tokens.save(record)
  const onError = vi.fn()
  const policy = createAccessPolicy({ tokens, now: () => NOW, resource: RESOURCE, onError })
  return { gate: createMcpGate({ policy }), value, onError, policy }
}

const request = (authorization: readonly string[], body: unknown) => ({
  authorization,
  protocol: 'https',
  clientAddress: '203.0.113.7',
  body,
})
const callOf = (name: string, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
})

describe('the tool map', () => {
  test.each([
    ['list_datasets', 'data.overview'],
    ['get_dataset', 'data.overview'],
    ['get_dataset_metadata', 'data.metadata'],
    ['read_table_rows', 'data.data'],
    ['get_workflow', 'wokflow.read'],
    ['unknown_tool', undefined],
    ['toString', undefined],
  ])('%s needs %s', (tool, scope) => {
    expect(toolScope(MCP_TOOL_OPERATIONS, tool)).toBe(scope)
  })

  test('an unchecked map naming no operation needs no scope', () => {
    expect(toolScope({ x: 'bogus' as never }, 'x')).toBeUndefined()
  })

  test('a host extends it; a bad entry is refused naming the tool', () => {
    expect(checkToolOperations({ ...MCP_TOOL_OPERATIONS, run: 'workflow.run' }).run).toBe('workflow.run')
    expect(() => checkToolOperations({ run: 'workflow.go' as never })).toThrow(InvalidArgumentError)
    expect(() => checkToolOperations({ run: 'workflow.go' as never })).toThrow('tools["run"]')
    expect(() => checkToolOperations({ '': 'workflow.run' })).toThrow('tools[""]')
    expect(() => checkToolOperations(null as never)).toThrow('tools must be an object')
    expect(() => checkToolOperations([] as never)).toThrow('tools must be an object')
  })

  test.each([
    ['data.overview data.data wokflow.read', [], 'data.data wokflow.read'],
    ['public', ['data.metadata'], 'data.metadata'],
    ['data.overview', ['wokflow.read'], 'data.overview wokflow.read'],
    ['data.data', ['data.overview'], 'data.data'],
  ] as const)('held %s + needed %j → %s', (held, needed, expected) => {
    expect(accumulatedScope(parseScopes(held), needed)).toBe(expected)
    expect(reduceScopes(parseScopes(expected)).join(' ')).toBe(expected)
  })

  test.each([
    [callOf('get_dataset'), ['get_dataset']],
    [
      [callOf('get_dataset'), callOf('get_workflow', 2), { method: 'tools/list' }],
      ['get_dataset', 'get_workflow'],
    ],
    [{ method: 'tools/call', params: { name: 7 } }, []],
    [{ method: 'tools/call' }, []],
    [[null, 'x', 3], []],
    [undefined, []],
  ])('calledTools(%j) → %j', (body, names) => {
    expect(calledTools(body)).toEqual(names)
  })
})

describe('the HTTP check', () => {
  test('no token: 401 naming the metadata and the scope the first request needs', async () => {
    const { gate } = await setup('data.overview')
    for (const [body, scope] of [
      [{ method: 'initialize' }, 'data.overview'],
      [callOf('a_tool_of_no_map'), 'data.overview'],
      [callOf('read_table_rows'), 'data.data'],
      [[callOf('get_dataset'), callOf('get_workflow', 2)], 'data.overview wokflow.read'],
    ] as const) {
      const checked = await gate.check(request([], body))
      expect(checked.ok).toBe(false)
      if (checked.ok) continue
      expect(checked.denial.status).toBe(401)
      expect(checked.denial.headers['www-authenticate']).toBe(
        `Bearer realm="data-api", scope="${scope}", resource_metadata="${METADATA}"`,
      )
    }
  })

  test('other refusals of the policy pass unchanged, without scope', async () => {
    const { gate, value } = await setup('data.data')
    const twice = await gate.check(request([`Bearer ${value}`, `Bearer ${value}`], callOf('get_dataset')))
    expect(twice.ok ? 200 : twice.denial.status).toBe(400)
    const plain = await gate.check({
      ...request([`Bearer ${value}`], callOf('get_dataset')),
      protocol: 'http',
    })
    expect(plain.ok ? 200 : plain.denial.status).toBe(403)
    expect(plain.ok ? '' : plain.denial.headers['www-authenticate']).toBeUndefined()
  })

  test('a policy without resource: no metadata in the step-up, no resource in AuthInfo', async () => {
    const tokens = new MemoryTokenStore({ now: () => NOW })
    const { record, value } = createApiToken({
      userId: 'bob',
      name: 'ci',
      scopes: 'data.overview',
      now: NOW - 1,
    })
    await tokens.save(record)
    const gate = createMcpGate({ policy: createAccessPolicy({ tokens, now: () => NOW }) })
    const stepped = await gate.check(request([`Bearer ${value}`], callOf('read_table_rows')))
    expect(stepped.ok ? '' : stepped.denial.headers['www-authenticate']).toBe(
      'Bearer realm="data-api", error="insufficient_scope", scope="data.data"',
    )
    const anonymous = await gate.check(request([], callOf('get_dataset')))
    expect(anonymous.ok ? '' : anonymous.denial.headers['www-authenticate']).toBe(
      'Bearer realm="data-api", scope="data.overview"',
    )
    const passed = await gate.check(request([`Bearer ${value}`], callOf('get_dataset')))
    expect(passed.ok && passed.authInfo).toMatchObject({ clientId: '', extra: { userId: 'bob' } })
    expect(passed.ok && 'resource' in passed.authInfo).toBe(false)
  })

  test('a token for another resource: 401 invalid_token', async () => {
    const { gate, value } = await setup('data.data', ['https://data.example.org/api/v1'])
    const checked = await gate.check(request([`Bearer ${value}`], { method: 'initialize' }))
    expect(checked.ok ? 200 : checked.denial.status).toBe(401)
    expect(checked.ok ? '' : checked.denial.headers['www-authenticate']).toContain('error="invalid_token"')
  })

  test('a call the scopes do not cover: 403 insufficient_scope naming what to hold', async () => {
    const { gate, value } = await setup('data.overview')
    const checked = await gate.check(
      request([`Bearer ${value}`], [callOf('get_dataset'), callOf('get_workflow', 2)]),
    )
    expect(checked.ok).toBe(false)
    if (checked.ok) return
    expect(checked.denial.status).toBe(403)
    expect(checked.denial.headers['www-authenticate']).toBe(
      `Bearer realm="data-api", error="insufficient_scope", scope="data.overview wokflow.read", resource_metadata="${METADATA}"`,
    )
    expect(JSON.parse(checked.denial.body)).toEqual({
      error: { status: 403, message: 'Not authorized', code: 'insufficient_scope' },
    })
  })

  test('the anonymous caller asked for a scope gets a 401, not a step-up', async () => {
    const tokens = new MemoryTokenStore()
    const policy = createAccessPolicy({ tokens, resource: RESOURCE, allowAnonymous: true })
    const gate = createMcpGate({ policy, resourceMetadata: METADATA })
    const checked = await gate.check(request([], callOf('get_dataset')))
    expect(checked.ok ? 200 : checked.denial.status).toBe(401)
    const listing = await gate.check(request([], { method: 'tools/list' }))
    expect(listing.ok).toBe(true)
  })

  test('a covered call passes with the caller as AuthInfo, never the token value', async () => {
    const { gate, value } = await setup('data.data wokflow.read')
    const checked = await gate.check(request([`Bearer ${value}`], callOf('read_table_rows')))
    expect(checked.ok).toBe(true)
    if (!checked.ok) return
    expect(checked.authInfo).toMatchObject({
      token: '',
      clientId: 'agent',
      scopes: ['public', 'data.data', 'wokflow.read'],
      resource: new URL(RESOURCE),
      extra: { userId: 'alice' },
    })
    expect(JSON.stringify(checked.authInfo)).not.toContain(value)
  })
})

const dataset = (
  publicLevel: DatasetResource['publicLevel'],
  userLevel: DatasetLevel,
  restrictions?: object,
): DatasetResource => ({
  kind: 'dataset',
  publicLevel,
  userLevel,
  ...(restrictions === undefined ? {} : { exportRestrictions: compileExportRestrictions(restrictions) }),
})
const workflow = (
  publicLevel: WorkflowResource['publicLevel'],
  userLevel: WorkflowLevel,
): WorkflowResource => ({
  kind: 'workflow',
  publicLevel,
  userLevel,
})

// Each tool on a resource the user may read (allowed), one the token's scopes fall short on
// (scope-denied), one hidden from the user, one that does not exist, and one the user's own level
// falls short on (level-denied). A token with no scope of the tool's family sees nothing of what
// the public may not see, so its scope denial reads as not found (as the REST route's 404); a tool
// whose need is its family's narrowest scope cannot be level-denied on a visible resource. The token holds each tool's own scope only, as the HTTP check
// guarantees, except for the scope-denied case.
const CASES: ReadonlyArray<readonly [string, string, string, Resource | undefined, string]> = [
  ['list_datasets', 'allowed', 'data.overview', dataset('none', 'overview'), 'json'],
  ['list_datasets', 'hidden', 'data.overview', dataset('none', 'none'), 'Not found'],
  ['list_datasets', 'not found', 'data.overview', undefined, 'Not found'],
  ['list_datasets', 'scope-denied', 'wokflow.read', dataset('none', 'edit'), 'Not found'],
  ['get_dataset', 'allowed', 'data.overview', dataset('overview', 'none'), 'json'],
  ['get_dataset', 'hidden', 'data.overview', dataset('none', 'none'), 'Not found'],
  ['get_dataset', 'not found', 'data.overview', undefined, 'Not found'],
  ['get_dataset', 'scope-denied', 'wokflow.read', dataset('none', 'edit'), 'Not found'],
  ['get_dataset_metadata', 'allowed', 'data.metadata', dataset('none', 'metadata'), 'json'],
  ['get_dataset_metadata', 'hidden', 'data.metadata', dataset('none', 'none'), 'Not found'],
  ['get_dataset_metadata', 'not found', 'data.metadata', undefined, 'Not found'],
  ['get_dataset_metadata', 'scope-denied', 'data.overview', dataset('none', 'edit'), 'Not authorized'],
  ['get_dataset_metadata', 'level-denied', 'data.metadata', dataset('none', 'overview'), 'Not authorized'],
  ['read_table_rows', 'allowed', 'data.data', dataset('none', 'data'), 'json'],
  ['read_table_rows', 'hidden', 'data.data', dataset('none', 'none'), 'Not found'],
  ['read_table_rows', 'not found', 'data.data', undefined, 'Not found'],
  ['read_table_rows', 'scope-denied', 'data.metadata', dataset('none', 'edit'), 'Not authorized'],
  ['read_table_rows', 'level-denied', 'data.data', dataset('metadata', 'metadata'), 'Not authorized'],
  ['get_workflow', 'allowed', 'wokflow.read', workflow('none', 'read'), 'json'],
  ['get_workflow', 'hidden', 'wokflow.read', workflow('none', 'none'), 'Not found'],
  ['get_workflow', 'not found', 'wokflow.read', undefined, 'Not found'],
  ['get_workflow', 'scope-denied', 'data.data', workflow('none', 'write'), 'Not found'],
  ['get_workflow', 'level-denied', 'wokflow.read', workflow('read', 'none'), 'json'],
]

// The steps as the tests write them: a resolver and an answer that ignore the principal.
function callTool(
  gate: McpGate,
  authInfo: unknown,
  tool: string,
  resolve: () => Resource | undefined,
  answer: () => McpAnswer,
) {
  return gate.call(authInfo, tool, { resolve, answer })
}

async function authInfoFor(scopes: string) {
  const { gate, value, onError, policy } = await setup(scopes)
  const checked = await gate.check(request([`Bearer ${value}`], { method: 'tools/list' }))
  if (!checked.ok) throw new Error('expected the check to pass')
  return { gate, authInfo: checked.authInfo, onError, policy }
}

describe('each tool call, decided and translated', () => {
  test.each(CASES)('%s, %s (token %s) → %s', async (tool, _case, scopes, resource, expected) => {
    const { gate, authInfo } = await authInfoFor(scopes)
    const result = await callTool(
      gate,
      authInfo,
      tool,
      () => resource,
      () => ({ value: { ok: true }, records: 1 }),
    )
    if (expected === 'json') expect(result).toEqual({ content: [{ type: 'text', text: '{"ok":true}' }] })
    else expect(result).toEqual({ content: [{ type: 'text', text: expected }], isError: true })
  })

  test('hidden and missing read the same, byte for byte', async () => {
    const { gate, authInfo } = await authInfoFor('data.data')
    const answer = () => ({ value: {}, records: 0 })
    const hidden = await callTool(gate, authInfo, 'read_table_rows', () => dataset('none', 'none'), answer)
    const missing = await callTool(gate, authInfo, 'read_table_rows', () => undefined, answer)
    expect(JSON.stringify(hidden)).toBe(JSON.stringify(missing))
  })

  test('an answer of undefined (a missing table of a readable dataset) is Not found', async () => {
    const { gate, authInfo } = await authInfoFor('data.data')
    expect(
      await callTool(
        gate,
        authInfo,
        'read_table_rows',
        () => dataset('none', 'data'),
        () => undefined,
      ),
    ).toEqual(toolDenial(deny('not_found')))
  })

  test('export caps are measured on the text returned: records and bytes', async () => {
    const { gate, authInfo } = await authInfoFor('data.data')
    const capped = dataset('none', 'data', { maxRecords: 2, maxBytes: 40 })
    const rows = (n: number) => () => ({
      value: { rows: Array.from({ length: n }, (_, i) => i) },
      records: n,
    })
    expect((await callTool(gate, authInfo, 'read_table_rows', () => capped, rows(2))).isError).toBeUndefined()
    expect(await callTool(gate, authInfo, 'read_table_rows', () => capped, rows(3))).toEqual(
      toolDenial(deny('export_restricted')),
    )
    const wide = () => ({ value: { text: 'x'.repeat(40) }, records: 1 })
    expect((await callTool(gate, authInfo, 'read_table_rows', () => capped, wide)).content[0]!.text).toBe(
      'Not authorized',
    )
  })

  test('the client address reaches the export allow-list', async () => {
    const { gate, authInfo } = await authInfoFor('data.data')
    const answer = () => ({ value: [], records: 0 })
    const listed = dataset('none', 'data', { allowedIps: ['203.0.113.0/24'] })
    const elsewhere = dataset('none', 'data', { allowedIps: ['198.51.100.0/24'] })
    expect((await callTool(gate, authInfo, 'read_table_rows', () => listed, answer)).isError).toBeUndefined()
    expect(
      (await callTool(gate, authInfo, 'read_table_rows', () => elsewhere, answer)).content[0]!.text,
    ).toBe('Not authorized')
  })

  test('fails closed: an AuthInfo the gate did not make, an unmapped tool, a failing resolver or answer', async () => {
    const { gate, authInfo, onError } = await authInfoFor('data.data')
    const forged: McpAuthInfo = { ...authInfo }
    const allowed = () => dataset('public' as never, 'data')
    const answer = () => ({ value: 1, records: 1 })
    expect((await callTool(gate, forged, 'get_dataset', allowed, answer)).content[0]!.text).toBe(
      'Invalid credentials',
    )
    expect((await callTool(gate, undefined, 'get_dataset', allowed, answer)).content[0]!.text).toBe(
      'Invalid credentials',
    )
    expect((await callTool(gate, authInfo, 'delete_all', allowed, answer)).content[0]!.text).toBe(
      'Not authorized',
    )
    const broken = () => {
      throw new Error('db down')
    }
    expect((await callTool(gate, authInfo, 'get_dataset', broken, answer)).content[0]!.text).toBe(
      'Service unavailable',
    )
    expect(
      (await callTool(gate, authInfo, 'get_dataset', () => dataset('none', 'data'), broken)).content[0]!.text,
    ).toBe('Service unavailable')
    const uncounted = () => ({ value: [] })
    expect(
      (await callTool(gate, authInfo, 'read_table_rows', () => dataset('none', 'data'), uncounted))
        .content[0]!.text,
    ).toBe('Service unavailable')
    expect(onError).toHaveBeenCalledTimes(3)
  })

  test('toolResult sends a value JSON cannot express as null', async () => {
    const { policy } = await setup('data.data')
    const allow = policy.authorize(
      { kind: 'anonymous', scopes: parseScopes([]) },
      'dataset.overview',
      dataset('overview', 'none'),
    )
    expect(await toolResult(policy, allow, () => ({ value: undefined }))).toEqual({
      content: [{ type: 'text', text: 'null' }],
    })
  })

  test('resolve and answer receive the authenticated caller', async () => {
    const { gate, authInfo } = await authInfoFor('data.metadata')
    const seen: string[] = []
    const result = await gate.call(authInfo, 'get_dataset_metadata', {
      resolve: (principal) => {
        seen.push(`resolve ${principal.userId}`)
        return dataset('none', 'metadata')
      },
      answer: (principal) => {
        seen.push(`answer ${principal.userId}`)
        return { value: 'ok' }
      },
    })
    expect(result.isError).toBeUndefined()
    expect(seen).toEqual(['resolve alice', 'answer alice'])
  })

  test('without a resolver: a listing answers, a data-content tool is refused', async () => {
    const { gate, authInfo } = await authInfoFor('data.data')
    const answer = () => ({ value: [], records: 0 })
    expect(await gate.call(authInfo, 'list_datasets', { answer })).toEqual({
      content: [{ type: 'text', text: '[]' }],
    })
    expect((await gate.call(authInfo, 'read_table_rows', { answer })).content[0]!.text).toBe('Not authorized')
  })
})
