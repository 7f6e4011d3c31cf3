import { afterAll, beforeAll } from 'vitest'
import { RedisOAuthStateStore, RedisTokenStore } from '../../../adapters/redis/index.js'
import { describeOAuthStateStoreContract } from '../../oauth/oauth-state-store-contract.js'
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
