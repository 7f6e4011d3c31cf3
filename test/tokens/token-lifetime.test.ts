import { describe, expect, test } from 'vitest'
import { ConfigError, TokenLifetimeError } from '../../src/errors.js'
import {
  checkTokenLifetime,
  DAY_MS,
  isExpiringSoon,
  TOKEN_LIFETIME_DAYS,
} from '../../src/tokens/token-lifetime.js'
import { createApiToken, rotateToken } from '../../src/tokens/token-record.js'

const NOW = Date.UTC(2026, 10, 26)
const base = { userId: 'alice', name: 'ci', scopes: 'data.data', now: NOW }

describe('createApiToken lifetimes', () => {
  test.each(TOKEN_LIFETIME_DAYS)(
    'lifetimeDays %i expires that many days from now and keeps the policy',
    (days) => {
      const { record } = createApiToken({ ...base, lifetimeDays: days })
      expect(record.expiresAt).toBe(NOW + days * DAY_MS)
      expect(record.lifetimeDays).toBe(days)
    },
  )

  test('a date or no expiry keeps no lifetime', () => {
    expect(createApiToken({ ...base, expiresAt: NOW + 5 }).record.lifetimeDays).toBeUndefined()
    expect(createApiToken(base).record).not.toHaveProperty('expiresAt')
  })

  test.each([0, -1, 1.5, 36_501, Number.NaN])('refuses lifetimeDays %s naming the option', (days) => {
    expect(() => createApiToken({ ...base, lifetimeDays: days })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_CONFIG', path: ['lifetimeDays'] }),
    )
  })

  test('refuses lifetimeDays and expiresAt together', () => {
    expect(() => createApiToken({ ...base, lifetimeDays: 7, expiresAt: NOW + DAY_MS })).toThrow(ConfigError)
  })

  // [what, options, allowed under a 90-day cap]
  const capped: [string, object, boolean][] = [
    ['90 days', { lifetimeDays: 90 }, true],
    ['7 days', { lifetimeDays: 7 }, true],
    ['365 days', { lifetimeDays: 365 }, false],
    ['91 days', { lifetimeDays: 91 }, false],
    ['a date at the cap', { expiresAt: NOW + 90 * DAY_MS }, true],
    ['a date a millisecond past the cap', { expiresAt: NOW + 90 * DAY_MS + 1 }, false],
    ['no expiry', {}, false],
  ]
  test.each(capped)('under a 90-day cap, %s is allowed: %s', (_what, options, allowed) => {
    const create = () => createApiToken({ ...base, ...options, maxLifetimeDays: 90 })
    if (allowed) {
      expect(create().record.expiresAt).toBeLessThanOrEqual(NOW + 90 * DAY_MS)
      return
    }
    let error: unknown
    try {
      create()
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(TokenLifetimeError)
    expect(error).toMatchObject({ code: 'ERR_TOKEN_LIFETIME', maxLifetimeDays: 90 })
    expect((error as Error).message).toContain('capped at 90 days')
  })

  test.each([0, 36_501, 2.5])('refuses a cap of %s naming maxLifetimeDays', (cap) => {
    expect(() => checkTokenLifetime(NOW + 1, NOW, cap)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_CONFIG', path: ['maxLifetimeDays'] }),
    )
  })
})

describe('isExpiringSoon', () => {
  test.each([
    ['never expires', undefined, false],
    ['expires in 8 days', NOW + 8 * DAY_MS, false],
    ['expires in exactly 7 days', NOW + 7 * DAY_MS, true],
    ['expires in an hour', NOW + 3_600_000, true],
    ['already expired', NOW, false],
  ])('%s → %s', (_what, expiresAt, soon) => {
    expect(isExpiringSoon(expiresAt === undefined ? {} : { expiresAt }, NOW)).toBe(soon)
  })
})

describe('rotation keeps the expiry policy', () => {
  test('a lifetime starts again; a date stays; no expiry stays', () => {
    const later = NOW + 10 * DAY_MS
    const lived = createApiToken({ ...base, lifetimeDays: 30 }).record
    expect(rotateToken(lived, { overlapMs: 0, now: later }).record.expiresAt).toBe(later + 30 * DAY_MS)
    const dated = createApiToken({ ...base, expiresAt: NOW + 60 * DAY_MS }).record
    expect(rotateToken(dated, { overlapMs: 0, now: later }).record.expiresAt).toBe(NOW + 60 * DAY_MS)
    const forever = createApiToken(base).record
    expect(rotateToken(forever, { overlapMs: 0, now: later }).record).not.toHaveProperty('expiresAt')
  })
})
