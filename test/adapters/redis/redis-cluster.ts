import type { ChildProcess } from 'node:child_process'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { exited, freePort, launchRedis, requireRedisServer } from './redis-server.js'

const run = promisify(execFile)

/** One `redis-server` of a test cluster. */
export interface ClusterNodeProcess {
  readonly port: number
  readonly pid: number
}

/** A Redis Cluster of three masters and three replicas this test file owns, on loopback. */
export interface RedisClusterServers {
  /** `redis-cluster://127.0.0.1:P1,…` with every node as a seed. */
  readonly url: string
  readonly nodes: readonly ClusterNodeProcess[]
  /** The ports of the current masters that own slots, as the cluster itself reports them. */
  masterPorts(): Promise<number[]>
  /** The master port that owns a key's slot. */
  ownerOf(key: string): Promise<number>
  /** SIGKILL of one node by its PID, like a crash; resolves once the process is gone. */
  kill(port: number): Promise<void>
  /** Resolves once every live node reports `cluster_state:ok` and every slot has a live master. */
  whenHealthy(timeoutMs?: number): Promise<void>
  /** Kills every node and removes their directories. */
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function ask<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    return await command(client)
  } finally {
    client.disconnect()
  }
}

/**
 * Starts six `redis-server`s in cluster mode on free loopback ports and joins them with
 * `redis-cli --cluster create … --cluster-replicas 1`. A node is declared failed after 1 s without
 * answering, so a failover takes a few seconds. Call {@link RedisClusterServers.stop} in `afterAll`.
 */
export async function startRedisCluster(): Promise<RedisClusterServers> {
  requireRedisServer()
  const root = mkdtempSync(join(tmpdir(), 'dap-redis-cluster-'))
  const children = new Map<number, ChildProcess>()
  const clusterArgs = ['--cluster-enabled', 'yes', '--cluster-node-timeout', '1000']
  for (let i = 0; children.size < 6; i++) {
    const port = await freePort()
    // A cluster bus port is the port + 10000: both must be free.
    if (port > 55_000 || children.has(port)) continue
    const dir = mkdtempSync(join(root, 'node-'))
    try {
      children.set(
        port,
        await launchRedis(port, dir, [...clusterArgs, '--cluster-config-file', join(dir, 'nodes.conf')]),
      )
    } catch (error) {
      if (i > 20) throw error
    }
  }
  const ports = [...children.keys()]
  const stop = async () => {
    for (const child of children.values()) child.kill('SIGKILL')
    await Promise.all([...children.values()].map(exited))
    rmSync(root, { recursive: true, force: true })
  }
  const live = () =>
    ports.filter((port) => children.get(port)?.exitCode === null && children.get(port)?.signalCode === null)

  const slotTable = async () => {
    for (const port of live()) {
      try {
        return (await ask(port, (client) => client.cluster('SLOTS'))).map(
          ([from, to, master]) => [from, to, Number(master?.[1])] as const,
        )
      } catch {}
    }
    throw new Error('no cluster node answers')
  }

  const cluster: RedisClusterServers = {
    url: `redis-cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    nodes: ports.map((port) => ({ port, pid: children.get(port)!.pid! })),
    async masterPorts() {
      return [...new Set((await slotTable()).map((range) => range[2]))].sort()
    },
    async ownerOf(key) {
      const slot = await ask(live()[0]!, (client) => client.cluster('KEYSLOT', key) as Promise<number>)
      const range = (await slotTable()).find(([from, to]) => from <= slot && slot <= to)
      if (range === undefined) throw new Error(`slot ${slot} has no master`)
      return range[2]
    },
    async kill(port) {
      const child = children.get(port)
      if (child === undefined) throw new Error(`no node on ${port}`)
      process.kill(child.pid!, 'SIGKILL')
      await exited(child)
    },
    async whenHealthy(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        try {
          const states = await Promise.all(
            live().map((port) => ask(port, (client) => client.cluster('INFO'))),
          )
          const table = await slotTable()
          const covered = table.reduce((sum, [from, to]) => sum + to - from + 1, 0)
          const masters = new Set(table.map((range) => range[2]))
          if (
            states.every((info) => String(info).includes('cluster_state:ok')) &&
            covered === 16_384 &&
            [...masters].every((port) => live().includes(port))
          ) {
            return
          }
        } catch {}
        if (Date.now() > deadline) throw new Error(`cluster not healthy within ${timeoutMs} ms`)
        await sleep(100)
      }
    },
    stop,
  }
  try {
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ])
    await cluster.whenHealthy()
    // Every replica has synchronised with its master (a WAIT for one replica can succeed).
    await waitForReplicas(cluster, live)
  } catch (error) {
    await stop()
    throw error
  }
  return cluster
}

async function waitForReplicas(cluster: RedisClusterServers, live: () => number[]): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const masters = await cluster.masterPorts()
    const replicas = await Promise.all(
      masters.map((port) => ask(port, (client) => client.info('replication'))),
    )
    if (
      masters.length === 3 &&
      replicas.every((info) => /connected_slaves:1/.test(info) && /state=online/.test(info))
    )
      return
    if (Date.now() > deadline) throw new Error(`replicas not online: ${live().join(',')}`)
    await sleep(100)
  }
}
