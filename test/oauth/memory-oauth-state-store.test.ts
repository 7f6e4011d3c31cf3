import { describe, expect, it } from 'vitest'
import { TokenStoreError } from '../../src/errors.js'
import { MemoryOAuthStateStore } from '../../src/oauth/memory-oauth-state-store.js'
import type { DeviceGrantRecord, RefreshFamilyRecord } from '../../src/oauth/oauth-state-records.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { describeOAuthStateStoreContract } from './oauth-state-store-contract.js'

describeOAuthStateStoreContract('MemoryOAuthStateStore', () => new MemoryOAuthStateStore())

const NOW = Date.UTC(2025, 0, 1)
const HOUR = 3_600_000

function hash(): string {
  return hashTokenValue(generateRandomBase62(32))
}

function grant(createdAt: number, userCodeHash = hash()): DeviceGrantRecord {
  return {
    deviceCodeHash: hash(),
    userCodeHash,
    version: 0,
    scopes: ['public'],
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    createdAt,
    expiresAt: createdAt + 600_000,
    retainUntil: createdAt + 1_200_000,
    interval: 5,
    status: 'pending',
  }
}

function family(createdAt: number): RefreshFamilyRecord {
  return {
    id: `rf_${generateRandomBase62(16)}`,
    version: 0,
    clientId: 'cli',
    userId: 'alice',
    scopes: ['public'],
    tokenHashes: [hash()],
    accessTokens: [],
    createdAt,
    expiresAt: createdAt + HOUR,
    retainUntil: createdAt + HOUR,
  }
}

describe('MemoryOAuthStateStore', () => {
  it('sweeps expired entries out of its maps, at most once a minute', async () => {
    const store = new MemoryOAuthStateStore()
    const old = grant(NOW)
    const oldFamily = family(NOW)
    await store.saveDeviceGrant(old)
    await store.saveRefreshFamily(oldFamily)
    await store.saveAuthorizationCode({
      hash: hash(),
      version: 0,
      userId: 'alice',
      redirectUri: 'http://127.0.0.1:1/cb',
      codeChallenge: old.codeChallenge,
      scopes: ['public'],
      createdAt: NOW,
      expiresAt: NOW + 60_000,
      retainUntil: NOW + 60_000,
      issuedTokenIds: [],
    })
    await store.recordUserCodeFailure('k', NOW, 1000)
    // A save after everything expired triggers a sweep; the user code is then free again.
    const later = NOW + 2 * HOUR
    const reuse = grant(later, old.userCodeHash)
    expect(await store.saveDeviceGrant(reuse)).toBe(true)
    expect(await store.findDeviceGrantByUserCode(old.userCodeHash, later)).toEqual(reuse)
    expect(await store.findRefreshFamilyByTokenHash(oldFamily.tokenHashes[0]!, later)).toBeUndefined()
    expect(await store.countUserCodeFailures('k', later)).toBe(0)
  })

  it('frees a user code held by an expired grant that was not yet swept', async () => {
    const store = new MemoryOAuthStateStore()
    const first = { ...grant(NOW), expiresAt: NOW + 1000, retainUntil: NOW + 2000 }
    await store.saveDeviceGrant(first)
    expect(await store.saveDeviceGrant(grant(NOW + 1999, first.userCodeHash))).toBe(false)
    // Within a minute of the last sweep, so none runs: the stale holder is skipped, not trusted.
    const second = grant(NOW + 2000, first.userCodeHash)
    expect(await store.saveDeviceGrant(second)).toBe(true)
    expect(await store.findDeviceGrantByUserCode(first.userCodeHash, NOW + 2000)).toEqual(second)
  })

  it('keeps the newer holder of a user code when sweeping the older one', async () => {
    const store = new MemoryOAuthStateStore()
    const first = grant(NOW)
    await store.saveDeviceGrant(first)
    const second = {
      ...grant(NOW, first.userCodeHash),
      createdAt: first.retainUntil,
      retainUntil: first.retainUntil + HOUR,
    }
    expect(await store.saveDeviceGrant(second)).toBe(true)
    // This save sweeps (a minute has passed since the last sweep): the first grant goes, not the index.
    await store.saveDeviceGrant(grant(first.retainUntil + 120_000))
    expect(await store.findDeviceGrantByUserCode(first.userCodeHash, first.retainUntil + 120_000)).toEqual(
      second,
    )
  })

  it.each([Number.NaN, -1, 0.5])('refuses the clock value %s', async (now) => {
    const store = new MemoryOAuthStateStore()
    await expect(store.findAuthorizationCode(hash(), now)).rejects.toThrow(TokenStoreError)
    await expect(store.findDeviceGrant(hash(), now)).rejects.toThrow(TokenStoreError)
    await expect(store.findDeviceGrantByUserCode(hash(), now)).rejects.toThrow(TokenStoreError)
    await expect(store.findRefreshFamily('rf_x', now)).rejects.toThrow(TokenStoreError)
    await expect(store.findRefreshFamilyByTokenHash(hash(), now)).rejects.toThrow(TokenStoreError)
    await expect(store.countUserCodeFailures('k', now)).rejects.toThrow(TokenStoreError)
    await expect(store.recordUserCodeFailure('k', now, 1000)).rejects.toThrow(TokenStoreError)
  })

  it.each([0, -5, 1.5])('refuses the failure window %s', async (windowMs) => {
    await expect(new MemoryOAuthStateStore().recordUserCodeFailure('k', NOW, windowMs)).rejects.toThrow(
      TokenStoreError,
    )
  })
})
