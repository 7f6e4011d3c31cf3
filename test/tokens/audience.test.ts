import { describe, expect, test } from 'vitest'
import { ConfigError } from '../../src/errors.js'
import {
  isAudienceOf,
  isResourceIdentifier,
  MAX_AUDIENCE_SIZE,
  normalizeAudience,
} from '../../src/tokens/audience.js'
import { createApiToken, createOAuthToken, tokenRecordSchema } from '../../src/tokens/token-record.js'

const API = 'https://data.example.org/api/v1'
const MCP = 'https://data.example.org/mcp'
const NOW = Date.parse('2026-11-28T12:00:00Z')

describe('isResourceIdentifier (RFC 8707 §2)', () => {
  test.each([
    [API, true],
    ['http://127.0.0.1:3000/api/v1', true],
    ['http://host/dap/api/v1', true],
    ['https://data.example.org/api/v1?tenant=a', true],
    ['https://data.example.org', true],
    ['https://data.example.org/api/v1#frag', false],
    ['https://data.example.org/api/v1#', false],
    ['https://user:pw@data.example.org/api', false],
    ['https://user@data.example.org/api', false],
    ['/api/v1', false],
    ['urn:example:api', false],
    ['ftp://data.example.org/api', false],
    ['https://data.example.org/a b', false],
    ['https://data.example.org/"quoted"', false],
    ['https://data.example.org/back\\slash', false],
    [`https://data.example.org/${'a'.repeat(2000)}`, false],
    ['', false],
    [42, false],
    [undefined, false],
  ])('%j → %s', (value, expected) => {
    expect(isResourceIdentifier(value)).toBe(expected)
  })
})

describe('normalizeAudience', () => {
  test('keeps the order given and drops duplicates, frozen', () => {
    const audience = normalizeAudience([MCP, API, MCP])
    expect(audience).toEqual([MCP, API])
    expect(Object.isFrozen(audience)).toBe(true)
  })

  test.each([
    [[], 'audience: must be a list of 1–16 resource identifiers'],
    ['https://data.example.org/api/v1', 'audience: must be a list of 1–16 resource identifiers'],
    [
      Array.from({ length: MAX_AUDIENCE_SIZE + 1 }, (_, i) => `${API}/${i}`),
      'audience: must be a list of 1–16',
    ],
    [[API, 'https://x.example/#a'], 'audience[1]: must be an absolute http or https URI without fragment'],
    [[API, 7], 'audience[1]: must be an absolute http or https URI'],
  ])('refuses %j', (audience, message) => {
    let thrown: unknown
    try {
      normalizeAudience(audience)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect(String((thrown as Error).message)).toContain(message)
  })

  test('quotes the bad value in the message', () => {
    expect(() => normalizeAudience(['https://x.example/#a'])).toThrow('got "https://x.example/#a"')
  })
})

describe('isAudienceOf', () => {
  test.each([
    [undefined, API, true],
    [undefined, undefined, true],
    [[API], API, true],
    [[MCP, API], API, true],
    [[MCP], API, false],
    [[API], undefined, false],
    [[`${API}/`], API, false],
    ['https://data.example.org/api/v1/x', API, false],
  ])('audience %j at resource %j → %s', (audience, resource, expected) => {
    expect(isAudienceOf(audience as readonly string[] | undefined, resource)).toBe(expected)
  })
})

describe('token records with an audience', () => {
  test('createOAuthToken records the normalized audience, and the schema accepts it', () => {
    const { record } = createOAuthToken({
      userId: 'alice',
      scopes: 'data.data',
      audience: [API, API],
      now: NOW,
    })
    expect(record.audience).toEqual([API])
    expect(tokenRecordSchema.parse(record)).toEqual(record)
  })

  test('createOAuthToken without an audience records none', () => {
    const { record } = createOAuthToken({ userId: 'alice', scopes: 'data.data', now: NOW })
    expect('audience' in record).toBe(false)
  })

  test('createOAuthToken names a bad audience', () => {
    expect(() => createOAuthToken({ userId: 'alice', scopes: '', audience: ['nope'], now: NOW })).toThrow(
      'audience[0]',
    )
  })

  test.each([
    ['an API token with an audience', { kind: 'api' }, 'only OAuth tokens have an audience'],
    ['an empty audience', { audience: [] }, 'audience'],
    ['a relative resource', { audience: ['/api/v1'] }, 'audience'],
  ])('the schema refuses %s', (_name, change, message) => {
    const oauth = createOAuthToken({ userId: 'alice', scopes: 'data.data', audience: [API], now: NOW }).record
    const api = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW }).record
    const base = 'kind' in change ? { ...api, audience: [API] } : oauth
    const result = tokenRecordSchema.safeParse({ ...base, ...change })
    expect(result.success).toBe(false)
    expect(JSON.stringify(result.error?.issues)).toContain(message)
  })
})
