/**
 * Seen leak reports (leaks/report-replays.ts) in memory and on Redis: a key is new once within its
 * window, a replay after, new again once released or once the window is over; Redis failures reject.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { RedisReportReplayStore } from '../../examples/server/leaks/redis-report-replays.js'
import {
  MemoryReportReplayStore,
  type ReportReplayStore,
} from '../../examples/server/leaks/report-replays.js'
import { type RedisServer, startRedisServer } from '../adapters/redis/redis-server.js'

let redis: RedisServer
const opened: RedisReportReplayStore[] = []

beforeAll(async () => {
  redis = await startRedisServer()
}, 30_000)

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()))
  await redis?.stop()
})

const NOW = Date.UTC(2026, 10, 26)

describe.each([
  ['in memory', async (): Promise<ReportReplayStore> => new MemoryReportReplayStore()],
  [
    'on Redis',
    async (): Promise<ReportReplayStore> => {
      const store = new RedisReportReplayStore(redis.url, `replays-${Math.random()}:`)
      opened.push(store)
      await store.ready()
      return store
    },
  ],
])('%s', (_where, open) => {
  test('a report is new once, a replay after; released, it is new again', async () => {
    const store = await open()
    expect(await store.claim('a', 60_000, NOW)).toBe(true)
    expect(await store.claim('a', 60_000, NOW + 1)).toBe(false)
    expect(await store.claim('b', 60_000, NOW + 1)).toBe(true)
    await store.release('a')
    expect(await store.claim('a', 60_000, NOW + 2)).toBe(true)
  })

  test('a report is new again once its window is over', async () => {
    const store = await open()
    expect(await store.claim('short', 50, NOW)).toBe(true)
    // Memory follows the given clock; Redis its own (the key expires): wait for it, generously.
    await vi.waitFor(async () => expect(await store.claim('short', 50, NOW + 120)).toBe(true), {
      timeout: 10_000,
      interval: 20,
    })
  })
})

test('a Redis that does not answer rejects, never answers "new"', async () => {
  const store = new RedisReportReplayStore('redis://127.0.0.1:1')
  opened.push(store)
  await expect(store.claim('x', 1000, NOW)).rejects.toThrow(/cannot record a leak report on Redis/)
})
