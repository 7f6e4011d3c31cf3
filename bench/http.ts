// Loopback HTTP benchmark: for each framework, a hello-world JSON route unguarded, guarded by this
// library, and guarded by the framework's bearer-auth, under the same autocannon load.
import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import autocannon from 'autocannon'

/** One measured route. */
export interface HttpResult {
  readonly framework: string
  readonly route: string
  readonly requestsPerSecond: number
  readonly p99Ms: number
  readonly cpuMicrosPerRequest: number
  readonly non2xx: number
}

const ROUTES: Record<string, readonly string[]> = {
  express: ['unguarded', 'guarded'],
  fastify: ['unguarded', 'guarded', 'bearer'],
  hono: ['unguarded', 'guarded', 'bearer'],
}

function ask(child: ChildProcess, message: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as Record<string, unknown>))
    child.send(message)
  })
}

async function load(url: string, token: string, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: 10,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
  })
}

/** Runs every framework and route for `seconds` each (after a 1 s warm-up), one at a time. */
export async function benchHttp(seconds = 4, rounds = 2): Promise<HttpResult[]> {
  const results: HttpResult[] = []
  for (const framework of Object.keys(ROUTES)) {
    const child = fork(join(import.meta.dirname, 'http-server.ts'), [framework], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const ready = await new Promise<{ port: number; token: string }>((resolve) =>
      child.once('message', (message) => resolve(message as { port: number; token: string })),
    )
    const samples = new Map<string, HttpResult[]>()
    // Alternate the routes over rounds so that drift on the shared machine hits them all alike.
    for (let round = 0; round < rounds; round++) {
      for (const route of ROUTES[framework]!) {
        const url = `http://127.0.0.1:${ready.port}/${route}`
        await load(url, ready.token, 1)
        child.send('start')
        const result = await load(url, ready.token, seconds)
        const { cpuMicros } = (await ask(child, 'stop')) as { cpuMicros: number }
        const total = result.requests.total
        const sample: HttpResult = {
          framework,
          route,
          requestsPerSecond: result.requests.average,
          p99Ms: result.latency.p99,
          cpuMicrosPerRequest: cpuMicros / Math.max(total, 1),
          non2xx: result.non2xx,
        }
        samples.set(route, [...(samples.get(route) ?? []), sample])
      }
    }
    for (const [route, list] of samples) {
      const best = list.reduce((a, b) => (a.cpuMicrosPerRequest <= b.cpuMicrosPerRequest ? a : b))
      results.push({ ...best, route })
    }
    child.send('exit')
  }
  return results
}
