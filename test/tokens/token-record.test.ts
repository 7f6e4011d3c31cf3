import { describe, expect, it } from 'vitest'
import { parseScopes, ScopeSet } from '../../src/decisions/scopes.js'
import { ConfigError, InvalidArgumentError, ScopeError, TokenFormatError } from '../../src/errors.js'
import { isWellFormedTokenValue, tokenKindOf } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import {
  type CreateApiTokenOptions,
  type CreateOAuthTokenOptions,
  createApiToken,
  createOAuthToken,
  DEFAULT_OAUTH_TOKEN_TTL_MS,
  importApiToken,
  renameToken,
  rescopeToken,
  revokeToken,
  type TokenRecord,
  tokenRecordSchema,
  tokenStatus,
  touchToken,
} from '../../src/tokens/token-record.js'

// A frozen clock: 2025-01-01T00:00:00Z.
const NOW = Date.UTC(2025, 0, 1)
const HOUR = 3_600_000

// Design §6 vector (see token-format.test.ts) and its SHA-256, computed with Python's hashlib.
const KNOWN_VALUE = 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5'
const KNOWN_HASH = '55420ff15a64406c396d0b31d4a4871adccaef0e6e7dd3c5cb95c8d32db50a57'

const base: CreateApiTokenOptions = { userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW }

function apiRecord(overrides: Partial<CreateApiTokenOptions> = {}): TokenRecord {
  return createApiToken({ ...base, ...overrides }).record
}

function expectDeepFrozen(record: TokenRecord): void {
  expect(Object.isFrozen(record)).toBe(true)
  expect(Object.isFrozen(record.scopes)).toBe(true)
}

