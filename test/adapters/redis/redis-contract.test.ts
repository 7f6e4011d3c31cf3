import { afterAll, beforeAll } from 'vitest'
import { RedisOAuthStateStore, RedisTokenStore } from '../../../adapters/redis/index.js'
import { describeOAuthStateStoreContract } from '../../oauth/oauth-state-store-contract.js'
import { describeTokenStoreContract } from '../../tokens/token-store-contract.js'
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
describeTokenStoreContract('RedisTokenStore', async () => {
  cached ??= await opened(new RedisTokenStore({ redis: server.url }))
  return cached
})

let uncached: RedisTokenStore | undefined
describeTokenStoreContract('RedisTokenStore without a cache', async () => {
  uncached ??= await opened(new RedisTokenStore({ redis: server.url, cacheSize: 0, keyPrefix: 'plain:' }))
  return uncached
})

let state: RedisOAuthStateStore | undefined
describeOAuthStateStoreContract('RedisOAuthStateStore', async () => {
  state ??= await opened(new RedisOAuthStateStore({ redis: server.url }))
  return state
})
