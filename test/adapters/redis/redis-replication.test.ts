import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisTokenStore } from '../../../adapters/redis/index.js'
import type { TokenStoreError } from '../../../src/errors.js'
import { hashTokenValue } from '../../../src/tokens/token-hash.js'
import {
  createApiToken,
  rescopeToken,
  revokeToken,
  type TokenRecord,
} from '../../../src/tokens/token-record.js'
import { exited, freePort, launchRedis, type RedisServer, startRedisServer } from './redis-server.js'

// A write that took effect while too few replicas confirm it (`minReplicas`), on one primary that
// has no replica until the last test starts one: the state of a cluster's shard whose master was
// killed and whose replica was promoted. The write is done and said to be; a new token's shortfall
// is reported; a change is confirmed again in the background, written again if lost, and reported
// if it never is.

const NOW = Date.now()
const SECOND = 1000
// Generous bounds for conditions: the background confirmations take about 24 s in all.
const PATIENCE = 60 * SECOND

let primary: RedisServer
let admin: Redis
let store: RedisTokenStore
let replica: ChildProcess | undefined
const replicaDir = mkdtempSync(join(tmpdir(), 'dap-redis-replica-'))
const reported: TokenStoreError[] = []

beforeAll(async () => {
  primary = await startRedisServer()
  admin = new Redis(primary.url)
  store = new RedisTokenStore({
    redis: primary.url,
    minReplicas: 1,
    commandTimeoutMs: 200,
    onError: (error) => {
      reported.push(error)
      // A hook that throws changes nothing.
      throw new Error('the host’s hook failed')
    },
  })
  await store.ready()
})

