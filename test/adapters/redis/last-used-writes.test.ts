/**
 * Last use under load (issue 30): however many requests a token serves, its record is written at
 * most once per interval (a minute) by an instance, never on the request's path, with the network
 * of the request that wrote it. Counted on the memory store (its touches) and on a Redis server and
 * a Redis Cluster (every write publishes the record's hash in the same script: the messages on the
 * store's channel are the writes).
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisTokenStore } from '../../../adapters/redis/index.js'
import { createAccessPolicy } from '../../../src/policy.js'
import { MemoryTokenStore } from '../../../src/tokens/memory-token-store.js'
import { createApiToken } from '../../../src/tokens/token-record.js'
import type { TokenStore } from '../../../src/tokens/token-store.js'
import { type RedisClusterServers, startRedisCluster } from './redis-cluster.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

const INTERVAL = 60_000
const INTERVALS = 4
const REQUESTS_PER_INTERVAL = 300
const BASE = Date.UTC(2026, 10, 26)

let server: RedisServer
let cluster: RedisClusterServers
const closing: (() => Promise<void>)[] = []

beforeAll(async () => {
  ;[server, cluster] = await Promise.all([startRedisServer(), startRedisCluster()])
}, 60_000)

afterAll(async () => {
  for (const close of closing) await close()
  await Promise.all([server?.stop(), cluster?.stop()])
})

const until = async (condition: () => boolean | Promise<boolean>, what: string) => {
  const deadline = Date.now() + 20_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A store and a count of the writes it has made to one record's hash. */
interface Counted {
  readonly tokens: TokenStore
  /** Starts counting the writes of the record with this hash. */
  watch(hash: string): Promise<void>
  writes(hash: string): number
}

function countingMemoryStore(): Counted {
  const store = new MemoryTokenStore()
  let count = 0
  const touch = store.touch.bind(store)
  store.touch = (id, now, network) => {
    count++
    return touch(id, now, network)
  }
  return { tokens: store, watch: async () => {}, writes: () => count }
}

async function countingRedisStore(
  url: string,
  ownerPort: (key: string) => Promise<number>,
  prefix: string,
): Promise<Counted> {
  const tokens = new RedisTokenStore({ redis: url, keyPrefix: prefix })
  await tokens.ready()
  closing.push(() => tokens.close())
  const messages: string[] = []
  return {
    tokens,
    // A plain connection to the node that owns the record: its script publishes there (a cluster
    // also copies the message to every other node, which would count it again).
    async watch(hash) {
      const subscriber = new Redis({ port: await ownerPort(`${prefix}token:${hash}`), host: '127.0.0.1' })
      closing.push(async () => subscriber.disconnect())
      subscriber.on('message', (_channel: string, message: string) => messages.push(message))
      await subscriber.subscribe(`${prefix}token-changes`)
    },
    writes: (hash) => messages.filter((message) => message.startsWith(`${hash} `)).length,
  }
}

const stores: [string, () => Promise<Counted>][] = [
  ['the memory store', async () => countingMemoryStore()],
  ['a Redis server', () => countingRedisStore(server.url, async () => server.port, 'lu1:')],
  ['a Redis Cluster', () => countingRedisStore(cluster.url, (key) => cluster.ownerOf(key), 'lu2:')],
]

describe.each(stores)('on %s', (_name, open) => {
  test(`${REQUESTS_PER_INTERVAL} concurrent requests an interval write the record once an interval, with the network`, async () => {
    const { tokens, watch, writes } = await open()
    let clock = BASE
    const policy = createAccessPolicy({ tokens, now: () => clock, requireHttps: false })
    const { record, value } = createApiToken({ userId: 'alice', name: 'load', scopes: '', now: BASE })
    await watch(record.hash)
    await tokens.save(record)
    // The save itself is a write on Redis: counted once it has arrived.
    await until(() => writes(record.hash) === (tokens instanceof MemoryTokenStore ? 0 : 1), 'the save')
    const writesBefore = writes(record.hash)
    for (let interval = 0; interval < INTERVALS; interval++) {
      const start = BASE + interval * INTERVAL
      const answers = await Promise.all(
        Array.from({ length: REQUESTS_PER_INTERVAL }, (_, i) => {
          // Every request of the interval at its own instant within it (10 ms apart, 3 s in all).
          clock = start + i * 10
          return policy.authenticate({
            authorization: [`Bearer ${value}`],
            protocol: 'http',
            clientAddress: `2001:db8:${interval}:7::${i.toString(16)}`,
          })
        }),
      )
      expect(answers.every((answer) => answer.ok)).toBe(true)
      // Written in the background: the write of this interval lands after the answers.
      await until(() => writes(record.hash) - writesBefore === interval + 1, `write ${interval + 1}`)
      await until(async () => (await tokens.findById(record.id))?.lastUsedAt === start, `lastUsedAt ${start}`)
      expect((await tokens.findById(record.id))?.lastUsedFrom).toBe(`2001:db8:${interval}:7::/64`)
    }
    // A late write would show here: none comes.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(writes(record.hash) - writesBefore).toBe(INTERVALS)
  }, 60_000)
})
