import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  closeRedisConnection,
  openRedisConnection,
  type RedisConnection,
  type RedisTarget,
  redisReady,
} from '../../../adapters/redis/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'

// The command deadline of every connection the library opens (adapters/redis/connection.ts): an
// answer that has arrived is delivered, even when the event loop was held up past the deadline
// before it could read it; a command Redis does not answer fails.

const DEADLINE_MS = 100
// Longer than the deadline: the reply arrives during it, and the deadline has passed when it ends.
const STALL_MS = 4 * DEADLINE_MS

let server: RedisServer
const opened: Redis[] = []
const connections: RedisConnection[] = []

beforeAll(async () => {
  server = await startRedisServer()
})

afterAll(async () => {
  await Promise.all(connections.map(closeRedisConnection))
  for (const client of opened) client.disconnect()
  await server?.stop()
})

/** Holds the event loop, as a long synchronous task or a burst handled in one turn does. */
function stall(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {}
}

async function open(target: RedisTarget, deadlineMs = DEADLINE_MS): Promise<RedisConnection> {
  const client = openRedisConnection(target, deadlineMs, 'dap-deadline-test')
  client.on('error', () => {})
  connections.push(client)
  await redisReady(client, 5000)
  return client
}

const targets: [string, () => RedisTarget][] = [
  ['a redis:// URL', () => server.url],
  // A host's own ioredis timer would throw the answer away: the store's deadline replaces it.
  [
    'ioredis options asking for their own commandTimeout',
    () => ({ port: server.port, host: '127.0.0.1', commandTimeout: 50 }),
  ],
]

describe.each(targets)('a connection opened with %s', (_, target) => {
  test('delivers a reply that arrived while the event loop was stalled past the deadline', async () => {
    const client = await open(target())
    await client.set('deadline:key', 'answer')
    const answers = Array.from({ length: 50 }, () => client.get('deadline:key'))
    stall(STALL_MS)
    expect(await Promise.all(answers)).toEqual(Array(50).fill('answer'))
  })

  test('fails a command that Redis leaves unanswered past the deadline', async () => {
    const client = await open(target())
    server.pause()
    try {
      await expect(client.get('deadline:key')).rejects.toThrow(
        `Redis did not answer within ${DEADLINE_MS} ms`,
      )
    } finally {
      server.resume()
    }
    // And the connection answers again once Redis does.
    expect(await client.get('deadline:key')).toBe('answer')
  })
})

test('WAIT gets its own blocking time on top of the deadline', async () => {
  // Redis ends a blocked WAIT in its cron (every 100 ms at the default hz) and a busy machine adds
  // its own delay, so this deadline leaves a whole second for the answer after WAIT's timeout.
  const deadlineMs = 1000
  const client = await open(server.url, deadlineMs)
  await client.set('deadline:wait', '1')
  // No replica: the server answers 0 after 2 deadlines, which is an answer, not a timeout (with
  // the deadline alone, the command would fail at 1 s).
  expect(await (client as Redis).wait(1, 2 * deadlineMs)).toBe(0)
})

test('ioredis’s own commandTimeout throws away an answer that arrived during the same stall (what the deadline replaces)', async () => {
  const client = new Redis({ port: server.port, host: '127.0.0.1', commandTimeout: DEADLINE_MS })
  opened.push(client)
  await client.set('deadline:key', 'answer')
  const answer = client.get('deadline:key')
  stall(STALL_MS)
  await expect(answer).rejects.toThrow('Command timed out')
})
