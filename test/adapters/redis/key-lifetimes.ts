import { closeRedisConnection, openRedisConnection, redisReady } from '../../../adapters/redis/index.js'
import type { TokenRecord } from '../../../src/tokens/token-record.js'

/**
 * The remaining lifetime (Redis `PTTL`, ms; -1 for none, -2 for a missing key) of every key a
 * `RedisTokenStore` with this prefix holds for these records of `owner`: each record, the alias a
 * rotation left under its replaced value, its id index and the owner's index. A missing key fails.
 */
export async function keyLifetimesIn(
  url: string,
  prefix: string,
  owner: string,
  records: readonly TokenRecord[],
): Promise<readonly number[]> {
  const client = openRedisConnection(url, 5000, 'key-lifetimes')
  try {
    await redisReady(client, 10_000)
    const keys = [`${prefix}token-owner:${owner}`]
    for (const record of records) {
      keys.push(`${prefix}token:${record.hash}`, `${prefix}token-id:${record.id}`)
      if (record.previousHash !== undefined) keys.push(`${prefix}token:${record.previousHash}`)
    }
    const lifetimes = await Promise.all(keys.map((key) => client.pttl(key)))
    const missing = keys.filter((_, index) => lifetimes[index] === -2)
    if (missing.length > 0) throw new Error(`no such key: ${missing.join(', ')}`)
    return lifetimes
  } finally {
    await closeRedisConnection(client)
  }
}
