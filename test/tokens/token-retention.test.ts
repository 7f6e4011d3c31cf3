import { describe, expect, it } from 'vitest'
import {
  EXPIRED_DISPLAY_MS,
  isRecentlyRevoked,
  isTokenRetained,
  REVOKED_DISPLAY_MS,
  tokenRetainUntil,
} from '../../src/tokens/token-retention.js'

const T = Date.UTC(2026, 0, 1)
const DAY = 86_400_000

describe('tokenRetainUntil: a record is kept as long as the pages show it', () => {
  it.each([
    ['a live token without expiry', {}, undefined],
    ['a token that expires', { expiresAt: T }, T + EXPIRED_DISPLAY_MS],
    ['a revoked token without expiry', { revokedAt: T }, T + REVOKED_DISPLAY_MS],
    ['a revoked token that expires sooner', { revokedAt: T, expiresAt: T - DAY }, T + REVOKED_DISPLAY_MS],
    ['a revoked token that would expire later', { revokedAt: T, expiresAt: T + 90 * DAY }, T + 120 * DAY],
    [
      'a rotated token whose overlap outlasts the rest',
      { expiresAt: T, previousHashExpiresAt: T + 40 * DAY },
      T + 40 * DAY,
    ],
    ['a live rotated token without expiry', { previousHashExpiresAt: T + DAY }, undefined],
  ])('%s', (_, record, end) => {
    expect(tokenRetainUntil(record)).toBe(end)
    if (end === undefined) {
      expect(isTokenRetained(record, Number.MAX_SAFE_INTEGER)).toBe(true)
    } else {
      expect(isTokenRetained(record, end - 1)).toBe(true)
      expect(isTokenRetained(record, end)).toBe(false)
      expect(isTokenRetained(record, Number.NaN)).toBe(false)
    }
  })

  it('shows a revoked token as recently revoked for exactly the revoked window', () => {
    expect(isRecentlyRevoked({}, T)).toBe(false)
    expect(isRecentlyRevoked({ revokedAt: T }, T + REVOKED_DISPLAY_MS - 1)).toBe(true)
    expect(isRecentlyRevoked({ revokedAt: T }, T + REVOKED_DISPLAY_MS)).toBe(false)
  })
})
