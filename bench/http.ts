// Loopback HTTP benchmark: for each framework, the same route unguarded, guarded by this library as
// the README writes it, and guarded by the framework's own bearer plugin, under the same autocannon
// load, in alternating rounds. Cost is server CPU per request; every figure is a median over rounds,
// and the comparisons are medians of the per-round differences and ratios, so drift on a shared
// machine between two rounds never lands on one route alone.
import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { median } from './harness.js'
import { BENCH_ROUTES, benchPath } from './http-routes.js'

/** One route, medians over the rounds. */
export interface HttpRoute {
  readonly framework: string
  readonly route: string
  readonly requestsPerSecond: number
  readonly p99Ms: number
  readonly cpuMicrosPerRequest: number
  readonly non2xx: number
}

/** A framework's routes and the paired comparisons against its open route. */
export interface HttpFramework {
  readonly framework: string
  readonly routes: readonly HttpRoute[]
  /** Median over rounds of (guarded − open) server CPU per request, in µs. */
  readonly guardCostMicros: number
  /** Median over rounds of guarded ÷ open throughput. */
  readonly guardedVsOpen: number
  /** Median over rounds of guarded ÷ bearer-plugin throughput, when the framework has one. */
  readonly guardedVsBearer?: number
  /** Median over rounds of (bearer − open) server CPU per request, in µs. */
  readonly bearerCostMicros?: number
  /** Median over rounds of (floor − open) server CPU per request, in µs: what any such guard costs. */
  readonly floorCostMicros: number
}

interface Sample {
  readonly requestsPerSecond: number
  readonly p99Ms: number
  readonly cpuMicrosPerRequest: number
  readonly non2xx: number
}

function ask(child: ChildProcess, message: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as Record<string, unknown>))
    child.send(message)
  })
}

function load(url: string, token: string, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: 10,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
  })
}

async function measure(child: ChildProcess, url: string, token: string, seconds: number): Promise<Sample> {
  await load(url, token, 1)
  child.send('start')
  const result = await load(url, token, seconds)
  const { cpuMicros } = (await ask(child, 'stop')) as { cpuMicros: number }
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    cpuMicrosPerRequest: cpuMicros / Math.max(result.requests.total, 1),
    non2xx: result.non2xx,
  }
}

async function benchFramework(framework: keyof typeof BENCH_ROUTES, seconds: number, rounds: number) {
  const child = fork(join(import.meta.dirname, 'http-server.ts'), [framework], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  try {
    const ready = await new Promise<{ port: number; token: string }>((resolve, reject) => {
      child.once('message', (message) => resolve(message as { port: number; token: string }))
      child.once('exit', (code) => reject(new Error(`the ${framework} bench server exited (${code})`)))
    })
    const routes: readonly string[] = BENCH_ROUTES[framework]
    const samples = new Map<string, Sample[]>(routes.map((route) => [route, []]))
    for (let round = 0; round < rounds; round++) {
      // Rotate the order, so that no route always runs first (or right after a warm JIT).
      for (let k = 0; k < routes.length; k++) {
        const route = routes[(round + k) % routes.length]!
        const sample = await measure(
          child,
          `http://127.0.0.1:${ready.port}${benchPath(route)}`,
          ready.token,
          seconds,
        )
        if (sample.non2xx > 0) throw new Error(`${framework} ${route}: ${sample.non2xx} answers were not 2xx`)
        samples.get(route)!.push(sample)
      }
    }
    return summarize(framework, samples, rounds)
  } finally {
    child.send('exit')
  }
}

function summarize(framework: string, samples: Map<string, Sample[]>, rounds: number): HttpFramework {
  const of = (route: string) => samples.get(route) ?? []
  const paired = (route: string, f: (a: Sample, open: Sample) => number) =>
    median(Array.from({ length: rounds }, (_, i) => f(of(route)[i]!, of('open')[i]!)))
  const routes = [...samples].map(([route, list]) => ({
    framework,
    route,
    requestsPerSecond: median(list.map((s) => s.requestsPerSecond)),
    p99Ms: median(list.map((s) => s.p99Ms)),
    cpuMicrosPerRequest: median(list.map((s) => s.cpuMicrosPerRequest)),
    non2xx: list.reduce((sum, s) => sum + s.non2xx, 0),
  }))
  const hasBearer = samples.has('bearer')
  return {
    framework,
    routes,
    guardCostMicros: paired('guarded', (g, o) => g.cpuMicrosPerRequest - o.cpuMicrosPerRequest),
    floorCostMicros: paired('floor', (f, o) => f.cpuMicrosPerRequest - o.cpuMicrosPerRequest),
    guardedVsOpen: paired('guarded', (g, o) => g.requestsPerSecond / o.requestsPerSecond),
    ...(hasBearer
      ? {
          guardedVsBearer: median(
            Array.from(
              { length: rounds },
              (_, i) => of('guarded')[i]!.requestsPerSecond / of('bearer')[i]!.requestsPerSecond,
            ),
          ),
          bearerCostMicros: paired('bearer', (b, o) => b.cpuMicrosPerRequest - o.cpuMicrosPerRequest),
        }
      : {}),
  }
}

/** Runs every framework, one at a time, `rounds` alternating rounds of `seconds` per route. */
export async function benchHttp(seconds: number, rounds: number): Promise<HttpFramework[]> {
  const results: HttpFramework[] = []
  for (const framework of Object.keys(BENCH_ROUTES) as (keyof typeof BENCH_ROUTES)[]) {
    results.push(await benchFramework(framework, seconds, rounds))
  }
  return results
}
