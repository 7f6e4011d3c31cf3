/**
 * The pieces behind issue 27's limits: the network a client address counts in
 * (examples/server/limits/networks.ts) and the in-memory pending consents, bounded per owner and in
 * all (examples/server/oauth/pending-consents.ts). Over HTTP: abuse-hardening.redis.test.ts.
 */
import { describe, expect, test } from 'vitest'
import { networkOf } from '../../examples/server/limits/networks.js'
import {
  CONSENT_TTL_MS,
  type ConsentSubject,
  grantOwner,
  MAX_PENDING_CONSENTS_PER_GRANT,
  MemoryPendingConsents,
  ownerBound,
} from '../../examples/server/oauth/pending-consents.js'
import { parseScopes } from '../../src/index.js'

describe('networkOf', () => {
  test.each([
    ['198.51.100.7', 64, '198.51.100.7'],
    ['::ffff:198.51.100.7', 64, '198.51.100.7'],
    ['::ffff:c633:6407', 64, '198.51.100.7'],
    ['2001:db8:1:2:3:4:5:6', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:2::', 64, '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:ffff:ffff:ffff:ffff', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:2:3:4:5:6', 48, '2001:db8:1::/48'],
    ['2001:db8:1:2:3:4:5:6', 128, '2001:db8:1:2:3:4:5:6/128'],
    ['2001:db8:1:2:3:4:5:6', 1, '::/1'],
    ['fe80::1%eth0', 64, 'fe80::/64'],
    ['::1', 64, '::/64'],
    // Whatever the strict parser refuses is one shared client: fail closed.
    ['010.1.1.1', 64, 'unknown'],
    ['10.1', 64, 'unknown'],
    ['198.51.100.7:443', 64, 'unknown'],
    ['', 64, 'unknown'],
    [undefined, 64, 'unknown'],
  ] as const)('%s with /%i → %s', (address, prefix, network) => {
    expect(networkOf(address, prefix)).toBe(network)
  })
})

describe('MemoryPendingConsents', () => {
  const subject: ConsentSubject = {
    kind: 'code',
    request: {
      redirectUri: 'https://app.example/cb',
      scopes: parseScopes('data.metadata'),
      codeChallenge: 'c',
    },
    client: undefined,
  }

  test('each owner keeps at most its bound: its own oldest goes, nobody else’s', async () => {
    const consents = new MemoryPendingConsents(() => 0, 2, 100)
    const bob = await consents.create(subject, 'user:bob', 'sb')
    const alice = []
    for (let i = 0; i < 3; i++) alice.push(await consents.create(subject, 'user:alice', 'sa'))
    const [oldest, second, newest] = alice.map((each) => ('id' in each ? each.id : ''))
    expect(await consents.take(oldest, 'sa')).toBeUndefined()
    expect(await consents.take(second, 'sa')).toMatchObject({ id: second })
    expect(await consents.take(newest, 'sa')).toMatchObject({ id: newest })
    expect(await consents.take('id' in bob ? bob.id : '', 'sb')).toMatchObject({ kind: 'code' })
    expect(consents.size).toBe(0)
  })

  test('signed-out entries full: a new one is refused until the oldest expires, no one’s is forgotten, users go on', async () => {
    let now = 0
    const consents = new MemoryPendingConsents(() => now, 5, 2)
    const first = await consents.create(subject, 'grant:a', undefined)
    now = 1000
    await consents.create(subject, 'grant:b', undefined)
    expect(await consents.create(subject, 'grant:c', undefined)).toEqual({
      full: true,
      retryAfter: CONSENT_TTL_MS / 1000 - 1,
      reason: 'server',
    })
    // A signed-in user is never refused for the signed-out entries' sake.
    expect(await consents.create(subject, 'user:alice', 's')).toMatchObject({ kind: 'code' })
    expect(consents.size).toBe(3)
    // Once the oldest signed-out one has expired, it makes room, even behind a user's that has not.
    now = CONSENT_TTL_MS
    expect(await consents.create(subject, 'grant:c', undefined)).toMatchObject({ kind: 'code' })
    expect(await consents.claim('id' in first ? first.id : '', 's')).toBeUndefined()
  })

  test('a device grant keeps its own bound before sign-in: past it a new page is refused, none is forgotten', async () => {
    let now = 0
    const consents = new MemoryPendingConsents(() => now, 20, 100)
    const ids: string[] = []
    for (let i = 0; i < MAX_PENDING_CONSENTS_PER_GRANT; i++) {
      now = i * 1000
      const created = await consents.create(subject, grantOwner('g1'), undefined)
      ids.push('id' in created ? created.id : '')
    }
    // The next is refused until the grant's oldest page ends; other grants and users go on.
    expect(await consents.create(subject, grantOwner('g1'), undefined)).toEqual({
      full: true,
      retryAfter: CONSENT_TTL_MS / 1000 - (MAX_PENDING_CONSENTS_PER_GRANT - 1),
      reason: 'grant',
    })
    const other = await consents.create(subject, grantOwner('g2'), undefined)
    expect(consents.size).toBe(MAX_PENDING_CONSENTS_PER_GRANT + 1)
    for (const id of ids) expect(await consents.claim(id, 's')).toMatchObject({ id })
    expect(await consents.claim('id' in other ? other.id : '', 't')).toMatchObject({ kind: 'code' })
    // Once the oldest has ended, one more may open.
    now = CONSENT_TTL_MS
    expect(await consents.create(subject, grantOwner('g1'), undefined)).toMatchObject({ kind: 'code' })
    expect(await consents.create(subject, grantOwner('g1'), undefined)).toMatchObject({ reason: 'grant' })
    expect(ownerBound('user:alice', 20)).toBe(20)
    expect(ownerBound(grantOwner('g1'), 20)).toBe(MAX_PENDING_CONSENTS_PER_GRANT)
  })

  test('an owner bound of one replaces the owner’s consent each time', async () => {
    const consents = new MemoryPendingConsents(() => 0, 1, 10)
    const first = await consents.create(subject, 'user:alice', 's')
    const second = await consents.create(subject, 'user:alice', 's')
    const third = await consents.create(subject, 'user:alice', 's')
    expect(await consents.take('id' in first ? first.id : '', 's')).toBeUndefined()
    expect(await consents.take('id' in second ? second.id : '', 's')).toBeUndefined()
    expect(await consents.take('id' in third ? third.id : '', 's')).toMatchObject({ kind: 'code' })
    expect(consents.size).toBe(0)
  })

  test('a device consent is claimed by the first signed-in session, then only by it', async () => {
    const consents = new MemoryPendingConsents(() => 0)
    const created = await consents.create(subject, 'grant:x', undefined)
    const id = 'id' in created ? created.id : ''
    expect(await consents.claim(id, 'one')).toMatchObject({ sessionId: 'one' })
    expect(await consents.claim(id, 'two')).toBeUndefined()
    expect(await consents.take(id, 'two')).toBeUndefined()
    expect(await consents.take(id, 'one')).toMatchObject({ id })
  })
})
