/**
 * The reference server in a child process of its own (`node --import tsx examples/server/main.ts`),
 * so that its memory can be measured apart from the client's: the soak run (soak.ts) and the tests
 * of bounded memory use it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const MAIN = join(import.meta.dirname, '..', 'examples', 'server', 'main.ts')

/** A running server process. */
export interface ServerProcess {
  readonly url: string
  readonly port: number
  readonly pid: number
  /** Everything it printed so far, stdout and stderr. */
  output(): string
  /** Its resident set size now, in bytes (Linux: `/proc/PID/status`). */
  rss(): number
  /** SIGTERM, then SIGKILL after three seconds; resolves once it is gone. */
  stop(): Promise<void>
}

/**
 * Starts the server with these command-line arguments (add `--port 0`), and these flags of Node's
 * own, and waits for `listening on`.
 *
 * @example
 * const server = await startServerProcess(['--framework', 'hono', '--port', '0'])
 * console.log(server.rss())
 * await server.stop()
 */
export function startServerProcess(
  args: readonly string[],
  nodeFlags: readonly string[] = [],
): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', MAIN, ...args], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const stop = (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
    return new Promise((resolve) => {
      const killer = setTimeout(() => child.kill('SIGKILL'), 3000)
      child.once('exit', () => {
        clearTimeout(killer)
        resolve()
      })
      child.kill('SIGTERM')
    })
  }
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk
      const match = /listening on (http:\/\/[^\s]+:(\d+))/.exec(output)
      if (match !== null) {
        resolve({
          url: match[1]!,
          port: Number(match[2]),
          pid: child.pid!,
          output: () => output,
          rss: () => rssOf(child.pid!),
          stop,
        })
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk))
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}: ${output}`)))
  })
}

/**
 * The resident set size of a process, in bytes.
 *
 * @example
 * rssOf(process.pid) // 61_243_392
 */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]
  if (kilobytes === undefined) throw new Error(`no VmRSS for process ${pid}`)
  return Number(kilobytes) * 1024
}
