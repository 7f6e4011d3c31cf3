import { beforeEach, describe, expect, it } from 'vitest'
import { TokenStoreError } from '../../src/errors.js'
import type {
  AuthorizationCodeRecord,
  DeviceGrantRecord,
  RefreshFamilyRecord,
} from '../../src/oauth/oauth-state-records.js'
import type { OAuthStateStore } from '../../src/oauth/oauth-state-store.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'

// A frozen clock: 2025-01-01T00:00:00Z.
const NOW = Date.UTC(2025, 0, 1)
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

function randomHash(): string {
  return hashTokenValue(generateRandomBase62(32))
}

function code(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    hash: randomHash(),
    version: 0,
    clientId: 'cli',
    userId: `user-${generateRandomBase62(8)}`,
    redirectUri: 'http://127.0.0.1:8765/cb',
    codeChallenge: CHALLENGE,
    scopes: ['public', 'data.metadata'],
    createdAt: NOW,
    expiresAt: NOW + 60_000,
    retainUntil: NOW + 60_000,
    issuedTokenIds: [],
    ...overrides,
  }
}

function grant(overrides: Partial<DeviceGrantRecord> = {}): DeviceGrantRecord {
  return {
    deviceCodeHash: randomHash(),
    userCodeHash: randomHash(),
    version: 0,
    scopes: ['public'],
    codeChallenge: CHALLENGE,
    createdAt: NOW,
    expiresAt: NOW + 600_000,
    retainUntil: NOW + 1_200_000,
    interval: 5,
    status: 'pending',
    ...overrides,
  }
}

function family(overrides: Partial<RefreshFamilyRecord> = {}): RefreshFamilyRecord {
  return {
    id: `rf_${generateRandomBase62(16)}`,
    version: 0,
    clientId: 'cli',
    userId: `user-${generateRandomBase62(8)}`,
    scopes: ['public', 'data.data'],
    tokenHashes: [randomHash()],
    accessTokens: [{ id: `tok_${generateRandomBase62(16)}`, expiresAt: NOW + 3_600_000 }],
    createdAt: NOW,
    expiresAt: NOW + 86_400_000,
    retainUntil: NOW + 86_400_000,
    ...overrides,
  }
}

function expectDeepFrozen(value: unknown): void {
  expect(Object.isFrozen(value)).toBe(true)
  for (const inner of Object.values(value as object)) {
    if (typeof inner === 'object' && inner !== null) expectDeepFrozen(inner)
  }
}

/**
 * The behaviour every {@link OAuthStateStore} must show, as a vitest suite. `makeStore` is called
 * before each test; every test uses fresh random keys and user-code hashes, so a shared backing
 * store (one Redis database for the whole run) need not be emptied between tests.
 *
 * @example
 * describeOAuthStateStoreContract('MemoryOAuthStateStore', () => new MemoryOAuthStateStore())
 */
