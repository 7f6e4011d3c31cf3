import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, expect, test } from 'vitest'
import {
  closeRedisConnection,
  openRedisConnection,
  RedisDpopReplayCache,
  RedisOAuthStateStore,
  RedisTokenStore,
  redisReady,
} from '../../../adapters/redis/index.js'
import { generateRandomBase62 } from '../../../src/tokens/token-format.js'
import { describeOAuthStateStoreContract } from '../../oauth/oauth-state-store-contract.js'
import { expectFlat, soak } from '../../tokens/retention-soak.js'
import { describeTokenStoreContract } from '../../tokens/token-store-contract.js'
import { keyLifetimesIn } from './key-lifetimes.js'
import { type RedisClusterServers, startRedisCluster } from './redis-cluster.js'

// The suites the memory stores and the single-server stores pass, on a real Redis Cluster of three
// masters and three replicas shared by the whole file (the suites use fresh random keys).
let cluster: RedisClusterServers
const stores: { close(): Promise<void> }[] = []

beforeAll(async () => {
  cluster = await startRedisCluster()
}, 60_000)

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()))
  await cluster?.stop()
})

async function opened<T extends { ready(): Promise<void>; close(): Promise<void> }>(store: T): Promise<T> {
  stores.push(store)
  await store.ready()
  return store
}

let cached: RedisTokenStore | undefined
describeTokenStoreContract(
  'RedisTokenStore on a cluster',
  async (now) => {
    cached ??= await opened(new RedisTokenStore({ redis: cluster.url, now }))
    return cached
  },
  { keyLifetimes: (owner, records) => keyLifetimesIn(cluster.url, 'dap:', owner, records) },
)

let uncached: RedisTokenStore | undefined
describeTokenStoreContract(
  'RedisTokenStore on a cluster without a cache',
  async (now) => {
    uncached ??= await opened(
      new RedisTokenStore({ redis: cluster.url, cacheSize: 0, keyPrefix: 'plain:', now }),
    )
    return uncached
  },
  { keyLifetimes: (owner, records) => keyLifetimesIn(cluster.url, 'plain:', owner, records) },
)

let state: RedisOAuthStateStore | undefined
describeOAuthStateStoreContract('RedisOAuthStateStore on a cluster', async () => {
  state ??= await opened(new RedisOAuthStateStore({ redis: cluster.url }))
  return state
})

test('churn and OAuth minting leave the cluster’s key count flat, and every key expires', async () => {
  const clock = { now: Date.UTC(2025, 0, 1) }
  const prefix = `soak-${generateRandomBase62(8)}:`
  const store = await opened(
    new RedisTokenStore({ redis: cluster.url, keyPrefix: prefix, now: () => clock.now }),
  )
  const admin = openRedisConnection(cluster.url, 5000, 'soak-admin') as Cluster
  try {
    await redisReady(admin, 10_000)
    const keys = async () =>
      (await Promise.all(admin.nodes('master').map((node) => node.keys(`${prefix}*`)))).flat()
    const options = {
      cycles: 300,
      stepMs: 6 * 3_600_000,
      count: async () => (await keys()).length,
      user: 'churner',
    }
    // Two keys a record (the record, its id index), and the two owners' indexes.
    expectFlat(await soak(store, clock, options), options, 2)
    const lasting: string[] = []
    for (const key of await keys()) if ((await admin.pttl(key)) < 0) lasting.push(key)
    expect(lasting).toEqual([])
  } finally {
    await closeRedisConnection(admin)
  }
}, 180_000)

test('the DPoP replay cache on a cluster: one use per proof across instances, keys spread over the masters, every key expiring', async () => {
  const prefix = `dpop-${generateRandomBase62(8)}:`
  const [one, two] = [
    await opened(new RedisDpopReplayCache({ redis: cluster.url, keyPrefix: prefix })),
    await opened(new RedisDpopReplayCache({ redis: cluster.url, keyPrefix: prefix })),
  ]
  const expiresAt = Date.now() + 60_000
  const keys = Array.from({ length: 40 }, (_, i) => `jkt.${i}-${generateRandomBase62(8)}`)
  const first = await Promise.all(keys.map((key, i) => (i % 2 === 0 ? one : two).claim(key, expiresAt)))
  const again = await Promise.all(keys.map((key, i) => (i % 2 === 0 ? two : one).claim(key, expiresAt)))
  expect(first.every((fresh) => fresh)).toBe(true)
  expect(again.some((fresh) => fresh)).toBe(false)
  const admin = openRedisConnection(cluster.url, 5000, 'dpop-admin') as Cluster
  try {
    await redisReady(admin, 10_000)
    const perMaster = await Promise.all(admin.nodes('master').map((node) => node.keys(`${prefix}*`)))
    expect(perMaster.flat()).toHaveLength(keys.length)
    expect(perMaster.filter((found) => found.length > 0).length).toBeGreaterThan(1)
    for (const key of perMaster.flat()) expect(await admin.pttl(key)).toBeGreaterThan(0)
  } finally {
    await closeRedisConnection(admin)
  }
}, 60_000)
