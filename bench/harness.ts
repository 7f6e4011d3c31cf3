// A small side-by-side micro-benchmark harness. Candidates run in interleaved rounds (A B C, A B C,
// …) so that machine noise (a neighbour on the shared cores, a GC, frequency changes) lands on all
// of them alike; each figure is the median of the rounds. Ratios within one run are the result.
// Rounds are timed in this process's CPU time, not wall-clock time: on a shared machine a round the
// scheduler interrupts would otherwise count the other processes' time as the candidate's.

/** One candidate: a name and a function run once per operation (its result is kept alive). */
export interface Candidate {
  readonly name: string
  readonly run: (i: number) => unknown
}

/** The median cost of one operation of each candidate, in nanoseconds. */
export interface Measurement {
  readonly name: string
  readonly nsPerOp: number
  /** Each round's cost of one operation, in round order (paired with the other candidates'). */
  readonly rounds?: readonly number[]
}

// CPU time of this process in nanoseconds (microsecond resolution: rounds last milliseconds).
function cpuNs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1000
}

let sink: unknown

/** Runs each candidate `rounds` times for `iterations` operations, interleaved; medians in ns/op. */
export function compare(
  candidates: readonly Candidate[],
  options: { iterations: number; rounds?: number },
): Measurement[] {
  const rounds = options.rounds ?? 15
  const samples = candidates.map(() => [] as number[])
  for (const candidate of candidates) {
    for (let i = 0; i < Math.min(options.iterations, 20_000); i++) sink = candidate.run(i)
  }
  for (let round = 0; round < rounds; round++) {
    candidates.forEach((candidate, index) => {
      const start = cpuNs()
      for (let i = 0; i < options.iterations; i++) sink = candidate.run(i)
      samples[index]!.push((cpuNs() - start) / options.iterations)
    })
  }
  if (sink === Symbol.for('never')) console.log(sink)
  return candidates.map((candidate, index) => ({
    name: candidate.name,
    nsPerOp: median(samples[index]!),
    rounds: samples[index]!,
  }))
}

/** Like {@link compare}, for asynchronous operations awaited one after another. */
export async function compareAsync(
  candidates: readonly { readonly name: string; readonly run: (i: number) => Promise<unknown> }[],
  options: { iterations: number; rounds?: number },
): Promise<Measurement[]> {
  const rounds = options.rounds ?? 15
  const samples = candidates.map(() => [] as number[])
  for (const candidate of candidates) {
    for (let i = 0; i < Math.min(options.iterations, 5_000); i++) sink = await candidate.run(i)
  }
  for (let round = 0; round < rounds; round++) {
    for (const [index, candidate] of candidates.entries()) {
      const start = cpuNs()
      for (let i = 0; i < options.iterations; i++) sink = await candidate.run(i)
      samples[index]!.push((cpuNs() - start) / options.iterations)
    }
  }
  return candidates.map((candidate, index) => ({
    name: candidate.name,
    nsPerOp: median(samples[index]!),
    rounds: samples[index]!,
  }))
}

/** The median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Half the interquartile range of a list of numbers (quartiles interpolated linearly): a spread that
 * one outlying round does not set.
 */
export function halfInterquartileRange(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => {
    const position = (sorted.length - 1) * q
    const below = Math.floor(position)
    const above = Math.min(below + 1, sorted.length - 1)
    return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below)
  }
  return (at(0.75) - at(0.25)) / 2
}

/** Formats nanoseconds for a table: `17.5 ns`, `1.20 µs`, `73.1 µs`. */
export function formatNs(ns: number): string {
  if (ns < 1000) return `${ns.toFixed(1)} ns`
  if (ns < 1_000_000) return `${(ns / 1000).toFixed(2)} µs`
  return `${(ns / 1_000_000).toFixed(2)} ms`
}

/**
 * A seeded pseudo-random sequence (a 32-bit linear congruential generator): the benchmarks' inputs
 * are the same in every run, so two runs measure the same work.
 */
export function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0
    return state
  }
}

/** Fisher–Yates in place with {@link seeded}: the same order in every run. Returns `items`. */
export function shuffled<T>(items: T[], seed = 42): T[] {
  const next = seeded(seed)
  for (let i = items.length - 1; i > 0; i--) {
    const j = next() % (i + 1)
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}
