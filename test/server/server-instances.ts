import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'

/** The repository root, and the reference server's entry point the instances run. */
export const ROOT = join(import.meta.dirname, '..', '..')
export const MAIN = join(ROOT, 'examples', 'server', 'main.ts')

/** A reference server running in a process of its own. */
export interface Instance {
  readonly url: string
  readonly port: number
  readonly child: ChildProcess
  /** Everything it printed so far, stdout and stderr. */
  readonly output: () => string
}

/** Every process started here, for a test file's `afterAll` to stop. */
export const children = new Set<ChildProcess>()

/**
 * Starts `npm start` with these flags and resolves once it prints its address.
 *
 * @example
 * const a = await startInstance(['--store', redis.url, '--port', '0'])
 */
export function startInstance(args: readonly string[]): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk
      const match = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(output)
      if (match !== null) resolve({ url: match[1]!, port: Number(match[2]), child, output: () => output })
    })
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)))
  })
}

/**
 * Stops an instance: SIGTERM, then SIGKILL if it has not exited within 3 s.
 *
 * @example
 * await Promise.all([...children].map(stopInstance))
 */
export function stopInstance(child: ChildProcess): Promise<void> {
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
