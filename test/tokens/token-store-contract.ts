import { beforeEach, describe, expect, it } from 'vitest'
import { TokenStoreError } from '../../src/errors.js'
import { generateRandomBase62 } from '../../src/tokens/token-format.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import {
  type CreateApiTokenOptions,
  createApiToken,
  createOAuthToken,
  renameToken,
  rescopeToken,
  revokeToken,
  rotateToken,
  type TokenRecord,
  tokenStatusOfHash,
  touchToken,
} from '../../src/tokens/token-record.js'
import { EXPIRED_DISPLAY_MS, REVOKED_DISPLAY_MS, tokenRetainUntil } from '../../src/tokens/token-retention.js'
import type { TokenStore } from '../../src/tokens/token-store.js'

// A frozen clock: 2025-01-01T00:00:00Z.
const NOW = Date.UTC(2025, 0, 1)

/** What the suite may ask of a store's backing storage (Redis) beyond the TokenStore interface. */
export interface TokenStoreContractOptions {
  /**
   * The remaining lifetime (ms, Redis `PTTL`: -1 for none) of every key the store holds for these
   * records of `owner`, index entries included; the suite checks that each ends with its record.
   */
  readonly keyLifetimes?: (owner: string, records: readonly TokenRecord[]) => Promise<readonly number[]>
}

/**
 * The behaviour every {@link TokenStore} must show, as a vitest suite. `makeStore` is called before
 * each test with the suite's clock, which the store must use to decide when a record's end
 * (`tokenRetainUntil`) has come; the suite moves it. It uses fresh random ids, hashes and owners,
 * so a shared backing store (one Redis database for the whole run) need not be emptied between
 * tests, and a store made once may be handed out again (the clock is the same function).
 *
 * @example
 * describeTokenStoreContract('MemoryTokenStore', (now) => new MemoryTokenStore({ now }))
 */
