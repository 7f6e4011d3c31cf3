import { describe, expect, it } from 'vitest'
import { TokenStoreError } from '../../src/errors.js'
import { MemoryTokenStore } from '../../src/tokens/memory-token-store.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'
import { createApiToken, renameToken } from '../../src/tokens/token-record.js'
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
