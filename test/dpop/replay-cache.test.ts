import { describe, expect, test } from 'vitest'
import { jwkThumbprint, MemoryDpopReplayCache } from '../../src/dpop/index.js'
import { ConfigError, TokenStoreError } from '../../src/errors.js'

describe('MemoryDpopReplayCache', () => {
  test('answers true once per key until the key expires', () => {
    let now = 1000
    const cache = new MemoryDpopReplayCache({ now: () => now })
    expect(cache.claim('a', 2000)).toBe(true)
    expect(cache.claim('a', 2000)).toBe(false)
    now = 2000
    expect(cache.claim('a', 3000)).toBe(true)
    expect(cache.size).toBe(1)
  })

  test('removes expired entries a few per claim, oldest first', () => {
    let now = 0
    const cache = new MemoryDpopReplayCache({ now: () => now })
    for (let i = 0; i < 20; i++) cache.claim(`k${i}`, 100)
    now = 100
    cache.claim('next', 200)
    expect(cache.size).toBe(20 - 8 + 1)
    cache.claim('next2', 200)
    cache.claim('next3', 200)
    expect(cache.size).toBe(3)
  })

  test('at its bound, frees expired entries wherever they sit, else refuses with a TokenStoreError', () => {
    let now = 0
    const cache = new MemoryDpopReplayCache({ maxEntries: 3, now: () => now })
    cache.claim('late', 1000)
    cache.claim('early-1', 10)
    cache.claim('early-2', 10)
    expect(() => cache.claim('refused', 1000)).toThrow(TokenStoreError)
    now = 10
    // The front entry is live, so only the full pass finds the two expired ones behind it.
    expect(cache.claim('fits', 1000)).toBe(true)
    expect(cache.size).toBe(2)
    expect(cache.claim('late', 1000)).toBe(false)
  })

  test.each([0, -1, 1.5, Number.NaN])('refuses maxEntries %s', (maxEntries) => {
    expect(() => new MemoryDpopReplayCache({ maxEntries })).toThrow(ConfigError)
    expect(() => new MemoryDpopReplayCache({ maxEntries })).toThrow(/maxEntries: must be a positive integer/)
  })
})

describe('jwkThumbprint', () => {
  test('is the RFC 7638 §3.1 example', () => {
    const jwk = {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    }
    expect(jwkThumbprint(jwk)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs')
  })

  test('ignores members outside the required ones, and their order', () => {
    const a = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }
    expect(jwkThumbprint({ y: 'y', x: 'x', kid: 'k', crv: 'P-256', kty: 'EC', use: 'sig' })).toBe(
      jwkThumbprint(a),
    )
    expect(jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: 'x' })).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  test.each([
    ['an unknown key type', { kty: 'oct', k: 'abc' }],
    ['a key type inherited from Object', { kty: 'constructor' }],
    ['no kty', { crv: 'P-256', x: 'x', y: 'y' }],
    ['a member that is not a string', { kty: 'EC', crv: 'P-256', x: 'x', y: 1 }],
  ])('is undefined for %s', (_name, jwk) => {
    expect(jwkThumbprint(jwk)).toBeUndefined()
  })
})

test('MemoryDpopReplayCache reads the real clock by default', () => {
  const cache = new MemoryDpopReplayCache()
  expect(cache.claim('a', Date.now() + 60_000)).toBe(true)
  expect(cache.claim('b', Date.now() - 1)).toBe(true)
  expect(cache.claim('b', Date.now() + 60_000)).toBe(true)
})