describe('createApiToken', () => {
  it('returns the value once and a record holding only its hash and hint', () => {
    const { record, value } = createApiToken({ ...base, expiresAt: NOW + HOUR })
    expect(isWellFormedTokenValue(value)).toBe(true)
    expect(tokenKindOf(value)).toBe('api')
    expect(record).toEqual({
      id: expect.stringMatching(/^tok_[0-9A-Za-z]{16}$/),
      kind: 'api',
      userId: 'alice',
      name: 'ci',
      scopes: ['public', 'data.data'],
      hash: hashTokenValue(value),
      hint: `dap_…${value.slice(-4)}`,
      createdAt: NOW,
      expiresAt: NOW + HOUR,
    })
    expect(JSON.stringify(record)).not.toContain(value.slice(4, 36))
    expectDeepFrozen(record)
    expect(tokenRecordSchema.parse(record)).toEqual(record)
  })

  it('omits absent optional fields rather than setting them to undefined', () => {
    const record = apiRecord()
    for (const key of ['expiresAt', 'revokedAt', 'lastUsedAt', 'clientId']) expect(key in record).toBe(false)
  })

  it('gives every token a new id and value', () => {
    const a = createApiToken(base)
    const b = createApiToken(base)
    expect(a.record.id).not.toBe(b.record.id)
    expect(a.value).not.toBe(b.value)
  })

  it.each([
    ['a scope string', 'data.data wokflow.read data.data'],
    ['an array', ['wokflow.read', 'data.data', 'public']],
    ['a ScopeSet', parseScopes('wokflow.read data.data')],
  ])('takes scopes as %s, in contract order with public first', (_, scopes) => {
    expect(apiRecord({ scopes }).scopes).toEqual(['public', 'data.data', 'wokflow.read'])
  })

  it('refuses an object built on the ScopeSet prototype: its granted list is never stored unparsed', () => {
    const lookAlike = Object.create(ScopeSet.prototype, {
      granted: { value: ['public', 'admin.everything'] },
    })
    expect(() => apiRecord({ scopes: lookAlike })).toThrow(ScopeError)
  })

  it('always grants public, even with no scopes', () => {
    expect(apiRecord({ scopes: [] }).scopes).toEqual(['public'])
    expect(apiRecord({ scopes: '' }).scopes).toEqual(['public'])
  })

  it('accepts a host-chosen id', () => {
    expect(apiRecord({ id: 'seed-ci_1' }).id).toBe('seed-ci_1')
  })

  it('accepts a user id of the longest length', () => {
    expect(apiRecord({ userId: 'u'.repeat(256) }).userId).toHaveLength(256)
  })

  it('trims the name and counts characters, not UTF-16 units', () => {
    expect(apiRecord({ name: '  nightly export\t' }).name).toBe('nightly export')
    expect(apiRecord({ name: '🔑'.repeat(100) }).name).toBe('🔑'.repeat(100))
  })

  const invalid: readonly (readonly [string, Partial<CreateApiTokenOptions>, string])[] = [
    ['an empty name', { name: '' }, 'name: must not be empty'],
    ['a blank name', { name: ' \t\n ' }, 'name: must not be empty'],
    ['a 101-character name', { name: 'x'.repeat(101) }, 'name: must be at most 100 characters'],
    ['a name with a newline inside', { name: 'a\nb' }, 'name: must not contain control characters'],
    ['a name that is not a string', { name: 42 as never }, 'name: must be a string'],
    ['an empty user id', { userId: '' }, 'userId: must be a string of 1–256 characters'],
    ['a too long user id', { userId: 'u'.repeat(257) }, 'userId: must be a string of 1–256 characters'],
    ['expiry at creation time', { expiresAt: NOW }, 'expiresAt: must be after now'],
    ['expiry in the past', { expiresAt: NOW - 1 }, 'expiresAt: must be after now'],
    ['a fractional expiry', { expiresAt: NOW + 0.5 }, 'expiresAt: must be epoch milliseconds'],
    ['an id with a slash', { id: 'a/b' }, 'id: must be 1–64 characters'],
    ['an empty id', { id: '' }, 'id: must be 1–64 characters'],
    // A number would pass the patterns once coerced to text.
    ['an id that is a number', { id: 7 as never }, 'id: must be 1–64 characters'],
    [
      'a user id that is not a string',
      { userId: 7 as never },
      'userId: must be a string of 1–256 characters',
    ],
  ]

  it.each(invalid)('refuses %s with a ConfigError naming the field', (_, overrides, message) => {
    expect(() => createApiToken({ ...base, ...overrides })).toThrow(ConfigError)
    expect(() => createApiToken({ ...base, ...overrides })).toThrow(message)
  })

  it('refuses an unknown scope with a ScopeError', () => {
    expect(() => createApiToken({ ...base, scopes: 'workflow.read' })).toThrow(ScopeError)
  })

  it.each([Number.NaN, -1, 1.5, '2025' as never])('refuses the clock value %s', (now) => {
    expect(() => createApiToken({ ...base, now })).toThrow(InvalidArgumentError)
  })
})

