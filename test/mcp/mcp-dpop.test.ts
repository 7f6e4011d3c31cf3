/**
 * The MCP adapters hand the gate what a DPoP proof (RFC 9449) is checked against: the `DPoP`
 * header values, the method and the request target (Express's `originalUrl` before a router's
 * mount path was stripped). Without them a DPoP-bound token could never pass `/mcp`.
 */
import { Hono } from 'hono'
import { describe, expect, test } from 'vitest'
import { mcpHono, nodeMcpRequest } from '../../adapters/mcp/index.js'
import { createMcpGate, type McpCheck } from '../../src/mcp/gate.js'
import { createAccessPolicy } from '../../src/policy.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { createOAuthToken } from '../../src/tokens/token-record.js'
import { dpopKey, dpopProof } from '../dpop/proofs.js'

const RESOURCE = 'https://data.example.org/mcp'
const ORIGIN = { clientAddress: '127.0.0.1', protocol: 'https' } as const
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }

const challengeOf = (checked: McpCheck) =>
  checked.ok ? 'passed' : checked.denial.headers['www-authenticate']

async function setup() {
  const key = await dpopKey()
  const tokens = new MemoryTokenStore()
  const { record, value } = createOAuthToken({
    userId: 'alice',
    scopes: 'data.overview',
    clientId: 'agent',
    audience: [RESOURCE],
    dpopJkt: key.jkt,
    now: Date.now() - 1,
  })
  await tokens.save(record)
  const gate = createMcpGate({ policy: createAccessPolicy({ tokens, resource: RESOURCE }) })
  return { key, value, gate }
}

describe('nodeMcpRequest', () => {
  test('reads the proofs, the method and the target the proof names', async () => {
    const { key, value, gate } = await setup()
    const source = (dpop: string, method = 'POST') => ({
      headers: { authorization: `DPoP ${value}`, dpop, host: 'data.example.org' },
      rawHeaders: ['Authorization', `DPoP ${value}`, 'DPoP', dpop, 'Host', 'data.example.org'],
      method,
      // Behind an Express router mounted at /mcp: `url` lost the mount path, `originalUrl` kept it.
      url: '/',
      originalUrl: '/mcp',
    })
    const good = await dpopProof(key, { method: 'POST', url: RESOURCE, token: value })
    const read = nodeMcpRequest(source(good), ORIGIN, INITIALIZE)
    expect(read).toMatchObject({ dpop: [good], method: 'POST', host: 'data.example.org', target: '/mcp' })
    expect((await gate.check(read)).ok).toBe(true)
    const replayed = await gate.check(nodeMcpRequest(source(good), ORIGIN, INITIALIZE))
    expect(challengeOf(replayed)).toContain('error_description="the proof was used before"')
    const forGet = await dpopProof(key, { method: 'GET', url: RESOURCE, token: value })
    const wrongMethod = await gate.check(nodeMcpRequest(source(forGet), ORIGIN, INITIALIZE))
    expect(challengeOf(wrongMethod)).toContain('error="invalid_dpop_proof"')
    // A plain Node request has no originalUrl: its url is the target.
    const plain = nodeMcpRequest({ headers: {}, rawHeaders: [], url: '/mcp?x=1' }, ORIGIN, undefined)
    expect(plain).toMatchObject({ dpop: [], target: '/mcp?x=1' })
  })
})

describe('mcpHono', () => {
  test('a proof by the bound key passes; none, or one for another URL, is a 401 DPoP challenge', async () => {
    const { key, value, gate } = await setup()
    const app = new Hono()
    app.post('/mcp', mcpHono(gate, { requestOrigin: () => ORIGIN }), (c) => c.json({ passed: true }))
    const post = (headers: Record<string, string>) =>
      app.request(RESOURCE, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `DPoP ${value}`, ...headers },
        body: JSON.stringify(INITIALIZE),
      })
    const passed = await post({ dpop: await dpopProof(key, { method: 'POST', url: RESOURCE, token: value }) })
    expect([passed.status, await passed.json()]).toEqual([200, { passed: true }])
    const unproven = await post({})
    expect(unproven.status).toBe(401)
    expect(unproven.headers.get('www-authenticate')).toContain(
      'error_description="the DPoP-bound token came without a DPoP proof"',
    )
    const elsewhere = await post({
      dpop: await dpopProof(key, { method: 'POST', url: 'https://data.example.org/api/v1', token: value }),
    })
    expect(elsewhere.status).toBe(401)
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"')
  })
})
