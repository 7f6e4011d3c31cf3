import { describe, expect, test } from 'vitest'
import { InvalidArgumentError } from '../../src/errors.js'
import { isWellFormedTokenValue } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import {
  createApiToken,
  createOAuthToken,
  MAX_ROTATION_OVERLAP_MS,
  revokeToken,
  rotateToken,
  tokenRecordSchema,
  tokenStatusOfHash,
  touchToken,
} from '../../src/tokens/token-record.js'

const NOW = Date.UTC(2026, 10, 26)
const HOUR = 3_600_000
const created = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW })

describe('rotateToken', () => {
  const { record, value } = rotateToken(touchToken(created.record, NOW + 1, '203.0.113.7'), {
    overlapMs: HOUR,
    now: NOW + 10,
  })

  test('a new value for the same token: id, owner, name, scopes and last use kept', () => {
    expect(isWellFormedTokenValue(value)).toBe(true)
    expect(value).not.toBe(created.value)
    expect(record).toMatchObject({
      id: created.record.id,
      userId: 'alice',
      name: 'ci',
      scopes: ['public', 'data.data'],
      createdAt: NOW,
      lastUsedAt: NOW + 1,
      lastUsedFrom: '203.0.113.7',
      hash: hashTokenValue(value),
      hint: `dap_…${value.slice(-4)}`,
      rotatedAt: NOW + 10,
      previousHash: created.record.hash,
      previousHashExpiresAt: NOW + 10 + HOUR,
    })
    expect(Object.isFrozen(record)).toBe(true)
    expect(tokenRecordSchema.parse(record)).toEqual(record)
    expect(JSON.stringify(record)).not.toContain(value.slice(4))
  })

  // [what, value, at, status]
  const statuses: [string, string, number, string | undefined][] = [
    ['the new value', 'new', NOW + 10, 'active'],
    ['the old value inside the overlap', 'old', NOW + 10 + HOUR - 1, 'active'],
    ['the old value when the overlap ends', 'old', NOW + 10 + HOUR, 'expired'],
    ['the new value after the overlap', 'new', NOW + 10 + HOUR, 'active'],
    ['another value', 'other', NOW + 10, undefined],
  ]
  test.each(statuses)('%s is %s', (_what, which, at, status) => {
    const hash =
      which === 'new' ? record.hash : which === 'old' ? created.record.hash : hashTokenValue('other')
    expect(tokenStatusOfHash(record, hash, at)).toBe(status)
  })

  test('a revocation ends both values at once', () => {
    const revoked = revokeToken(record, NOW + 20)
    expect(tokenStatusOfHash(revoked, revoked.hash, NOW + 20)).toBe('revoked')
    expect(tokenStatusOfHash(revoked, created.record.hash, NOW + 20)).toBe('revoked')
  })

  test('without overlap the old value is refused at once', () => {
    const rotated = rotateToken(created.record, { overlapMs: 0, now: NOW + 10 }).record
    expect(tokenStatusOfHash(rotated, created.record.hash, NOW + 10)).toBe('expired')
  })

  test('a second rotation keeps only the value it replaced', () => {
    const second = rotateToken(record, { overlapMs: HOUR, now: NOW + 20 }).record
    expect(second.previousHash).toBe(record.hash)
    expect(tokenStatusOfHash(second, created.record.hash, NOW + 20)).toBeUndefined()
  })

  test.each([-1, 1.5, MAX_ROTATION_OVERLAP_MS + 1, Number.NaN])('refuses the overlap %s', (overlapMs) => {
    expect(() => rotateToken(created.record, { overlapMs, now: NOW })).toThrow(/overlapMs/)
  })

  test.each([
    ['a revoked token', revokeToken(created.record, NOW)],
    [
      'an expired token',
      createApiToken({ userId: 'a', name: 'x', scopes: '', now: NOW, expiresAt: NOW + 1 }).record,
    ],
    ['an OAuth token', createOAuthToken({ userId: 'a', scopes: '', now: NOW }).record],
  ])('refuses %s', (_what, token) => {
    expect(() => rotateToken(token, { overlapMs: 0, now: NOW + 5 })).toThrow(InvalidArgumentError)
  })
})

describe('revocation reasons', () => {
  test('are kept, and the first revocation wins', () => {
    const revoked = revokeToken(created.record, NOW, 'found public at https://github.com/acme/app')
    expect(revoked.revokedReason).toBe('found public at https://github.com/acme/app')
    expect(revokeToken(revoked, NOW + 5, 'again')).toEqual(revoked)
    expect(tokenRecordSchema.parse(revoked)).toEqual(revoked)
  })

  test.each(['', '   ', 'a\nb', 'x'.repeat(501)])('refuses the reason %j', (reason) => {
    expect(() => revokeToken(created.record, NOW, reason)).toThrow(InvalidArgumentError)
  })

  test('a stored reason without a revocation is not a record', () => {
    expect(tokenRecordSchema.safeParse({ ...created.record, revokedReason: 'x' }).success).toBe(false)
  })
})

describe('the record schema', () => {
  test.each([
    ['a previous hash without its expiry', { previousHash: 'a'.repeat(64) }],
    ['an expiry without its previous hash', { previousHashExpiresAt: NOW }],
    ['a previous hash equal to the hash', { previousHash: created.record.hash, previousHashExpiresAt: NOW }],
    ['a last-use network that is not one', { lastUsedFrom: 'somewhere' }],
    ['a lifetime of 0 days', { lifetimeDays: 0 }],
  ])('refuses %s', (_what, fields) => {
    expect(tokenRecordSchema.safeParse({ ...created.record, ...fields }).success).toBe(false)
  })
})
