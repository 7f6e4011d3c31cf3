import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'

/** A `redis-server` child process this test run owns, on a free loopback port. */
export interface RedisServer {
  readonly port: number
  /** `redis://127.0.0.1:PORT` */
  readonly url: string
  /** Writes a snapshot (`SAVE`) that a restart in the same directory loads. */
  snapshot(): Promise<void>
  /** SIGKILL, like a crash; resolves once the process is gone. */
  kill(): Promise<void>
  /** Starts the server again on the same port and directory (after {@link RedisServer.kill}). */
  restart(): Promise<void>
  /** SIGSTOP: the server keeps its connections but answers nothing. */
  pause(): void
  /** SIGCONT after {@link RedisServer.pause}. */
  resume(): void
  /** Kills the server and removes its directory. */
  stop(): Promise<void>
}

// Redis refuses --port 0, so a free port is found by binding one and letting it go.
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()))
    })
  })
}

const running = new Set<ChildProcess>()
// A crashed test file must not leave a server behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export function requireRedisServer(): void {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (found.error !== undefined) {
    throw new Error('redis-server is not installed: apt-get install redis-server (.ci/run does it)')
  }
}

/** Starts `redis-server` on a port in a directory, with extra arguments; resolves once it is ready. */
export function launchRedis(port: number, dir: string, extra: readonly string[] = []): Promise<ChildProcess> {
  // No persistence of its own: the tests snapshot explicitly where they need a restart to keep data.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra]
  const child = spawn('redis-server', [...args, '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData)
        child.stdout?.resume()
        resolve(child)
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk))
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)))
    child.once('error', reject)
  })
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/**
 * Starts a private `redis-server` on a free loopback port, in a temporary directory, without
 * persistence. Call {@link RedisServer.stop} in `afterAll`.
 */
export async function startRedisServer(): Promise<RedisServer> {
  requireRedisServer()
  const dir = mkdtempSync(join(tmpdir(), 'dap-redis-'))
  let port = 0
  let child: ChildProcess | undefined
  // Another process may take the probed port before redis binds it: try a few.
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort()
    try {
      child = await launchRedis(port, dir)
    } catch (error) {
      if (attempt >= 4) throw error
    }
  }
  running.add(child)
  let current: ChildProcess = child
  const signal = (name: NodeJS.Signals) => {
    if (current.exitCode === null && current.signalCode === null) current.kill(name)
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async snapshot() {
      const client = new Redis(port, '127.0.0.1')
      try {
        await client.save()
      } finally {
        client.disconnect()
      }
    },
    async kill() {
      signal('SIGCONT')
      signal('SIGKILL')
      await exited(current)
      running.delete(current)
    },
    async restart() {
      current = await launchRedis(port, dir)
      running.add(current)
    },
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async stop() {
      signal('SIGCONT')
      signal('SIGKILL')
      await exited(current)
      running.delete(current)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
