/**
 * Loading the seed's tokens into a store that already holds them — what a `--store redis://…`
 * instance does when it joins others, or restarts with an edited seed. The loader only speaks the
 * `TokenStore` interface, so the memory store stands in for Redis here (redis-store.test.ts runs
 * the same on a real one): a seed revocation reaches the stored token, a stored revocation is never
 * undone, and the stored scopes and expiry stand, with one warning line that never holds the value.
 */
import { describe, expect, test } from 'vitest'
import { createApp } from '../../examples/server/app.js'
import { loadSeed } from '../../examples/server/seed/load.js'
import { loadSeedTokens } from '../../examples/server/seed/tokens.js'
import {
  MemoryTokenStore,
  rescopeToken,
  revokeToken,
  type TokenRecord,
  type TokenStore,
  TokenStoreError,
  tokenStatus,
} from '../../src/index.js'
import { hashTokenValue } from '../../src/tokens/token-hash.js'

const CI = 'dap_9dzMtUcaWCDPen7A6qZ22SWPZrBH2Tke23VPIp'
const BOT = 'dap_nylvAnFwueaXrE1htKmge6DBocagMgau1JMrMh'
const T0 = 1_700_000_000_000
const EXPIRY = '2030-01-01T00:00:00Z'

interface SeedToken {
  readonly value: string
  readonly name: string
  readonly scopes?: readonly string[]
  readonly expiresAt?: string
  readonly revoked?: boolean
}

function seedOf(tokens: readonly SeedToken[]) {
  return {
    users: [{ handle: 'alice', password: 'pw' }],
    organizations: [],
    datasets: [{ owner: 'alice', name: 'notes', publicLevel: 'none' }],
    tokens: tokens.map((token) => ({ user: 'alice', scopes: ['data.overview'], ...token })),
  }
}

async function recordsOf(tokens: readonly SeedToken[], now = T0): Promise<readonly TokenRecord[]> {
  return (await loadSeed(seedOf(tokens), now)).tokens
}

async function stored(store: TokenStore, value: string): Promise<TokenRecord> {
  const record = await store.findByHash(hashTokenValue(value))
  if (record === undefined) throw new Error('not in the store')
  return record
}

/** A store that already holds the first seed's tokens, as another instance left it. */
async function storeWith(tokens: readonly SeedToken[]): Promise<MemoryTokenStore> {
  const store = new MemoryTokenStore({ now: () => T0 })
  await loadSeedTokens(store, await recordsOf(tokens), { warn: () => {} })
  return store
}

async function load(store: TokenStore, tokens: readonly SeedToken[], now = T0 + 60_000) {
  const warnings: string[] = []
  await loadSeedTokens(store, await recordsOf(tokens, now), { warn: (line) => warnings.push(line) })
  return warnings
}