export function describeTokenStoreContract(
  name: string,
  makeStore: (now: () => number) => TokenStore | Promise<TokenStore>,
  options: TokenStoreContractOptions = {},
): void {
  describe(`${name} keeps the TokenStore contract`, () => {
    let store: TokenStore
    let owner: string
    let clock = NOW
    const now = () => clock

    beforeEach(async () => {
      clock = NOW
      store = await makeStore(now)
      owner = `user-${generateRandomBase62(12)}`
    })

    function create(overrides: Partial<CreateApiTokenOptions> = {}): { record: TokenRecord; value: string } {
      return createApiToken({ userId: owner, name: 'ci', scopes: 'data.data', now: NOW, ...overrides })
    }

    async function saved(overrides: Partial<CreateApiTokenOptions> = {}): Promise<TokenRecord> {
      const { record } = create(overrides)
      await store.save(record)
      return record
    }

    describe('save and find', () => {
      it('finds a saved record by the hash of its value and by its id', async () => {
        const { record, value } = create({ expiresAt: NOW + 1000 })
        await store.save(record)
        expect(await store.findByHash(hashTokenValue(value))).toEqual(record)
        expect(await store.findById(record.id)).toEqual(record)
      })

      it('keeps an OAuth record with its client id', async () => {
        const { record, value } = createOAuthToken({
          userId: owner,
          scopes: 'data.metadata',
          clientId: 'cli',
          now: NOW,
        })
        await store.save(record)
        expect(await store.findByHash(hashTokenValue(value))).toEqual(record)
      })

      it('returns frozen records', async () => {
        const record = await saved()
        const found = (await store.findById(record.id))!
        expect(Object.isFrozen(found)).toBe(true)
        expect(Object.isFrozen(found.scopes)).toBe(true)
      })

      it('answers undefined for an unknown hash or id', async () => {
        expect(await store.findByHash(hashTokenValue(`unknown-${generateRandomBase62(8)}`))).toBeUndefined()
        expect(await store.findByHash('not a hash')).toBeUndefined()
        expect(await store.findById(`tok_${generateRandomBase62(16)}`)).toBeUndefined()
      })

      it('is not affected by later changes to the object it was given', async () => {
        const { record } = create()
        const copy = { ...record, scopes: [...record.scopes] }
        await store.save(copy)
        copy.scopes.push('data.edit')
        Object.assign(copy, { name: 'changed' })
        expect(await store.findById(record.id)).toEqual(record)
      })

      it('refuses a duplicate id', async () => {
        const record = await saved()
        const other = create({ id: record.id }).record
        await expect(store.save(other)).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(record)
      })

      it('refuses a duplicate hash', async () => {
        const record = await saved()
        const other = { ...create().record, hash: record.hash }
        await expect(store.save(other)).rejects.toThrow(TokenStoreError)
        expect(await store.findById(other.id)).toBeUndefined()
      })

      it.each([
        ['a token value field', { value: 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5' }],
        ['scopes without public', { scopes: ['data.data'] }],
        ['a malformed hash', { hash: 'abc' }],
        ['an explicit undefined field', { expiresAt: undefined }],
      ])('refuses to save a record with %s', async (_, overrides) => {
        const invalid = { ...create().record, ...overrides } as TokenRecord
        await expect(store.save(invalid)).rejects.toThrow(TokenStoreError)
        expect(await store.findById(invalid.id)).toBeUndefined()
      })

      it('never puts a token value in an error message', async () => {
        const value = 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5'
        const invalid = { ...create().record, value } as TokenRecord
        const error = await store.save(invalid).catch((e: unknown) => e)
        expect(error).toBeInstanceOf(TokenStoreError)
        expect(String((error as Error).message)).not.toContain(value.slice(4))
      })
    })

    describe('update', () => {
      it.each([
        ['a rename', (r: TokenRecord) => renameToken(r, 'deploy')],
        ['a scope change', (r: TokenRecord) => rescopeToken(r, 'data.overview')],
        ['a revocation', (r: TokenRecord) => revokeToken(r, NOW + 5)],
        ['a recorded use', (r: TokenRecord) => touchToken(r, NOW + 5)],
      ])('makes %s visible to the very next lookup', async (_, change) => {
        const { record, value } = create()
        await store.save(record)
        const changed = change(record)
        await store.update(changed)
        expect(await store.findByHash(hashTokenValue(value))).toEqual(changed)
        expect(await store.findById(record.id)).toEqual(changed)
        expect(await store.listByOwner(owner)).toEqual([changed])
      })

      it('keeps an OAuth token bound to its audience: an update may not drop or change it', async () => {
        const { record } = createOAuthToken({
          userId: owner,
          scopes: 'data.metadata',
          audience: ['https://data.example.org/api/v1'],
          now: NOW,
          ttlMs: 60_000,
        })
        await store.save(record)
        const { audience: _dropped, ...unbound } = record
        await expect(store.update(unbound)).rejects.toThrow('audience cannot change')
        await expect(store.update({ ...record, audience: ['https://other.example/api'] })).rejects.toThrow(
          'audience cannot change',
        )
        const renamed = { ...record, name: 'OAuth session (renamed)', audience: [...record.audience!] }
        await store.update(renamed)
        expect((await store.findById(record.id))?.audience).toEqual(record.audience)
      })

      it('refuses an unknown id', async () => {
        const { record } = create()
        await expect(store.update(record)).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toBeUndefined()
      })

      it.each([
        ['its hash', (r: TokenRecord) => ({ ...r, hash: create().record.hash })],
        ['its owner', (r: TokenRecord) => ({ ...r, userId: `${r.userId}-other` })],
        [
          'its kind',
          (r: TokenRecord) => ({ ...r, kind: 'oauth' as const, hint: r.hint.replace('dap_', 'dao_') }),
        ],
        ['its creation date', (r: TokenRecord) => ({ ...r, createdAt: r.createdAt + 1 })],
      ])('refuses to change %s', async (_, change) => {
        const record = await saved()
        await expect(store.update(change(record))).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(record)
      })

      it('refuses an invalid record', async () => {
        const record = await saved()
        await expect(store.update({ ...record, name: '' })).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(record)
      })

      it('keeps a revocation permanent: it cannot be cleared or moved', async () => {
        const record = await saved()
        const revoked = revokeToken(record, NOW + 5)
        await store.update(revoked)
        // A stale copy read before the revocation must not resurrect the token.
        await expect(store.update(renameToken(record, 'stale'))).rejects.toThrow(TokenStoreError)
        await expect(store.update({ ...revoked, revokedAt: NOW + 6 })).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(revoked)
        const renamed = renameToken(revoked, 'archived')
        await store.update(renamed)
        expect(await store.findById(record.id)).toEqual(renamed)
      })
    })

    describe('listByOwner', () => {
      it('lists only the owner’s tokens, oldest first, frozen', async () => {
        const third = await saved({ now: NOW + 30, name: 'third' })
        const first = await saved({ now: NOW + 10, name: 'first' })
        const second = await saved({ now: NOW + 20, name: 'second' })
        await store.save(createApiToken({ userId: `${owner}-other`, name: 'x', scopes: '', now: NOW }).record)
        const listed = await store.listByOwner(owner)
        expect(listed).toEqual([first, second, third])
        expect(Object.isFrozen(listed)).toBe(true)
        for (const record of listed) expect(Object.isFrozen(record)).toBe(true)
      })

      it('orders tokens created in the same millisecond by id', async () => {
        const b = await saved({ id: `b-${generateRandomBase62(8)}` })
        const c = await saved({ id: `c-${generateRandomBase62(8)}` })
        const a = await saved({ id: `a-${generateRandomBase62(8)}` })
        expect(await store.listByOwner(owner)).toEqual([a, b, c])
      })

      it('includes revoked and expired tokens but never a value', async () => {
        const { record, value } = create({ expiresAt: NOW + 1 })
        await store.save(record)
        await store.update(revokeToken(record, NOW))
        const listed = await store.listByOwner(owner)
        expect(listed).toHaveLength(1)
        expect(JSON.stringify(listed)).not.toContain(value.slice(4))
      })

      it('answers an empty list for an unknown owner', async () => {
        expect(await store.listByOwner(`${owner}-nobody`)).toEqual([])
      })
    })

    describe('touch', () => {
      it('sets lastUsedAt and never moves it backwards', async () => {
        const record = await saved()
        await store.touch(record.id, NOW + 100)
        expect((await store.findById(record.id))?.lastUsedAt).toBe(NOW + 100)
        await store.touch(record.id, NOW + 50)
        expect((await store.findById(record.id))?.lastUsedAt).toBe(NOW + 100)
        await store.touch(record.id, NOW + 200)
        expect(await store.findById(record.id)).toEqual({ ...record, lastUsedAt: NOW + 200 })
      })

      it('changes only lastUsedAt: a late touch cannot undo a revocation or scope change', async () => {
        const { record, value } = create()
        await store.save(record)
        const changed = revokeToken(rescopeToken(record, 'data.overview'), NOW + 5)
        await store.update(changed)
        await store.touch(record.id, NOW + 10)
        expect(await store.findByHash(hashTokenValue(value))).toEqual({ ...changed, lastUsedAt: NOW + 10 })
      })

      it('returns frozen records after a touch', async () => {
        const record = await saved()
        await store.touch(record.id, NOW + 1)
        expect(Object.isFrozen(await store.findById(record.id))).toBe(true)
      })

      it('refuses an unknown id', async () => {
        await expect(store.touch(`tok_${generateRandomBase62(16)}`, NOW)).rejects.toThrow(TokenStoreError)
      })

      it('records the network of the use with its time, and keeps it with the use kept', async () => {
        const record = await saved()
        await store.touch(record.id, NOW + 100, '2001:db8:1:2::/64')
        expect(await store.findById(record.id)).toEqual({
          ...record,
          lastUsedAt: NOW + 100,
          lastUsedFrom: '2001:db8:1:2::/64',
        })
        // An older use does not replace the network; a later use without one drops it.
        await store.touch(record.id, NOW + 50, '203.0.113.7')
        expect((await store.findById(record.id))?.lastUsedFrom).toBe('2001:db8:1:2::/64')
        await store.touch(record.id, NOW + 200, '203.0.113.7')
        expect((await store.findById(record.id))?.lastUsedFrom).toBe('203.0.113.7')
        await store.touch(record.id, NOW + 300)
        expect((await store.findById(record.id))?.lastUsedFrom).toBeUndefined()
      })

      it('refuses a network that is not one', async () => {
        const record = await saved()
        await expect(store.touch(record.id, NOW + 1, 'not a network')).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(record)
      })
    })

    describe('rotate', () => {
      const rotate = (record: TokenRecord) => {
        if (store.rotate === undefined) throw new Error('this store cannot rotate')
        return store.rotate(record)
      }

      it('finds the token by both values during the overlap, one record, listed once', async () => {
        const { record, value } = create({ lifetimeDays: 30 })
        await store.save(record)
        const { record: rotated, value: next } = rotateToken(record, { overlapMs: 3_600_000, now: NOW + 10 })
        await rotate(rotated)
        expect(await store.findByHash(hashTokenValue(next))).toEqual(rotated)
        expect(await store.findByHash(hashTokenValue(value))).toEqual(rotated)
        expect(await store.findById(record.id)).toEqual(rotated)
        expect(await store.listByOwner(owner)).toEqual([rotated])
        expect(tokenStatusOfHash(rotated, hashTokenValue(value), NOW + 10)).toBe('active')
        expect(tokenStatusOfHash(rotated, hashTokenValue(value), NOW + 10 + 3_600_000)).toBe('expired')
      })

      it('applies a later change (a revocation) to both values at once', async () => {
        const { record, value } = create()
        await store.save(record)
        const { record: rotated, value: next } = rotateToken(record, { overlapMs: 3_600_000, now: NOW + 10 })
        await rotate(rotated)
        const revoked = revokeToken(rotated, NOW + 20)
        await store.update(revoked)
        expect(await store.findByHash(hashTokenValue(next))).toEqual(revoked)
        expect(await store.findByHash(hashTokenValue(value))).toEqual(revoked)
        await store.touch(record.id, NOW + 30, '203.0.113.7')
        expect((await store.findById(record.id))?.revokedAt).toBe(NOW + 20)
      })

      it('forgets the value two rotations back', async () => {
        const { record, value: first } = create()
        await store.save(record)
        const second = rotateToken(record, { overlapMs: 3_600_000, now: NOW + 10 })
        await rotate(second.record)
        const third = rotateToken(second.record, { overlapMs: 3_600_000, now: NOW + 20 })
        await rotate(third.record)
        expect(await store.findByHash(hashTokenValue(first))).toBeUndefined()
        expect(await store.findByHash(hashTokenValue(second.value))).toEqual(third.record)
        expect(await store.findByHash(hashTokenValue(third.value))).toEqual(third.record)
        expect(await store.listByOwner(owner)).toEqual([third.record])
      })

      it.each([
        [
          'a stale record (rotated meanwhile)',
          async (r: TokenRecord) => {
            const first = rotateToken(r, { overlapMs: 0, now: NOW + 10 })
            await rotate(first.record)
            return rotateToken(r, { overlapMs: 0, now: NOW + 11 }).record
          },
        ],
        [
          'a revoked token',
          async (r: TokenRecord) => {
            const rotated = rotateToken(r, { overlapMs: 0, now: NOW + 10 }).record
            await store.update(revokeToken(r, NOW + 5))
            return rotated
          },
        ],
        ['an unchanged hash', async (r: TokenRecord) => renameToken(r, 'same value')],
        [
          'another owner',
          async (r: TokenRecord) => ({
            ...rotateToken(r, { overlapMs: 0, now: NOW + 10 }).record,
            userId: `${r.userId}-other`,
          }),
        ],
      ])('refuses %s and keeps the stored record', async (_, make) => {
        const record = await saved()
        const next = await make(record)
        const before = await store.findById(record.id)
        await expect(rotate(next)).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(before)
        if (next.hash !== record.hash) expect(await store.findByHash(next.hash)).toBeUndefined()
      })

      it('refuses a hash another token holds', async () => {
        const other = await saved({ name: 'other' })
        const record = await saved()
        const rotated = { ...rotateToken(record, { overlapMs: 0, now: NOW + 10 }).record, hash: other.hash }
        await expect(rotate(rotated)).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(record)
        expect(await store.findById(other.id)).toEqual(other)
      })

      it('refuses an unknown id', async () => {
        const { record } = create()
        await expect(rotate(rotateToken(record, { overlapMs: 0, now: NOW }).record)).rejects.toThrow(
          TokenStoreError,
        )
      })

      it('keeps a rotation’s hashes: an update cannot change them', async () => {
        const record = await saved()
        const rotated = rotateToken(record, { overlapMs: 3_600_000, now: NOW + 10 }).record
        await rotate(rotated)
        await expect(store.update({ ...rotated, previousHashExpiresAt: NOW + 10 ** 9 })).rejects.toThrow(
          TokenStoreError,
        )
        await expect(store.update(renameToken(record, 'stale'))).rejects.toThrow(TokenStoreError)
        expect(await store.findById(record.id)).toEqual(rotated)
      })
    })

    describe('every record has an end', () => {
      // The record, a value of it, and its end.
      type Ending = { record: TokenRecord; value: string; end: number }
      const cases: [string, () => Promise<Ending>][] = [
        [
          'a revoked token',
          async () => {
            const { record, value } = create()
            await store.save(record)
            const revoked = revokeToken(record, NOW + 5)
            await store.update(revoked)
            return { record: revoked, value, end: NOW + 5 + REVOKED_DISPLAY_MS }
          },
        ],
        [
          'an expired token',
          async () => {
            const { record, value } = create({ expiresAt: NOW + 1000 })
            await store.save(record)
            return { record, value, end: NOW + 1000 + EXPIRED_DISPLAY_MS }
          },
        ],
        [
          'an expired OAuth token',
          async () => {
            const { record, value } = createOAuthToken({
              userId: owner,
              scopes: '',
              clientId: 'cli',
              now: NOW,
            })
            await store.save(record)
            return { record, value, end: record.expiresAt! + EXPIRED_DISPLAY_MS }
          },
        ],
        [
          'a revoked token that would expire later',
          async () => {
            const { record, value } = create({ lifetimeDays: 90 })
            await store.save(record)
            const revoked = revokeToken(record, NOW + 5)
            await store.update(revoked)
            return { record: revoked, value, end: record.expiresAt! + EXPIRED_DISPLAY_MS }
          },
        ],
        [
          'a rotated token, by its replaced value',
          async () => {
            const { record, value } = create({ lifetimeDays: 7 })
            await store.save(record)
            const rotated = rotateToken(record, { overlapMs: 3_600_000, now: NOW + 10 }).record
            await store.rotate?.(rotated)
            const revoked = revokeToken(rotated, NOW + 20)
            await store.update(revoked)
            return { record: revoked, value, end: tokenRetainUntil(revoked)! }
          },
        ],
      ]

      it.each(cases)('keeps %s until its end, then no lookup or listing returns it', async (_, make) => {
        const { record, value, end } = await make()
        clock = end - 1
        expect(await store.findByHash(hashTokenValue(value))).toEqual(record)
        expect(await store.findById(record.id)).toEqual(record)
        expect(await store.listByOwner(owner)).toEqual([record])
        clock = end
        expect(await store.findByHash(hashTokenValue(value))).toBeUndefined()
        expect(await store.findByHash(record.hash)).toBeUndefined()
        expect(await store.findById(record.id)).toBeUndefined()
        expect(await store.listByOwner(owner)).toEqual([])
        await expect(store.update(renameToken(record, 'late'))).rejects.toThrow(TokenStoreError)
        await expect(store.touch(record.id, end)).rejects.toThrow(TokenStoreError)
      })

      it('keeps a live token without expiry for good, and one that expires until its end', async () => {
        const forever = await saved({ name: 'forever' })
        const dated = await saved({ name: 'dated', expiresAt: NOW + 2000 })
        clock = NOW + 2000 + EXPIRED_DISPLAY_MS
        await store.touch(forever.id, clock)
        expect(await store.listByOwner(owner)).toEqual([{ ...forever, lastUsedAt: clock }])
        clock = NOW + 100 * 365 * 86_400_000
        expect((await store.findById(forever.id))?.id).toBe(forever.id)
        expect(await store.findById(dated.id)).toBeUndefined()
      })

      it('keeps the end a touch or rename leaves alone, and moves it with a revocation', async () => {
        const { record, value } = create({ expiresAt: NOW + 1000 })
        await store.save(record)
        await store.touch(record.id, NOW + 500, '203.0.113.7')
        await store.update(renameToken((await store.findById(record.id))!, 'renamed'))
        clock = NOW + 1000 + EXPIRED_DISPLAY_MS - 1
        const revoked = revokeToken((await store.findById(record.id))!, clock)
        await store.update(revoked)
        clock = NOW + 1000 + EXPIRED_DISPLAY_MS + 1
        expect(await store.findByHash(hashTokenValue(value))).toEqual(revoked)
        clock = revoked.revokedAt! + REVOKED_DISPLAY_MS
        expect(await store.findByHash(hashTokenValue(value))).toBeUndefined()
      })

      it('lets nothing outlive the end of many revoked tokens', async () => {
        const values: string[] = []
        for (let index = 0; index < 20; index++) {
          const { record, value } = create({ name: `churn ${index}`, now: NOW + index })
          await store.save(record)
          await store.update(revokeToken(record, NOW + index))
          values.push(value)
        }
        clock = NOW + 19 + REVOKED_DISPLAY_MS
        await store.save(create({ name: 'after', now: clock }).record)
        expect((await store.listByOwner(owner)).map((record) => record.name)).toEqual(['after'])
        for (const value of values) expect(await store.findByHash(hashTokenValue(value))).toBeUndefined()
      })

      const keyLifetimes = options.keyLifetimes
      if (keyLifetimes !== undefined) {
        it('gives every key of a record that ends an expiry at its end, and none to a live token', async () => {
          const { end, record } = await cases[4]![1]()
          const ended = await keyLifetimes(owner, [record])
          expect(ended.length).toBeGreaterThanOrEqual(3)
          // The keys end with the record, give or take the store's grace and the time the test took.
          for (const lifetime of ended) {
            expect(lifetime).toBeGreaterThan(0)
            expect(lifetime).toBeLessThanOrEqual(end - NOW + 120_000)
          }
          expect(Math.max(...ended)).toBeGreaterThan(end - NOW - 120_000)
          // A live token without expiry: its keys, and the owner index that now holds it, stay.
          const forever = await saved({ name: 'forever' })
          for (const lifetime of await keyLifetimes(owner, [forever])) expect(lifetime).toBe(-1)
        })
      }
    })
  })
}