export function describeOAuthStateStoreContract(
  name: string,
  makeStore: () => OAuthStateStore | Promise<OAuthStateStore>,
): void {
  describe(`${name} keeps the OAuthStateStore contract`, () => {
    let store: OAuthStateStore

    beforeEach(async () => {
      store = await makeStore()
    })

    describe('authorization codes', () => {
      it('finds a saved code by its hash, frozen, until retainUntil', async () => {
        const record = code({ refreshFamilyId: `rf_${generateRandomBase62(16)}`, issuedTokenIds: ['tok_a'] })
        await store.saveAuthorizationCode(record)
        const found = await store.findAuthorizationCode(record.hash, NOW)
        expect(found).toEqual(record)
        expectDeepFrozen(found)
        expect(await store.findAuthorizationCode(record.hash, record.retainUntil - 1)).toEqual(record)
        expect(await store.findAuthorizationCode(record.hash, record.retainUntil)).toBeUndefined()
        expect(await store.findAuthorizationCode(randomHash(), NOW)).toBeUndefined()
      })

      it('refuses a second code with the same hash', async () => {
        const record = code()
        await store.saveAuthorizationCode(record)
        await expect(store.saveAuthorizationCode(code({ hash: record.hash }))).rejects.toThrow(
          TokenStoreError,
        )
      })

      it('replaces only over the version it was read at (compare-and-set)', async () => {
        const record = code()
        await store.saveAuthorizationCode(record)
        const redeemed = { ...record, version: 1, redeemedAt: NOW + 1 }
        expect(await store.replaceAuthorizationCode(redeemed)).toBe(true)
        expect(await store.findAuthorizationCode(record.hash, NOW)).toEqual(redeemed)
        expect(await store.replaceAuthorizationCode({ ...record, version: 1, userId: 'mallory' })).toBe(false)
        expect(await store.replaceAuthorizationCode({ ...record, version: 3 })).toBe(false)
        expect(await store.replaceAuthorizationCode(code({ version: 1 }))).toBe(false)
        expect(await store.findAuthorizationCode(record.hash, NOW)).toEqual(redeemed)
      })

      it('lets exactly one of many concurrent replacements of one version win', async () => {
        const record = code()
        await store.saveAuthorizationCode(record)
        const attempts = Array.from({ length: 8 }, (_, i) =>
          store.replaceAuthorizationCode({ ...record, version: 1, redeemedAt: NOW + i }),
        )
        const wins = (await Promise.all(attempts)).filter(Boolean)
        expect(wins).toHaveLength(1)
      })

      it('refuses an invalid record, naming the field', async () => {
        await expect(store.saveAuthorizationCode({ ...code(), hash: 'nope' })).rejects.toThrow(/hash/)
        await expect(
          store.saveAuthorizationCode({ ...code(), scopes: ['workflow.read' as 'public'] }),
        ).rejects.toThrow(TokenStoreError)
        await expect(store.replaceAuthorizationCode({ ...code(), codeChallenge: 'short' })).rejects.toThrow(
          TokenStoreError,
        )
      })
    })

    describe('audiences (RFC 8707)', () => {
      const AUDIENCE = ['https://data.example.org/api/v1', 'https://data.example.org/mcp']

      it('round-trips the audience of a code, a device grant and a family', async () => {
        const codeRecord = code({ audience: AUDIENCE })
        await store.saveAuthorizationCode(codeRecord)
        expect(await store.findAuthorizationCode(codeRecord.hash, NOW)).toEqual(codeRecord)
        const grantRecord = grant({ audience: AUDIENCE.slice(1) })
        await store.saveDeviceGrant(grantRecord)
        expect(await store.findDeviceGrant(grantRecord.deviceCodeHash, NOW)).toEqual(grantRecord)
        const familyRecord = family({ audience: AUDIENCE })
        await store.saveRefreshFamily(familyRecord)
        expect(await store.findRefreshFamily(familyRecord.id, NOW)).toEqual(familyRecord)
        const rotated = {
          ...familyRecord,
          version: 1,
          tokenHashes: [...familyRecord.tokenHashes, randomHash()],
        }
        expect(await store.replaceRefreshFamily(rotated)).toBe(true)
        expect((await store.findRefreshFamily(familyRecord.id, NOW))?.audience).toEqual(AUDIENCE)
      })

      it.each([
        ['an empty audience', []],
        ['a relative resource', ['/api/v1']],
        ['a resource with a fragment', ['https://data.example.org/api#x']],
      ])('refuses %s', async (_name, audience) => {
        await expect(store.saveAuthorizationCode(code({ audience }))).rejects.toThrow(TokenStoreError)
        await expect(store.saveDeviceGrant(grant({ audience }))).rejects.toThrow(TokenStoreError)
        await expect(store.saveRefreshFamily(family({ audience }))).rejects.toThrow(TokenStoreError)
      })
    })

    describe('DPoP bindings (RFC 9449)', () => {
      const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'

      it('round-trips the dpop_jkt of a code and the key of a family', async () => {
        const codeRecord = code({ dpopJkt: JKT })
        await store.saveAuthorizationCode(codeRecord)
        expect(await store.findAuthorizationCode(codeRecord.hash, NOW)).toEqual(codeRecord)
        const familyRecord = family({ dpopJkt: JKT })
        await store.saveRefreshFamily(familyRecord)
        expect(await store.findRefreshFamily(familyRecord.id, NOW)).toEqual(familyRecord)
      })

      it('refuses a binding that is not a thumbprint', async () => {
        await expect(store.saveAuthorizationCode(code({ dpopJkt: 'short' }))).rejects.toThrow(TokenStoreError)
        await expect(store.saveRefreshFamily(family({ dpopJkt: `${JKT}=` }))).rejects.toThrow(TokenStoreError)
      })
    })

    describe('device grants', () => {
      it('finds a saved grant by device code hash and by user code hash, frozen', async () => {
        const record = grant({ clientId: 'cli' })
        expect(await store.saveDeviceGrant(record)).toBe(true)
        const found = await store.findDeviceGrant(record.deviceCodeHash, NOW)
        expect(found).toEqual(record)
        expectDeepFrozen(found)
        expect(await store.findDeviceGrantByUserCode(record.userCodeHash, NOW)).toEqual(record)
        expect(await store.findDeviceGrantByUserCode(randomHash(), NOW)).toBeUndefined()
        expect(await store.findDeviceGrant(randomHash(), NOW)).toBeUndefined()
      })

      it('forgets a grant at retainUntil', async () => {
        const record = grant()
        await store.saveDeviceGrant(record)
        expect(await store.findDeviceGrant(record.deviceCodeHash, record.retainUntil)).toBeUndefined()
        expect(await store.findDeviceGrantByUserCode(record.userCodeHash, record.retainUntil)).toBeUndefined()
      })

      it('keeps user codes unique among retained grants, and frees them afterwards', async () => {
        const first = grant()
        expect(await store.saveDeviceGrant(first)).toBe(true)
        const clash = grant({ userCodeHash: first.userCodeHash })
        expect(await store.saveDeviceGrant(clash)).toBe(false)
        expect(await store.findDeviceGrant(clash.deviceCodeHash, NOW)).toBeUndefined()
        const later = grant({
          userCodeHash: first.userCodeHash,
          createdAt: first.retainUntil,
          expiresAt: first.retainUntil + 600_000,
          retainUntil: first.retainUntil + 1_200_000,
        })
        expect(await store.saveDeviceGrant(later)).toBe(true)
        expect(await store.findDeviceGrantByUserCode(first.userCodeHash, first.retainUntil)).toEqual(later)
      })

      it('refuses a second grant with the same device code hash', async () => {
        const record = grant()
        await store.saveDeviceGrant(record)
        await expect(store.saveDeviceGrant(grant({ deviceCodeHash: record.deviceCodeHash }))).rejects.toThrow(
          TokenStoreError,
        )
      })

      it('replaces by compare-and-set, exactly one concurrent winner, and keeps the user code', async () => {
        const record = grant()
        await store.saveDeviceGrant(record)
        const approved: DeviceGrantRecord = {
          ...record,
          version: 1,
          status: 'approved',
          userId: 'alice',
          decidedAt: NOW,
        }
        const results = await Promise.all([
          store.replaceDeviceGrant(approved),
          store.replaceDeviceGrant({
            ...record,
            version: 1,
            status: 'denied',
            userId: 'bob',
            decidedAt: NOW,
          }),
        ])
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(await store.replaceDeviceGrant({ ...record, version: 1 })).toBe(false)
        expect(await store.replaceDeviceGrant(grant({ version: 1 }))).toBe(false)
        await expect(
          store.replaceDeviceGrant({ ...record, version: 2, userCodeHash: randomHash() }),
        ).rejects.toThrow(TokenStoreError)
        const found = await store.findDeviceGrantByUserCode(record.userCodeHash, NOW)
        expect(found?.version).toBe(1)
      })

      it('refuses an invalid record', async () => {
        await expect(store.saveDeviceGrant({ ...grant(), status: 'unknown' as 'pending' })).rejects.toThrow(
          TokenStoreError,
        )
        await expect(store.replaceDeviceGrant({ ...grant(), interval: 0 })).rejects.toThrow(TokenStoreError)
      })
    })

    describe('refresh families', () => {
      it('finds a family by id and by its token hash, frozen, until retainUntil', async () => {
        const record = family({ revokedAt: NOW })
        await store.saveRefreshFamily(record)
        const found = await store.findRefreshFamily(record.id, NOW)
        expect(found).toEqual(record)
        expectDeepFrozen(found)
        expect(await store.findRefreshFamilyByTokenHash(record.tokenHashes[0]!, NOW)).toEqual(record)
        expect(await store.findRefreshFamilyByTokenHash(randomHash(), NOW)).toBeUndefined()
        expect(await store.findRefreshFamily(record.id, record.retainUntil)).toBeUndefined()
        expect(
          await store.findRefreshFamilyByTokenHash(record.tokenHashes[0]!, record.retainUntil),
        ).toBeUndefined()
        expect(await store.findRefreshFamily('rf_0000000000000000', NOW)).toBeUndefined()
      })

      it('re-indexes the token hashes on a replacement', async () => {
        const record = family()
        await store.saveRefreshFamily(record)
        const [first] = record.tokenHashes
        const second = randomHash()
        const third = randomHash()
        const rotated = { ...record, version: 1, tokenHashes: [first!, second] }
        expect(await store.replaceRefreshFamily(rotated)).toBe(true)
        expect(await store.findRefreshFamilyByTokenHash(first!, NOW)).toEqual(rotated)
        expect(await store.findRefreshFamilyByTokenHash(second, NOW)).toEqual(rotated)
        // A hash dropped from the list is forgotten.
        const trimmed = { ...rotated, version: 2, tokenHashes: [second, third] }
        expect(await store.replaceRefreshFamily(trimmed)).toBe(true)
        expect(await store.findRefreshFamilyByTokenHash(first!, NOW)).toBeUndefined()
        expect(await store.findRefreshFamilyByTokenHash(third, NOW)).toEqual(trimmed)
      })

      it('keeps ids and token hashes unique across families', async () => {
        const a = family()
        await store.saveRefreshFamily(a)
        await expect(store.saveRefreshFamily(family({ id: a.id }))).rejects.toThrow(TokenStoreError)
        await expect(store.saveRefreshFamily(family({ tokenHashes: [a.tokenHashes[0]!] }))).rejects.toThrow(
          TokenStoreError,
        )
        const b = family()
        await store.saveRefreshFamily(b)
        await expect(
          store.replaceRefreshFamily({
            ...b,
            version: 1,
            tokenHashes: [...b.tokenHashes, a.tokenHashes[0]!],
          }),
        ).rejects.toThrow(TokenStoreError)
        expect(await store.findRefreshFamilyByTokenHash(a.tokenHashes[0]!, NOW)).toEqual(a)
      })

      it('replaces by compare-and-set, exactly one concurrent winner', async () => {
        const record = family()
        await store.saveRefreshFamily(record)
        const results = await Promise.all(
          Array.from({ length: 4 }, () =>
            store.replaceRefreshFamily({
              ...record,
              version: 1,
              tokenHashes: [...record.tokenHashes, randomHash()],
            }),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(await store.replaceRefreshFamily(family({ version: 1 }))).toBe(false)
      })

      it('refuses an invalid record', async () => {
        await expect(store.saveRefreshFamily({ ...family(), tokenHashes: [] })).rejects.toThrow(
          TokenStoreError,
        )
        await expect(store.replaceRefreshFamily({ ...family(), id: 'x' })).rejects.toThrow(TokenStoreError)
      })
    })

    describe('wrong user-code entries', () => {
      it('counts per key within a window that opens at the first failure', async () => {
        const key = `session-${generateRandomBase62(12)}`
        const other = `session-${generateRandomBase62(12)}`
        expect(await store.countUserCodeFailures(key, NOW)).toBe(0)
        expect(await store.recordUserCodeFailure(key, NOW, 1000)).toBe(1)
        expect(await store.recordUserCodeFailure(key, NOW + 999, 1000)).toBe(2)
        expect(await store.countUserCodeFailures(key, NOW + 999)).toBe(2)
        expect(await store.countUserCodeFailures(other, NOW)).toBe(0)
        expect(await store.countUserCodeFailures(key, NOW + 1000)).toBe(0)
        expect(await store.recordUserCodeFailure(key, NOW + 1000, 1000)).toBe(1)
      })

      it('counts concurrent failures atomically', async () => {
        const key = `session-${generateRandomBase62(12)}`
        const counts = await Promise.all(
          Array.from({ length: 6 }, () => store.recordUserCodeFailure(key, NOW, 60_000)),
        )
        expect([...counts].sort()).toEqual([1, 2, 3, 4, 5, 6])
      })
    })
  })
}
