import { describe, expect, it } from 'vitest'
import { ConfigError, TokenStoreError } from '../../src/errors.js'
import { EndQueue } from '../../src/tokens/end-queue.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { createApiToken, renameToken, revokeToken, rotateToken } from '../../src/tokens/token-record.js'
import { tokenRetainUntil } from '../../src/tokens/token-retention.js'
import { expectFlat, soak } from './retention-soak.js'
import { describeTokenStoreContract } from './token-store-contract.js'

const NOW = Date.UTC(2025, 0, 1)

describeTokenStoreContract('MemoryTokenStore', (now) => new MemoryTokenStore({ now }))

describe('MemoryTokenStore', () => {
  it('keeps instances apart', async () => {
    const a = new MemoryTokenStore()
    const b = new MemoryTokenStore()
    const { record } = createApiToken({ userId: 'alice', name: 'ci', scopes: '', now: NOW })
    await a.save(record)
    expect(await b.findById(record.id)).toBeUndefined()
    expect(await b.listByOwner('alice')).toEqual([])
  })

  it('answers with the same frozen object until the record changes', async () => {
    // Callers may cache what they derive from a record by identity (a WeakMap keyed by the record).
    const store = new MemoryTokenStore()
    const { record, value } = createApiToken({ userId: 'alice', name: 'ci', scopes: '', now: NOW })
    await store.save(record)
    const hash = hashTokenValue(value)
    const first = await store.findByHash(hash)
    expect(await store.findByHash(hash)).toBe(first)
    expect(await store.findById(record.id)).toBe(first)
    await store.update(renameToken(record, 'deploy'))
    expect(await store.findByHash(hash)).not.toBe(first)
    await store.touch(record.id, NOW + 1)
    const touched = await store.findByHash(hash)
    await store.touch(record.id, NOW)
    expect(await store.findByHash(hash)).toBe(touched)
  })

  it('names the offending field when it refuses a record', async () => {
    const store = new MemoryTokenStore()
    const { record } = createApiToken({ userId: 'alice', name: 'ci', scopes: '', now: NOW })
    await expect(store.save({ ...record, scopes: ['data.data'] })).rejects.toThrow(/scopes: /)
    await expect(store.save({ ...record, hint: 'dao_…abcd' })).rejects.toThrow(/hint: must start with dap_/)
  })

  it.each([Number.NaN, -1, 0.5])('refuses to touch with the clock value %s', async (now) => {
    const store = new MemoryTokenStore()
    const { record } = createApiToken({ userId: 'alice', name: 'ci', scopes: '', now: NOW })
    await store.save(record)
    await expect(store.touch(record.id, now)).rejects.toThrow(TokenStoreError)
  })

  it('does not echo an unknown id given to touch (it might be a pasted secret)', async () => {
    const secret = 'dap_0123456789ABCDEFGHIJKLMNOPQRSTUV2jCnw5'
    const error = await new MemoryTokenStore().touch(secret, NOW).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TokenStoreError)
    expect((error as Error).message).not.toContain(secret)
  })
})

describe('MemoryTokenStore: every record has an end', () => {
  it('stays flat under create/revoke churn and OAuth minting once records pass their window', async () => {
    const clock = { now: NOW }
    const store = new MemoryTokenStore({ now: () => clock.now })
    const options = { cycles: 2000, stepMs: 3_600_000, count: async () => store.size, user: 'churner' }
    const samples = await soak(store, clock, options)
    expectFlat(samples, options, 1)
  })

  it('removes a record past its end from every index, even one nobody looks up again', async () => {
    const clock = { now: NOW }
    const store = new MemoryTokenStore({ now: () => clock.now })
    const { record } = createApiToken({ userId: 'alice', name: 'old', scopes: '', lifetimeDays: 7, now: NOW })
    await store.save(record)
    const rotated = rotateToken(record, { overlapMs: 3_600_000, now: NOW + 1 }).record
    await store.rotate(rotated)
    await store.update(revokeToken(rotated, NOW + 2))
    expect(store.size).toBe(1)
    clock.now = tokenRetainUntil(revokeToken(rotated, NOW + 2))!
    // Any operation on the store removes it: here, a lookup of something else.
    expect(store.findByHash('0'.repeat(64))).toBeUndefined()
    expect(store.size).toBe(0)
    // Its id is free again, and neither of its hashes finds anything.
    const again = createApiToken({ id: record.id, userId: 'alice', name: 'new', scopes: '', now: clock.now })
    await store.save(again.record)
    expect(await store.listByOwner('alice')).toEqual([again.record])
    expect(store.findByHash(record.hash)).toBeUndefined()
    expect(store.findByHash(rotated.hash)).toBeUndefined()
  })

  it('refuses a clock that is not a function, and fails closed on a reading that is not epoch ms', async () => {
    expect(() => new MemoryTokenStore({ now: 5 as unknown as () => number })).toThrow(ConfigError)
    expect(() => new MemoryTokenStore({ now: 5 as unknown as () => number })).toThrow(
      /now: must be a function/,
    )
    const store = new MemoryTokenStore({ now: () => Number.NaN })
    expect(() => store.findByHash('0'.repeat(64))).toThrow(TokenStoreError)
    await expect(store.listByOwner('alice')).rejects.toThrow(/epoch milliseconds/)
  })
})

describe('EndQueue', () => {
  it('hands out due entries earliest first, and nothing before it is due', () => {
    const queue = new EndQueue()
    const ends = [50, 10, 40, 10, 30, 20, 70, 60, 0, 90]
    for (const [index, end] of ends.entries()) queue.push(end, `k${index}`)
    expect(queue.size).toBe(ends.length)
    expect(queue.popDue(-1)).toBeUndefined()
    const out: number[] = []
    for (let due = queue.popDue(65); due !== undefined; due = queue.popDue(65)) out.push(due.end)
    expect(out).toEqual([0, 10, 10, 20, 30, 40, 50, 60])
    expect(queue.size).toBe(2)
    expect(queue.popDue(Number.NaN)).toBeUndefined()
    expect(queue.popDue(100)?.key).toBe('k6')
    expect(queue.popDue(100)?.key).toBe('k9')
    expect(queue.popDue(100)).toBeUndefined()
  })
})