afterAll(async () => {
  await store?.close()
  admin?.disconnect()
  if (replica !== undefined) {
    replica.kill('SIGKILL')
    await exited(replica)
  }
  await primary?.stop()
  rmSync(replicaDir, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const start = performance.now()
  while (!(await check())) {
    if (performance.now() - start > PATIENCE) throw new Error(`${what}: not within ${PATIENCE} ms`)
    await sleep(20)
  }
}

async function saved(name: string): Promise<{ record: TokenRecord; hash: string; receipt: unknown }> {
  const { record, value } = createApiToken({ userId: 'alice', name, scopes: 'data.data', now: NOW })
  const receipt = await store.save(record)
  return { record, hash: hashTokenValue(value), receipt }
}

const messages = () => reported.map((error) => error.message)
// What the background confirmations of `id`'s changes reported (not its creation's shortfall).
const unconfirmed = (id: string) =>
  messages().filter((message) => message.startsWith(`a change of token ${id} `))
const stored = async (hash: string) => JSON.parse((await admin.get(`dap:token:${hash}`))!) as TokenRecord
const NETWORK = '203.0.113.0/24'

describe('RedisTokenStore with fewer replicas than minReplicas', () => {
  test('creating a token succeeds, says it is not replicated, and reports the shortfall', async () => {
    const { record, hash, receipt } = await saved('created during the shortfall')
    expect(receipt).toEqual({ replicated: false })
    expect(await store.findByHash(hash)).toEqual(record)
    expect(messages()).toContainEqual(
      `saved token ${record.id}, but fewer than 1 replicas confirmed it: a failover before they do would lose it`,
    )
  })

  test(
    'a revocation is done and said to be pending; written again when lost; reported if never confirmed',
    async () => {
      const { record, hash } = await saved('revoked during the shortfall')
      const unrevoked = await admin.get(`dap:token:${hash}`)
      const revoked = revokeToken(record, NOW + 1)
      expect(await store.update(revoked)).toEqual({ replicated: false })
      expect((await store.findByHash(hash))?.revokedAt).toBe(NOW + 1)
      expect(store.pendingConfirmations).toBe(1)
      // A failover that lost the write: the record as it was before.
      await admin.set(`dap:token:${hash}`, unrevoked!)
      await until(
        async () => JSON.parse((await admin.get(`dap:token:${hash}`))!).revokedAt === NOW + 1,
        'the revocation written again',
      )
      await until(() => store.pendingConfirmations === 0, 'the confirmations given up')
      expect(messages()).toContainEqual(
        `a change of token ${record.id} (its revocation) took effect, but fewer than 1 replicas confirmed it after 8 attempts: a failover could undo it`,
      )
    },
    2 * PATIENCE,
  )

  // The scope changes' confirmations take as long as the revocation's; they run side by side, each
  // reading only its own token's reports.
  test.concurrent(
    'a scope change a failover lost is written again, over the uses since, and reported if never confirmed',
    async ({ expect }) => {
      const { record, hash } = await saved('narrowed, then lost')
      const broader = await admin.get(`dap:token:${hash}`)
      const narrowed = rescopeToken(record, 'data.metadata')
      expect(await store.update(narrowed)).toEqual({ replicated: false })
      // A failover that lost the write: the record as it was before, then used.
      await admin.set(`dap:token:${hash}`, broader!)
      await store.touch(record.id, NOW + 5, NETWORK)
      await until(
        async () => (await stored(hash)).scopes.includes('data.metadata'),
        'the scope change written again',
      )
      await until(() => unconfirmed(record.id).length > 0, 'the shortfall reported')
      expect(await stored(hash)).toEqual({ ...narrowed, lastUsedAt: NOW + 5, lastUsedFrom: NETWORK })
      expect(unconfirmed(record.id)).toEqual([
        `a change of token ${record.id} took effect, but fewer than 1 replicas confirmed it after 8 attempts: a failover could undo it`,
      ])
    },
    2 * PATIENCE,
  )

  test.concurrent(
    'a scope change still in place after a use is confirmed to the end',
    async ({ expect }) => {
      const { record, hash } = await saved('narrowed, then used')
      const narrowed = rescopeToken(record, 'data.metadata')
      expect(await store.update(narrowed)).toEqual({ replicated: false })
      await store.touch(record.id, NOW + 5, NETWORK)
      await until(() => unconfirmed(record.id).length > 0, 'the shortfall reported')
      expect(await stored(hash)).toEqual({ ...narrowed, lastUsedAt: NOW + 5, lastUsedFrom: NETWORK })
      expect(unconfirmed(record.id)).toHaveLength(1)
    },
    2 * PATIENCE,
  )

  test.concurrent(
    'a scope change that a later change undid is left undone; the later one is confirmed',
    async ({ expect, onTestFinished }) => {
      // A store of its own, to see when all of this token's confirmations have ended.
      const own: TokenStoreError[] = []
      const changing = new RedisTokenStore({
        redis: primary.url,
        minReplicas: 1,
        commandTimeoutMs: 200,
        onError: (error) => own.push(error),
      })
      onTestFinished(() => changing.close())
      await changing.ready()
      const { record, value } = createApiToken({
        userId: 'alice',
        name: 'narrowed, then widened',
        scopes: 'data.data',
        now: NOW,
      })
      const hash = hashTokenValue(value)
      await changing.save(record)
      expect(await changing.update(rescopeToken(record, 'data.metadata'))).toEqual({ replicated: false })
      // The owner puts the scopes back: the record the narrowing replaced, which the narrowing's
      // confirmation must not take for a lost write.
      expect(await changing.update(record)).toEqual({ replicated: false })
      await changing.touch(record.id, NOW + 5, NETWORK)
      await until(() => changing.pendingConfirmations === 0, 'the confirmations ended')
      expect(await stored(hash)).toEqual({ ...record, lastUsedAt: NOW + 5, lastUsedFrom: NETWORK })
      // The narrowing's confirmation ended quietly; the widening's was reported.
      expect(own.map((error) => error.message).filter((message) => message.startsWith('a change'))).toEqual([
        `a change of token ${record.id} took effect, but fewer than 1 replicas confirmed it after 8 attempts: a failover could undo it`,
      ])
    },
    2 * PATIENCE,
  )

  test.concurrent(
    'a change that granted more and was undone is not written again: reported, the rights stay taken away',
    async ({ expect }) => {
      const { record, hash } = await saved('widened, then undone')
      const narrower = await admin.get(`dap:token:${hash}`)
      const widened = rescopeToken(record, 'data.edit')
      expect(await store.update(widened)).toEqual({ replicated: false })
      // The record back as it was: a lost write, or another instance's narrowing since. Writing the
      // wider scopes again could give back what someone just took away.
      await admin.set(`dap:token:${hash}`, narrower!)
      await until(() => unconfirmed(record.id).length > 0, 'the undone change reported')
      expect(await stored(hash)).toEqual(record)
      expect(unconfirmed(record.id)).toEqual([
        `a change of token ${record.id} that granted more was undone by a failover and is not written again (it may have been changed back since): make it again if it is still wanted`,
      ])
    },
    2 * PATIENCE,
  )

  test('a change still unconfirmed when the store closes is reported', async () => {
    const own: TokenStoreError[] = []
    const closing = new RedisTokenStore({
      redis: primary.url,
      minReplicas: 1,
      commandTimeoutMs: 200,
      onError: (error) => own.push(error),
    })
    await closing.ready()
    const { record } = createApiToken({ userId: 'alice', name: 'closed', scopes: 'data.data', now: NOW })
    await closing.save(record)
    expect(await closing.update(revokeToken(record, NOW + 3))).toEqual({ replicated: false })
    await closing.close()
    await until(() => closing.pendingConfirmations === 0, 'the confirmation abandoned')
    expect(own.map((error) => error.message)).toContainEqual(
      `a change of token ${record.id} (its revocation) took effect, but fewer than 1 replicas confirmed it before the store closed: a failover could undo it`,
    )
  })

  test(
    'a change confirmed in the background once a replica joins is not reported',
    async () => {
      const { record } = await saved('revoked before the replica joins')
      expect(await store.update(revokeToken(record, NOW + 2))).toEqual({ replicated: false })
      const before = reported.length
      replica = await launchRedis(await freePort(), replicaDir, [
        '--replicaof',
        '127.0.0.1',
        String(primary.port),
      ])
      await until(() => store.pendingConfirmations === 0, 'confirmed by the replica')
      expect(reported.slice(before)).toEqual([])
      // And from now on a write is replicated at once.
      const { receipt } = await saved('created with a replica')
      expect(receipt).toEqual({ replicated: true })
    },
    2 * PATIENCE,
  )
})