describe('createOAuthToken', () => {
  it('issues a dao_ token for one hour by default, named for a session', () => {
    const { record, value } = createOAuthToken({ userId: 'alice', scopes: ['data.metadata'], now: NOW })
    expect(tokenKindOf(value)).toBe('oauth')
    expect(record).toMatchObject({
      kind: 'oauth',
      name: 'OAuth session',
      scopes: ['public', 'data.metadata'],
      hash: hashTokenValue(value),
      hint: `dao_…${value.slice(-4)}`,
      createdAt: NOW,
      expiresAt: NOW + DEFAULT_OAUTH_TOKEN_TTL_MS,
    })
    expect(DEFAULT_OAUTH_TOKEN_TTL_MS).toBe(HOUR)
    expect('clientId' in record).toBe(false)
    expectDeepFrozen(record)
    expect(tokenRecordSchema.parse(record)).toEqual(record)
  })

  it('carries and names its client, with a custom lifetime', () => {
    const { record } = createOAuthToken({
      userId: 'alice',
      scopes: '',
      clientId: 'cli',
      now: NOW,
      ttlMs: 60_000,
    })
    expect(record).toMatchObject({ name: 'OAuth session (cli)', clientId: 'cli', expiresAt: NOW + 60_000 })
    expect(tokenRecordSchema.parse(record)).toEqual(record)
    expect(
      tokenRecordSchema.parse(
        createOAuthToken({ userId: 'a', scopes: '', clientId: '~'.repeat(80), now: NOW }).record,
      ),
    ).toBeTruthy()
  })

  const TTL = 'ttlMs: must be a positive integer number of milliseconds'
  const CLIENT = 'clientId: must be 1–80 visible ASCII characters'
  it.each<[string, Record<string, unknown>, string]>([
    ['a zero lifetime', { ttlMs: 0 }, TTL],
    ['a negative lifetime', { ttlMs: -1 }, TTL],
    ['a fractional lifetime', { ttlMs: 1.5 }, TTL],
    ['an overflowing lifetime', { ttlMs: Number.MAX_SAFE_INTEGER }, TTL],
    ['an empty client id', { clientId: '' }, CLIENT],
    ['a client id with a space', { clientId: 'my app' }, CLIENT],
    ['an 81-character client id', { clientId: 'c'.repeat(81) }, CLIENT],
    // A number would pass the pattern once coerced to text.
    ['a client id that is a number', { clientId: 7 }, CLIENT],
    ['an empty user id', { userId: '' }, 'userId: '],
  ])('refuses %s', (_, overrides, message) => {
    const options = { userId: 'alice', scopes: '', now: NOW, ...overrides } as CreateOAuthTokenOptions
    expect(() => createOAuthToken(options)).toThrow(ConfigError)
    expect(() => createOAuthToken(options)).toThrow(message)
  })

  it('refuses a bad clock', () => {
    expect(() => createOAuthToken({ userId: 'alice', scopes: '', now: Number.NaN })).toThrow(
      InvalidArgumentError,
    )
  })
})

