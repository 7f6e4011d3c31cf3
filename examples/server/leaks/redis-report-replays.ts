/**
 * Seen leak reports on Redis (`--store redis://…` or `redis-cluster://…`): one `SET NX PX` key per
 * report, so every instance sharing the store refuses a replay, and Redis forgets it after the
 * window. A Redis failure rejects: the report is answered 503 and GitHub sends it again.
 */

import { TokenStoreError } from 'data-access-policy'
import {
  closeRedisConnection,
  openRedisConnection,
  type RedisConnection,
  redisReady,
} from 'data-access-policy/redis'
import type { ReportReplayStore } from './report-replays.js'

const COMMAND_TIMEOUT_MS = 500

/**
 * Seen reports on a Redis server or cluster.
 *
 * @example
 * const replays = new RedisReportReplayStore('redis://127.0.0.1:6379')
 * await replays.ready()
 */
export class RedisReportReplayStore implements ReportReplayStore {
  readonly #client: RedisConnection
  readonly #prefix: string

  constructor(url: string, keyPrefix = 'dap:leak-report:') {
    this.#prefix = keyPrefix
    this.#client = openRedisConnection(url, COMMAND_TIMEOUT_MS, 'dap-leak-reports')
    this.#client.on('error', () => {})
  }

  /** Resolves once the connection is up; rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return redisReady(this.#client, timeoutMs)
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return closeRedisConnection(this.#client)
  }

  // Redis keeps its own clock for the window: `now` only matters to the memory store.
  async claim(key: string, windowMs: number, _now: number): Promise<boolean> {
    try {
      const answer = await this.#client.set(this.#prefix + key, '1', 'PX', Math.max(1, windowMs), 'NX')
      return answer === 'OK'
    } catch (error) {
      throw new TokenStoreError('cannot record a leak report on Redis', { cause: error })
    }
  }

  async release(key: string): Promise<void> {
    try {
      await this.#client.del(this.#prefix + key)
    } catch (error) {
      throw new TokenStoreError('cannot forget a leak report on Redis', { cause: error })
    }
  }
}
