/**
 * The record fields issue 30 added (revocation reason, last-use network, lifetime, rotation): each
 * refusal of the schema with its path and message, table-driven, and the rules between fields.
 */
import { describe, expect, test } from 'vitest'
import {
  createApiToken,
  MAX_REVOKED_REASON_LENGTH,
  MAX_ROTATION_OVERLAP_MS,
  revokeToken,
  rotateToken,
  type TokenRecord,
  tokenRecordSchema,
  tokenStatusOfHash,
  touchToken,
} from '../../src/tokens/token-record.js'

const NOW = Date.UTC(2026, 10, 26)
const { record: API } = createApiToken({ userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW })
const OTHER_HASH = 'b'.repeat(64)
const OAUTH: TokenRecord = { ...API, kind: 'oauth', hint: 'dao_…abcd' } as TokenRecord

function issues(record: unknown): { path: string; message: string }[] {
  const parsed = tokenRecordSchema.safeParse(record)
  return parsed.success
    ? []
    : parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }))
}

describe('tokenRecordSchema: the lifecycle fields', () => {
  test.each([
    ['an empty reason', { revokedAt: NOW, revokedReason: '  ' }, 'revokedReason', 'must not be empty'],
    [
      'a reason one past the limit',
      { revokedAt: NOW, revokedReason: 'x'.repeat(MAX_REVOKED_REASON_LENGTH + 1) },
      'revokedReason',
      `must be at most ${MAX_REVOKED_REASON_LENGTH} characters`,
    ],
    [
      'a reason with a control character',
      { revokedAt: NOW, revokedReason: 'found\u0007' },
      'revokedReason',
      'must not contain control characters',
    ],
    [
      'a reason without a revocation',
      { revokedReason: 'leaked' },
      'revokedReason',
      'only a revoked token has a reason',
    ],
    [
      'a last-use network that is no address',
      { lastUsedFrom: 'not a network' },
      'lastUsedFrom',
      'must be an IPv4 address or an IPv6 network',
    ],
    [
      'a previous hash in upper case',
      { previousHash: 'A'.repeat(64), previousHashExpiresAt: NOW },
      'previousHash',
      'must be a SHA-256 in lower-case hex',
    ],
    [
      'a previous hash without its end',
      { previousHash: OTHER_HASH },
      'previousHashExpiresAt',
      'previousHash and previousHashExpiresAt come together',
    ],
    [
      'an end without a previous hash',
      { previousHashExpiresAt: NOW },
      'previousHashExpiresAt',
      'previousHash and previousHashExpiresAt come together',
    ],
    [
      'a previous hash equal to the hash',
      { previousHash: API.hash, previousHashExpiresAt: NOW },
      'previousHash',
      'must differ from hash',
    ],
  ])('refuses %s', (_name, fields, path, message) => {
    expect(issues({ ...API, ...fields })).toEqual([{ path, message }])
  })

  test.each([
    ['lifetimeDays', { lifetimeDays: 30 }],
    ['rotatedAt', { rotatedAt: NOW }],
    ['previousHash', { previousHash: OTHER_HASH, previousHashExpiresAt: NOW }],
  ])('an OAuth token has no %s', (field, fields) => {
    expect(issues({ ...OAUTH, ...fields })).toEqual([{ path: field, message: 'only API tokens have it' }])
  })

  test('accepts every field where it belongs', () => {
    expect(
      issues({
        ...API,
        revokedAt: NOW,
        revokedReason: 'x'.repeat(MAX_REVOKED_REASON_LENGTH),
        lastUsedFrom: '2001:db8:1:2::/64',
        lifetimeDays: 30,
        rotatedAt: NOW,
        previousHash: OTHER_HASH,
        previousHashExpiresAt: NOW,
      }),
    ).toEqual([])
    expect(issues(OAUTH)).toEqual([])
  })
})

describe('revokeToken with a reason, touchToken, rotateToken', () => {
  test.each([
    ['', 'reason must not be empty'],
    [
      'x'.repeat(MAX_REVOKED_REASON_LENGTH + 1),
      `reason must be at most ${MAX_REVOKED_REASON_LENGTH} characters`,
    ],
    [7, 'reason must be a string'],
  ])('a bad reason (%j) is refused, naming the problem', (reason, message) => {
    expect(() => revokeToken(API, NOW, reason as string)).toThrow(message)
  })

  test('a touch at the same time or earlier keeps the later use and its network', () => {
    const used = touchToken(API, NOW + 10, '192.0.2.7')
    expect(touchToken(used, NOW + 10, '192.0.2.8')).toMatchObject({
      lastUsedAt: NOW + 10,
      lastUsedFrom: '192.0.2.7',
    })
    expect(touchToken(used, NOW + 11, '192.0.2.8')).toMatchObject({
      lastUsedAt: NOW + 11,
      lastUsedFrom: '192.0.2.8',
    })
  })

  test('the overlap may be exactly the longest, not one more', () => {
    expect(() => rotateToken(API, { overlapMs: MAX_ROTATION_OVERLAP_MS, now: NOW })).not.toThrow()
    expect(() => rotateToken(API, { overlapMs: MAX_ROTATION_OVERLAP_MS + 1, now: NOW })).toThrow(
      'overlapMs must be a whole number',
    )
  })

  test('only API tokens, and only active ones, are rotated: each refusal says so', () => {
    expect(() => rotateToken(OAUTH, { overlapMs: 0, now: NOW })).toThrow('only API tokens can be rotated')
    expect(() => rotateToken(revokeToken(API, NOW), { overlapMs: 0, now: NOW })).toThrow(
      'only an active token can be rotated; create a new one instead',
    )
  })

  test('a hash that is neither the current nor the previous one has no status', () => {
    const { record } = rotateToken(API, { overlapMs: 1000, now: NOW })
    expect(tokenStatusOfHash(record, API.hash, NOW)).toBe('active')
    expect(tokenStatusOfHash(record, OTHER_HASH, NOW)).toBeUndefined()
    expect(tokenStatusOfHash(API, OTHER_HASH, NOW)).toBeUndefined()
  })
})

describe('tokenRecordSchema: dpopJkt is an RFC 7638 SHA-256 thumbprint', () => {
  const JKT = `${'A'.repeat(20)}-_${'z9'.repeat(10)}q`
  const REFUSED = [{ path: 'dpopJkt', message: 'must be a JWK SHA-256 thumbprint: 43 base64url characters' }]

  test('43 base64url characters are accepted', () => {
    expect(JKT).toHaveLength(43)
    expect(issues({ ...OAUTH, dpopJkt: JKT })).toEqual([])
  })

  test.each([
    ['42 characters', JKT.slice(1)],
    ['44 characters', `${JKT}A`],
    ['one character', 'A'],
    ['a character before the thumbprint', ` ${JKT}`],
    ['a character after it', `${JKT}.`],
    ['a character outside base64url', `${JKT.slice(1)}=`],
  ])('%s is refused', (_name, dpopJkt) => {
    expect(issues({ ...OAUTH, dpopJkt })).toEqual(REFUSED)
  })
})