describe('importApiToken', () => {
  it('records an existing value by its hash', () => {
    const record = importApiToken({
      userId: 'alice',
      name: ' ci ',
      scopes: ['data.data'],
      value: KNOWN_VALUE,
      now: NOW,
    })
    expect(record).toEqual({
      id: expect.stringMatching(/^tok_[0-9A-Za-z]{16}$/),
      kind: 'api',
      userId: 'alice',
      name: 'ci',
      scopes: ['public', 'data.data'],
      hash: KNOWN_HASH,
      hint: 'dap_…Cnw5',
      createdAt: NOW,
    })
    expectDeepFrozen(record)
  })

  it('may import a token that has already expired', () => {
    const record = importApiToken({ ...base, value: KNOWN_VALUE, expiresAt: NOW - HOUR, id: 'seed-1' })
    expect(record.id).toBe('seed-1')
    expect(tokenStatus(record, NOW)).toBe('expired')
  })

  it.each([
    ['an OAuth value', 'dao_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz0UTLEi'],
    ['a bad checksum', `${KNOWN_VALUE.slice(0, -1)}6`],
    ['a value of another format', 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB'],
  ])('refuses %s without echoing it', (_, value) => {
    expect(() => importApiToken({ ...base, value })).toThrow(TokenFormatError)
    try {
      importApiToken({ ...base, value })
    } catch (error) {
      expect((error as Error).message).not.toContain(String(value).slice(4, 20))
    }
  })

  it('refuses a value that is not a string', () => {
    expect(() => importApiToken({ ...base, value: 42 as never })).toThrow(
      new TokenFormatError('value is not a well-formed API token (dap_ + 32 base62 + checksum)'),
    )
  })

  it('refuses a malformed expiry', () => {
    expect(() => importApiToken({ ...base, value: KNOWN_VALUE, expiresAt: -1 })).toThrow(
      'expiresAt: must be epoch milliseconds',
    )
  })

  it('takes any expiry from the epoch on, since an imported token may have expired long ago', () => {
    expect(importApiToken({ ...base, value: KNOWN_VALUE, expiresAt: 0 }).expiresAt).toBe(0)
  })
})

describe('lifecycle transitions', () => {
  const record = apiRecord({ name: 'ci', scopes: 'data.data wokflow.read', expiresAt: NOW + HOUR })

  it.each([
    ['trims the new name', '  deploy  ', 'deploy'],
    ['keeps inner spaces', 'nightly  export', 'nightly  export'],
    ['accepts 100 characters', 'n'.repeat(100), 'n'.repeat(100)],
  ])('renameToken %s', (_, name, expected) => {
    const renamed = renameToken(record, name)
    expect(renamed.name).toBe(expected)
    expect(renamed).toEqual({ ...record, name: expected })
  })

  it.each([
    ['an empty name', '', 'must not be empty'],
    ['a blank name', '   ', 'must not be empty'],
    ['a too long name', 'n'.repeat(101), 'must be at most 100 characters'],
    ['a control character', 'a\u0007b', 'must not contain control characters'],
  ])('renameToken refuses %s', (_, name, message) => {
    expect(() => renameToken(record, name)).toThrow(new ConfigError(['name'], message))
  })

  it.each([
    ['narrower scopes', 'data.overview', ['public', 'data.overview']],
    ['only public', '', ['public']],
    [
      'an explicit public and duplicates',
      ['organization.read', 'public', 'organization.read'],
      ['public', 'organization.read'],
    ],
    ['wider scopes, reordered', 'workflow.write data.edit', ['public', 'data.edit', 'workflow.write']],
  ])('rescopeToken to %s keeps public first', (_, scopes, expected) => {
    const rescoped = rescopeToken(record, scopes)
    expect(rescoped.scopes).toEqual(expected)
    expect(rescoped).toEqual({ ...record, scopes: expected })
  })

  it('rescopeToken refuses an unknown scope', () => {
    expect(() => rescopeToken(record, ['workflow.read'])).toThrow(ScopeError)
  })

  it('revokeToken is idempotent: a second revocation keeps the first date', () => {
    const once = revokeToken(record, NOW + 10)
    const twice = revokeToken(once, NOW + 20)
    expect(once.revokedAt).toBe(NOW + 10)
    expect(twice.revokedAt).toBe(NOW + 10)
    expect(twice).toEqual(once)
    expect(() => revokeToken(record, Number.NaN)).toThrow(InvalidArgumentError)
  })

  it('touchToken records the last use and never moves it backwards', () => {
    const used = touchToken(record, NOW + 50)
    expect(used.lastUsedAt).toBe(NOW + 50)
    expect(touchToken(used, NOW + 60).lastUsedAt).toBe(NOW + 60)
    expect(touchToken(used, NOW + 40).lastUsedAt).toBe(NOW + 50)
    expect(() => touchToken(record, -5)).toThrow(InvalidArgumentError)
  })

  const transitions: readonly (readonly [string, (r: TokenRecord) => TokenRecord])[] = [
    ['renameToken', (r) => renameToken(r, 'other')],
    ['rescopeToken', (r) => rescopeToken(r, 'data.overview')],
    ['revokeToken', (r) => revokeToken(r, NOW + 1)],
    ['revokeToken (already revoked)', (r) => revokeToken(revokeToken(r, NOW), NOW + 1)],
    ['touchToken', (r) => touchToken(r, NOW + 1)],
  ]

  it.each(transitions)(
    '%s returns a new, frozen, valid record and leaves its input alone',
    (_, transition) => {
      const input = { ...record, scopes: [...record.scopes] }
      const snapshot = structuredClone(input)
      const output = transition(input)
      expect(output).not.toBe(input)
      expect(input).toEqual(snapshot)
      expectDeepFrozen(output)
      expect(tokenRecordSchema.parse(output)).toEqual(output)
    },
  )
})

describe('tokenStatus', () => {
  const expiring = apiRecord({ expiresAt: NOW + HOUR })

  it.each([
    ['before expiry', expiring, NOW + HOUR - 1, 'active'],
    ['at exactly expiresAt', expiring, NOW + HOUR, 'expired'],
    ['after expiry', expiring, NOW + HOUR + 1, 'expired'],
    ['without expiry, far in the future', apiRecord(), Number.MAX_SAFE_INTEGER, 'active'],
    ['revoked, not yet expired', revokeToken(expiring, NOW), NOW, 'revoked'],
    ['revoked and expired', revokeToken(expiring, NOW), NOW + 2 * HOUR, 'revoked'],
    ['revoked, asked about a moment before the revocation', revokeToken(expiring, NOW + 10), NOW, 'revoked'],
    ['with a NaN clock (fails closed)', expiring, Number.NaN, 'expired'],
  ] as const)('%s → %s', (_, record, now, expected) => {
    expect(tokenStatus(record, now)).toBe(expected)
  })
})

describe('tokenRecordSchema', () => {
  const valid = apiRecord({ expiresAt: NOW + HOUR })
  const oauth = createOAuthToken({ userId: 'alice', scopes: '', clientId: 'cli', now: NOW }).record

  it('accepts records with every optional field', () => {
    const full = { ...touchToken(revokeToken(valid, NOW + 1), NOW + 2) }
    expect(tokenRecordSchema.parse(full)).toEqual(full)
    expect(Object.isFrozen(tokenRecordSchema.parse(full))).toBe(true)
    expect(tokenRecordSchema.parse(oauth)).toEqual(oauth)
  })

  const HEX = 'must be a SHA-256 in lower-case hex'
  const HINT = 'must be a prefix, "…" and four base62 characters'
  const ORDER = 'must start with "public" and follow contract order without duplicates'
  // The field each refusal names, and the library's own message where it writes one.
  it.each<[string, Record<string, unknown>, string, string?]>([
    ['an unknown key (a value must never be stored)', { value: KNOWN_VALUE }, ''],
    ['an explicit undefined optional field', { lastUsedAt: undefined }, 'lastUsedAt'],
    ['an unknown kind', { kind: 'session' }, 'kind'],
    ['an upper-case hash', { hash: KNOWN_HASH.toUpperCase() }, 'hash', HEX],
    ['a short hash', { hash: KNOWN_HASH.slice(1) }, 'hash', HEX],
    ['a hash with a character before it', { hash: `0${KNOWN_HASH}` }, 'hash', HEX],
    ['a hash with a character after it', { hash: `${KNOWN_HASH}0` }, 'hash', HEX],
    ['scopes without public', { scopes: ['data.data'] }, 'scopes', ORDER],
    ['scopes out of contract order', { scopes: ['public', 'wokflow.read', 'data.data'] }, 'scopes', ORDER],
    ['duplicate scopes', { scopes: ['public', 'data.data', 'data.data'] }, 'scopes', ORDER],
    ['an unknown scope', { scopes: ['public', 'workflow.read'] }, 'scopes.1'],
    ['a hint of the other kind', { hint: 'dao_…Cnw5' }, 'hint', 'must start with dap_'],
    ['a hint with more than four characters', { hint: 'dap_…Cnw55' }, 'hint', HINT],
    ['a hint with a character before it', { hint: 'xdap_…Cnw5' }, 'hint', HINT],
    ['a name with surrounding spaces', { name: ' ci ' }, 'name', 'must not start or end with white space'],
    ['an empty name', { name: '' }, 'name', 'must not be empty'],
    ['a client id on an API token', { clientId: 'cli' }, 'clientId', 'only OAuth tokens have a client id'],
    ['a negative createdAt', { createdAt: -1 }, 'createdAt'],
    ['a fractional expiresAt', { expiresAt: NOW + 0.5 }, 'expiresAt'],
    ['an id with a space', { id: 'tok 1' }, 'id'],
    ['an empty user id', { userId: '' }, 'userId'],
  ])('rejects %s', (_, overrides, field, message) => {
    const result = tokenRecordSchema.safeParse({ ...valid, ...overrides })
    expect(result.success).toBe(false)
    const issues = result.error?.issues.map((issue) => ({ ...issue, field: issue.path.join('.') }))
    expect(issues).toContainEqual(expect.objectContaining({ field }))
    if (message !== undefined) expect(issues).toContainEqual(expect.objectContaining({ field, message }))
  })

  it('names its own refusals "custom" issues, as zod does for refinements', () => {
    const result = tokenRecordSchema.safeParse({ ...valid, name: ' ci ', clientId: 'cli', hint: 'dao_…Cnw5' })
    expect(result.error?.issues.map(({ code, path }) => [code, path.join('.')]).sort()).toEqual([
      ['custom', 'clientId'],
      ['custom', 'hint'],
      ['custom', 'name'],
    ])
  })
})
