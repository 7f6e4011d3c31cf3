import { afterAll, beforeAll } from 'vitest'
import { RedisOAuthStateStore, RedisTokenStore } from '../../../adapters/redis/index.js'
import { describeOAuthStateStoreContract } from '../../oauth/oauth-state-store-contract.js'
import { describeTokenStoreContract } from '../../tokens/token-store-contract.js'
import { keyLifetimesIn } from './key-lifetimes.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

// The same suites the memory stores pass, on one real Redis shared by the whole file: the suites use
// fresh random keys, so nothing needs emptying between tests.
let server: RedisServer
const stores: { close(): Promise<void> }[] = []

beforeAll(async () => {
  server = await startRedisServer()
})

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()))
  await server?.stop()
})

async function opened<T extends { ready(): Promise<void>; close(): Promise<void> }>(store: T): Promise<T> {
  stores.push(store)
  await store.ready()
  return store
}

let cached: RedisTokenStore | undefined
describeTokenStoreContract(
  'RedisTokenStore',
  async (now) => {
    cached ??= await opened(new RedisTokenStore({ redis: server.url, now }))
    return cached
  },
  { keyLifetimes: (owner, records) => keyLifetimesIn(server.url, 'dap:', owner, records) },
)

let uncached: RedisTokenStore | undefined
describeTokenStoreContract(
  'RedisTokenStore without a cache',
  async (now) => {
    uncached ??= await opened(
      new RedisTokenStore({ redis: server.url, cacheSize: 0, keyPrefix: 'plain:', now }),
    )
    return uncached
  },
  { keyLifetimes: (owner, records) => keyLifetimesIn(server.url, 'plain:', owner, records) },
)

let state: RedisOAuthStateStore | undefined
describeOAuthStateStoreContract('RedisOAuthStateStore', async () => {
  state ??= await opened(new RedisOAuthStateStore({ redis: server.url }))
  return state
})
