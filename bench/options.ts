// `npm run bench -- …`: the command line, and where the HTTP benchmark's processes run. Pure, so
// test/bench-pack.test.ts can hold both to what docs/performance.md says.

/** What one `npm run bench` run does. */
export interface BenchOptions {
  /** `--quick`: shorter HTTP rounds. */
  readonly quick: boolean
  /** `--in-process`: the decision and authentication benchmarks only; the page's other rows read "not measured". */
  readonly inProcess: boolean
  /** False with `--no-redis`: the Redis sections are left out (the self-contained folder's runs). */
  readonly redis: boolean
  /** `--pack DIR`: write the self-contained bench folder to DIR instead of running anything. */
  readonly pack?: string
  /** `--out FILE`: where the page goes (docs/performance.md by default). */
  readonly out?: string
  /** `--targets FILE`: where this run's verdicts go as JSON, for another run's `--beside`. */
  readonly targets?: string
  /** `--beside FILE`: another run's verdicts (its `--targets` file), shown beside this run's. */
  readonly beside?: string
}

const USAGE =
  'usage: npm run bench -- [--quick] [--in-process] [--no-redis] [--out FILE] [--targets FILE] [--beside FILE] [--pack DIR]'

/**
 * Reads the bench's flags.
 *
 * @throws Error naming an unknown flag or a missing value, with the usage line.
 * @example
 * parseBenchArgs(['--pack', '/tmp/bench']) // { quick: false, inProcess: false, redis: true, pack: '/tmp/bench' }
 */
export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  let quick = false
  let inProcess = false
  let redis = true
  let pack: string | undefined
  let out: string | undefined
  let targets: string | undefined
  let beside: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const value = () => {
      const next = argv[++i]
      if (next === undefined || next.startsWith('--')) throw new Error(`${flag} needs a value; ${USAGE}`)
      return next
    }
    if (flag === '--quick') quick = true
    else if (flag === '--in-process') inProcess = true
    else if (flag === '--no-redis') redis = false
    else if (flag === '--pack') pack = value()
    else if (flag === '--out') out = value()
    else if (flag === '--targets') targets = value()
    else if (flag === '--beside') beside = value()
    else throw new Error(`unknown flag ${JSON.stringify(flag)}; ${USAGE}`)
  }
  return {
    quick,
    inProcess,
    redis,
    ...(pack === undefined ? {} : { pack }),
    ...(out === undefined ? {} : { out }),
    ...(targets === undefined ? {} : { targets }),
    ...(beside === undefined ? {} : { beside }),
  }
}

/** Which cores (`taskset` lists) the HTTP server and the load generator get. */
export interface CorePlan {
  readonly server: string
  readonly load: string
}

/**
 * Where the HTTP benchmark's processes run on a machine with `cores` cores. From 6 cores up, as on
 * design §11's quiet machine: the server alone on the last core, the load generator (this process)
 * on the four before it, core 0 and any others left to the system. With 2 to 5, the server on the
 * last core and the load on all the others. One core: nothing to pin.
 *
 * @example
 * corePlan(16) // { server: '15', load: '11-14' }
 * corePlan(2)  // { server: '1', load: '0' }
 */
export function corePlan(cores: number): CorePlan | undefined {
  if (!Number.isSafeInteger(cores) || cores < 2) return undefined
  const server = cores - 1
  const first = cores >= 6 ? server - 4 : 0
  const last = server - 1
  return { server: String(server), load: first === last ? String(first) : `${first}-${last}` }
}
