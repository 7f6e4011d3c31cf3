/**
 * The `redis-cluster://HOST:PORT[,HOST:PORT…]` form of a Redis Cluster's seed nodes. Kept apart
 * from the connection code so that a command line can check the value without loading ioredis.
 */

/** One seed node of a Redis Cluster. */
export interface ClusterSeed {
  readonly host: string
  readonly port: number
}

const SCHEME = 'redis-cluster://'

/**
 * The seed nodes of a `redis-cluster://` URL, or `undefined` when the text is not one: each node is
 * `HOST:PORT` (an IPv6 address in brackets), with an explicit port from 1 to 65535, no user,
 * password, path or query; an optional trailing `/`.
 *
 * @example
 * parseClusterUrl('redis-cluster://10.0.0.1:7000,10.0.0.2:7000')
 * // [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7000 }]
 */
export function parseClusterUrl(text: string): readonly ClusterSeed[] | undefined {
  if (!text.startsWith(SCHEME)) return undefined
  const list = text.slice(SCHEME.length).replace(/\/$/, '')
  const seeds: ClusterSeed[] = []
  for (const item of list.split(',')) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item)
    if (match === null) return undefined
    const port = Number(match[2])
    if (port < 1 || port > 65_535) return undefined
    const host = match[1]!.startsWith('[') ? match[1]!.slice(1, -1) : match[1]!
    if (!URL.canParse(`redis://${match[1]}:${port}`)) return undefined
    seeds.push({ host, port })
  }
  return seeds
}
