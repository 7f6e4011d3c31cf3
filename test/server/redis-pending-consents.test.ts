/**
 * Pending consents on Redis: a device grant's pages before sign-in are refused past the grant's
 * bound (none is pushed out), while a signed-in user's oldest makes room for the newest.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  CONSENT_TTL_MS,
  type ConsentSubject,
  grantOwner,
  MAX_PENDING_CONSENTS_PER_GRANT,
} from '../../examples/server/oauth/pending-consents.js'
import { RedisPendingConsents } from '../../examples/server/oauth/redis-pending-consents.js'
import { parseScopes } from '../../src/index.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'

const subject: ConsentSubject = {
  kind: 'device',
  grant: { grantId: 'g', userCode: 'BCDF-GHJK', scopes: ['public'], expiresAt: Date.now() + CONSENT_TTL_MS },
  client: undefined,
} as unknown as ConsentSubject

let redis: RedisServer
let consents: RedisPendingConsents

beforeAll(async () => {
  redis = await startRedisServer()
  consents = new RedisPendingConsents(redis.url, Date.now, { maxPerOwner: 2 })
  await consents.ready()
}, 30_000)

afterAll(async () => {
  await consents?.close()
  await redis?.stop()
})

describe('RedisPendingConsents', () => {
  test('a grant keeps its first pages: past its bound a new one is refused until they end', async () => {
    const ids: string[] = []
    for (let i = 0; i < MAX_PENDING_CONSENTS_PER_GRANT; i++) {
      const created = await consents.create(subject, grantOwner('g1'), undefined)
      ids.push('id' in created ? created.id : '')
    }
    const refused = await consents.create(subject, grantOwner('g1'), undefined)
    expect(refused).toMatchObject({ full: true, reason: 'grant' })
    const { retryAfter } = refused as { retryAfter: number }
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(CONSENT_TTL_MS / 1000)
    for (const id of ids) expect(await consents.claim(id, 's')).toMatchObject({ id })
    // Another grant has its own bound.
    expect(await consents.create(subject, grantOwner('g2'), undefined)).toMatchObject({ kind: 'device' })
  })

  test('a user’s oldest makes room for the newest', async () => {
    const first = await consents.create(subject, 'user:alice', 's')
    await consents.create(subject, 'user:alice', 's')
    const third = await consents.create(subject, 'user:alice', 's')
    expect(third).toMatchObject({ kind: 'device' })
    expect(await consents.claim('id' in first ? first.id : '', 's')).toBeUndefined()
  })

  test('an authorization request keeps its dpop_jkt (RFC 9449 §10) through consent', async () => {
    const request = {
      clientId: 'app',
      redirectUri: 'http://127.0.0.1:8765/cb',
      scopes: parseScopes(['public']),
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      dpopJkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
    }
    const code = { kind: 'code', request, client: undefined } as unknown as ConsentSubject
    const created = await consents.create(code, 'user:carol', 's')
    const taken = await consents.claim('id' in created ? created.id : '', 's')
    expect(taken).toMatchObject({ kind: 'code', request: { dpopJkt: request.dpopJkt } })
  })
})
