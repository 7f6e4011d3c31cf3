// Loopback HTTP benchmark: for each framework, the same route unguarded, behind a pass-through
// middleware, guarded by this library as the README writes it, guarded by a hand-written floor, and
// guarded by the framework's own bearer plugin, under the same autocannon load, in alternating
// rounds. Cost is server CPU per request, the server alone on its core. Each route's figures are
// medians over the rounds; each comparison pairs two routes within every round, then takes the median.
import { type ChildProcess, execFileSync, fork } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { halfInterquartileRange, median } from './harness.js'
import { BENCH_ROUTES, benchPath } from './http-routes.js'
import { type CorePlan, corePlan } from './options.js'

/** One route, medians over the rounds. */
export interface HttpRoute {
  readonly framework: string
  readonly route: string
  readonly requestsPerSecond: number
  readonly p99Ms: number
  readonly cpuMicrosPerRequest: number
  readonly non2xx: number
}

/**
 * A framework's routes, and its comparisons: each the median over the rounds of a per-round
 * difference (costs, in µs of server CPU per request) or ratio (throughputs) of two routes.
 */
/** A route's cost over the open route's, in µs of server CPU per request. */
export interface RouteCost {
  /** The median over the rounds of the route's difference from `open` in the same round. */
  readonly micros: number
  /** Half the distance between the first and third quartiles of those per-round differences. */
  readonly spreadMicros: number
}

export interface HttpFramework {
  readonly framework: string
  readonly routes: readonly HttpRoute[]
  /** Every route's cost but `open`'s: `pass` (one more empty step), `guarded`, `floor`, `bearer`. */
  readonly costs: Readonly<Record<string, RouteCost>>
  /** guarded − floor in the same round (design §11's target): what the guard adds to the least a guard does. */
  readonly guardOverFloor: RouteCost
  /** guarded ÷ open throughput. */
  readonly guardedVsOpen: number
  /** open ÷ bearer-plugin throughput: the ceiling of any guard on the same yardstick. */
  readonly openVsBearer?: number
  /** floor ÷ bearer-plugin throughput: what a hand-written guard reaches on the same yardstick. */
  readonly floorVsBearer?: number
  /** guarded ÷ bearer-plugin throughput, when the framework has one. */
  readonly guardedVsBearer?: number
}

/** One route measured in one round. */
export interface Sample {
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

/**
 * Gives the server a core of its own, and autocannon others (corePlan), where `taskset` exists.
 * Sharing two cores, the load generator and the server took turns on both, and the server's CPU per
 * request swung with how often it was woken (a guarded route once measured cheaper than the open
 * one); alone on its core the server is saturated, so its CPU per request is its own work.
 */
function pinApart(child: ChildProcess): void {
  const plan = corePlan(availableParallelism())
  if (plan === undefined || child.pid === undefined) return
  try {
    execFileSync('taskset', ['-pc', plan.server, String(child.pid)], { stdio: 'ignore' })
    execFileSync('taskset', ['-pc', plan.load, String(process.pid)], { stdio: 'ignore' })
    pinned = plan
  } catch {
    // No taskset (or not allowed): both share every core, as before; the page says so.
  }
}

/** The cores the last run pinned the server and the load to; undefined where it could not. */
export let pinned: CorePlan | undefined

export async function benchFramework(framework: keyof typeof BENCH_ROUTES, seconds: number, rounds: number) {
  const child = fork(join(import.meta.dirname, 'http-server.ts'), [framework], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  pinApart(child)
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
    return summarize(framework, samples)
  } finally {
    child.send('exit')
  }
}

/** A framework's route table and comparisons from its samples, one per route per round, in round order. */
export function summarize(framework: string, samples: Map<string, Sample[]>): HttpFramework {
  const routes = [...samples].map(([route, list]) => ({
    framework,
    route,
    requestsPerSecond: median(list.map((s) => s.requestsPerSecond)),
    p99Ms: median(list.map((s) => s.p99Ms)),
    cpuMicrosPerRequest: median(list.map((s) => s.cpuMicrosPerRequest)),
    non2xx: list.reduce((sum, s) => sum + s.non2xx, 0),
  }))
  // Every comparison pairs two routes within each round, then takes the median over the rounds: a
  // machine that slows down for a minute slows both sides of a pair, but not every route's median
  // alike (from the medians alone, runs have read Express's open route tens of µs dearer than its
  // pass route, which does strictly more).
  const perRound = (route: string, against: string, compare: (a: Sample, b: Sample) => number) => {
    const base = samples.get(against)!
    return samples.get(route)!.map((sample, round) => compare(sample, base[round]!))
  }
  const throughput = (route: string, against: string) =>
    median(perRound(route, against, (a, b) => a.requestsPerSecond / b.requestsPerSecond))
  const cost = (route: string, against: string): RouteCost => {
    const differences = perRound(route, against, (a, b) => a.cpuMicrosPerRequest - b.cpuMicrosPerRequest)
    return { micros: median(differences), spreadMicros: halfInterquartileRange(differences) }
  }
  const costs = Object.fromEntries(
    [...samples.keys()].filter((route) => route !== 'open').map((route) => [route, cost(route, 'open')]),
  )
  return {
    framework,
    routes,
    costs,
    guardOverFloor: cost('guarded', 'floor'),
    guardedVsOpen: throughput('guarded', 'open'),
    ...(samples.has('bearer')
      ? {
          guardedVsBearer: throughput('guarded', 'bearer'),
          floorVsBearer: throughput('floor', 'bearer'),
          openVsBearer: throughput('open', 'bearer'),
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