describe('seed tokens into a store that already holds them', () => {
  test('a new seed token is saved; a second load changes nothing and says nothing', async () => {
    const store = new MemoryTokenStore({ now: () => T0 })
    expect(await load(store, [{ value: CI, name: 'ci' }])).toEqual([])
    const first = await stored(store, CI)
    expect(first).toMatchObject({ name: 'ci', scopes: ['public', 'data.overview'] })
    expect(await load(store, [{ value: CI, name: 'ci' }])).toEqual([])
    expect(await stored(store, CI)).toBe(first)
    expect(await store.listByOwner('alice')).toHaveLength(1)
  })

  test('a token the seed now says is revoked is revoked in the store, and refused by the API', async () => {
    const store = await storeWith([
      { value: CI, name: 'ci' },
      { value: BOT, name: 'bot' },
    ])
    const before = await stored(store, CI)
    expect(tokenStatus(before, T0)).toBe('active')
    const warnings = await load(store, [
      { value: CI, name: 'ci', revoked: true },
      { value: BOT, name: 'bot' },
    ])
    expect(warnings).toEqual([])
    const after = await stored(store, CI)
    expect(after.id).toBe(before.id)
    expect(after.revokedAt).toBe(T0 + 60_000)
    expect(tokenStatus(after, T0 + 60_000)).toBe('revoked')
    // The other token is untouched.
    expect((await stored(store, BOT)).revokedAt).toBeUndefined()

    // Through the app the API is built on: the shared store's token no longer authenticates.
    const app = await createApp(await loadSeed(seedOf([{ value: CI, name: 'ci', revoked: true }])), {
      tokens: store,
    })
    const result = await app.policy.authenticate({
      authorization: [`Bearer ${CI}`],
      protocol: 'http',
      clientAddress: '127.0.0.1',
    })
    expect(result).toMatchObject({ ok: false, decision: { code: 'invalid_token' } })
  })

  test('a revocation is permanent: a seed that no longer says revoked does not bring the token back', async () => {
    const store = await storeWith([{ value: CI, name: 'ci', revoked: true }])
    const revoked = await stored(store, CI)
    expect(revoked.revokedAt).toBe(T0)
    expect(await load(store, [{ value: CI, name: 'ci' }])).toEqual([])
    expect(await stored(store, CI)).toBe(revoked)

    // Revoked on the settings pages, then seeded as revoked too: the first revocation stands.
    const pages = await storeWith([{ value: BOT, name: 'bot' }])
    await pages.update(revokeToken(await stored(pages, BOT), T0 + 1000))
    expect(await load(pages, [{ value: BOT, name: 'bot', revoked: true }])).toEqual([])
    expect((await stored(pages, BOT)).revokedAt).toBe(T0 + 1000)
  })

  test('changed scopes and expiry: the stored ones stand, with one warning line that holds no value', async () => {
    const store = await storeWith([
      { value: CI, name: 'ci', scopes: ['data.data'], expiresAt: EXPIRY },
      { value: BOT, name: 'bot' },
    ])
    // As the settings pages leave it: rescoped.
    await store.update(rescopeToken(await stored(store, CI), 'data.metadata'))
    const before = await stored(store, CI)

    const warnings = await load(store, [
      { value: CI, name: 'ci', scopes: ['data.data'], expiresAt: EXPIRY },
      { value: BOT, name: 'bot', expiresAt: EXPIRY },
    ])
    expect(warnings).toEqual([
      'warning: seed tokens[0] ("ci" of alice, dap_…VPIp) differs from the stored token, which stands: scopes "public data.metadata" (seed: "public data.data")',
      'warning: seed tokens[1] ("bot" of alice, dap_…MrMh) differs from the stored token, which stands: expiry none (seed: 2030-01-01T00:00:00.000Z)',
    ])
    for (const line of warnings) {
      expect(line).not.toContain('\n')
      for (const value of [CI, BOT]) expect(line).not.toContain(value.slice(4, -4))
    }
    expect(await stored(store, CI)).toBe(before)
    expect((await stored(store, BOT)).expiresAt).toBeUndefined()
  })

  test('the same scopes in another order are the same scopes', async () => {
    const store = await storeWith([{ value: CI, name: 'ci', scopes: ['data.overview', 'wokflow.read'] }])
    expect(await load(store, [{ value: CI, name: 'ci', scopes: ['wokflow.read', 'data.overview'] }])).toEqual(
      [],
    )
  })

  test('two instances loading one seed together: saved once, revoked once, no error', async () => {
    const store = new MemoryTokenStore({ now: () => T0 })
    const seed = [{ value: CI, name: 'ci' }]
    await Promise.all([load(store, seed), load(store, seed)])
    expect(await store.listByOwner('alice')).toHaveLength(1)
    const revoked = [{ value: CI, name: 'ci', revoked: true }]
    await Promise.all([load(store, revoked, T0 + 1), load(store, revoked, T0 + 2)])
    expect((await stored(store, CI)).revokedAt).toBeDefined()
  })

  test('a store that fails is an error, not a silently skipped token', async () => {
    const store = await storeWith([{ value: CI, name: 'ci' }])
    const failing: TokenStore = {
      findByHash: (hash) => store.findByHash(hash),
      findById: async () => undefined,
      save: (record) => store.save(record),
      update: async () => {
        throw new TokenStoreError('Redis is away')
      },
      listByOwner: (userId) => store.listByOwner(userId),
      touch: (id, now) => store.touch(id, now),
    }
    await expect(load(failing, [{ value: CI, name: 'ci', revoked: true }])).rejects.toThrow('Redis is away')
  })
})
