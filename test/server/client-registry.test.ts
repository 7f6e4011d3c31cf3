import { beforeAll, beforeEach, describe, expect, test, vi } from 'vitest'
import { ClientRegistry, VERIFIED_SECRET_TTL_MS } from '../../examples/server/oauth/client-registry.js'
import { hashClientSecret } from '../../src/oauth/index.js'

// The registry's secret checks, counted: the real scrypt, observed.
const checks = vi.hoisted(() => ({ count: 0 }))
vi.mock('../../examples/server/limits/password-hash.js', async (original) => {
  const real = await original<typeof import('../../examples/server/limits/password-hash.js')>()
  return {
    ...real,
    verifyPasswordFor: (network: string | undefined, password: string, stored: string) => {
      checks.count++
      return real.verifyPasswordFor(network, password, stored)
    },
  }
})

const { hashPassword } = await import('../../examples/server/limits/password-hash.js')

const SECRET = 'rs-secret-for-the-registry-test'
let secretHash: string

beforeAll(async () => {
  secretHash = await hashPassword(SECRET)
})

beforeEach(() => {
  checks.count = 0
})

function registry(now: () => number): ClientRegistry {
  return new ClientRegistry(
    [{ id: 'rs', secretHash, redirectUris: [], offline: false, introspect: true }],
    now,
  )
}

// The core's view of the client for one request that presents `secret` in the body.
async function presented(clients: ClientRegistry, secret: string): Promise<string | undefined> {
  const client = await clients.lookupFor(
    { client_id: 'rs', client_secret: secret },
    undefined,
    '192.0.2.1',
  )('rs')
  return client?.secretHash
}

describe('ClientRegistry: a confidential client secret that scrypt accepted', () => {
  test('is recognised without scrypt within the TTL, then checked again', async () => {
    let now = 1_000_000
    const clients = registry(() => now)
    expect(await presented(clients, SECRET)).toBe(hashClientSecret(SECRET))
    expect(checks.count).toBe(1)
    now += VERIFIED_SECRET_TTL_MS - 1
    expect(await presented(clients, SECRET)).toBe(hashClientSecret(SECRET))
    expect(checks.count).toBe(1)
    now += 1
    expect(await presented(clients, SECRET)).toBe(hashClientSecret(SECRET))
    expect(checks.count).toBe(2)
  })

  test('never makes a wrong secret pass, and a wrong secret is never remembered', async () => {
    const clients = registry(() => 1_000_000)
    expect(await presented(clients, SECRET)).toBe(hashClientSecret(SECRET))
    for (let i = 0; i < 2; i++) {
      const answer = await presented(clients, `${SECRET}x`)
      expect(answer).not.toBe(hashClientSecret(`${SECRET}x`))
      expect(answer).not.toBe(hashClientSecret(SECRET))
    }
    // Each wrong one cost its own check; the right one is still known.
    expect(checks.count).toBe(3)
    expect(await presented(clients, SECRET)).toBe(hashClientSecret(SECRET))
    expect(checks.count).toBe(3)
  })

  test('is checked every time under a clock that is not a number', async () => {
    const clients = registry(() => Number.NaN)
    for (let i = 0; i < 2; i++) expect(await presented(clients, SECRET)).toBe(hashClientSecret(SECRET))
    expect(checks.count).toBe(2)
  })
})

describe('ClientRegistry.checkFirst', () => {
  test.each([
    ['client_id in the body', { client_id: 'rs', client_secret: 'wrong' }, undefined],
    ['a Basic header', {}, `Basic ${Buffer.from('rs:wrong').toString('base64')}`],
  ])(
    'checks the secret of the client named by %s once: the later look-up reuses it',
    async (_name, params, authorization) => {
      const clients = registry(() => 1_000_000)
      const lookUp = clients.lookupFor(params, authorization, '192.0.2.1')
      await clients.checkFirst(lookUp, params, authorization)
      expect(checks.count).toBe(1)
      expect((await lookUp('rs'))?.secretHash).not.toBe(hashClientSecret('wrong'))
      expect(checks.count).toBe(1)
    },
  )

  test('checks nothing when the request names no client', async () => {
    const clients = registry(() => 1_000_000)
    await clients.checkFirst(clients.lookupFor({}, undefined), {}, undefined)
    expect(checks.count).toBe(0)
  })
})

describe('ClientRegistry.isKnownIntrospector', () => {
  test('only a resource server whose secret scrypt accepted within the TTL, without scrypt', async () => {
    let now = 1_000_000
    const clients = new ClientRegistry(
      [
        { id: 'rs', secretHash, redirectUris: [], offline: false, introspect: true },
        { id: 'app', secretHash, redirectUris: [], offline: false, introspect: false },
      ],
      () => now,
    )
    const body = (id: string, secret: string) => ({ client_id: id, client_secret: secret })
    const header = (id: string, secret: string) =>
      `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
    expect(clients.isKnownIntrospector(body('rs', SECRET), undefined)).toBe(false)
    for (const id of ['rs', 'app']) {
      await clients.lookupFor(body(id, SECRET), undefined)(id)
    }
    expect(checks.count).toBe(2)
    expect(clients.isKnownIntrospector(body('rs', SECRET), undefined)).toBe(true)
    expect(clients.isKnownIntrospector({}, header('rs', SECRET))).toBe(true)
    expect(clients.isKnownIntrospector(body('rs', `${SECRET}x`), undefined)).toBe(false)
    expect(clients.isKnownIntrospector({ client_id: 'rs' }, undefined)).toBe(false)
    // A client proven but not allowed to introspect, or one nobody registered.
    expect(clients.isKnownIntrospector(body('app', SECRET), undefined)).toBe(false)
    expect(clients.isKnownIntrospector(body('nobody', SECRET), undefined)).toBe(false)
    expect(checks.count).toBe(2)
    now += VERIFIED_SECRET_TTL_MS
    expect(clients.isKnownIntrospector(body('rs', SECRET), undefined)).toBe(false)
  })
})
