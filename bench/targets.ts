// The Targets table of docs/performance.md: one run's verdicts, or several runs' side by side (the
// quiet machine's beside this one's, `--beside FILE`), each run's figures from that run alone.

import { halfInterquartileRange, median } from './harness.js'

/**
 * How one run judged a target: met, missed, `'recorded'` (measured and shown, judged only on a quiet
 * machine), or undefined when the run did not measure it.
 */
export type Verdict = boolean | 'recorded' | undefined

/** One target as one run measured it: its name, the figures (undefined: not measured), the verdict. */
export type TargetRow = readonly [name: string, measured: string | undefined, met: Verdict]

/** A run's verdicts, as `--targets FILE` writes them. */
export interface TargetRun {
  /** The CPU model, cores and memory, e.g. `Intel Xeon … (16 cores, 64 GiB)`. */
  readonly machine: string
  readonly node: string
  readonly date: string
  readonly targets: readonly TargetRow[]
}

const NOT_MEASURED = 'not measured'

/**
 * A row's two cells, figures then verdict. A row without figures, without a verdict, or whose
 * figures are not numbers (`NaN`) reads "not measured": a missing figure never reads as met.
 *
 * @example
 * verdictCells(['decide ≤ 1.5×', '1.21×', true]) // ['1.21×', '✅ met']
 * verdictCells(['decide ≤ 1.5×', undefined, true]) // ['not measured', '— not measured']
 */
export function verdictCells(row: TargetRow): readonly [string, string] {
  const [, measured, met] = row
  if (measured === undefined || measured.includes('NaN') || met === undefined)
    return [measured === undefined ? NOT_MEASURED : measured, `— ${NOT_MEASURED}`]
  if (met === 'recorded') return [measured, 'recorded, judged on a quiet machine']
  return [measured, met ? '✅ met' : '❌ missed']
}

/**
 * A target that is a ratio to a floor measured in the same interleaved rounds: the median of the
 * per-round ratios, with half their interquartile range as the spread. Rounds missing on either side,
 * or of different counts, give a "not measured" row.
 *
 * @example
 * ratioTarget('decide ≤ 1.5× the floor', [30, 31, 29], [20, 20, 20], 1.5)
 * // ['decide ≤ 1.5× the floor', '1.50× ± 0.03 (median of 3 rounds; 30.0 ns vs 20.0 ns)', true]
 */
export function ratioTarget(
  name: string,
  candidate: readonly number[] | undefined,
  floor: readonly number[] | undefined,
  limit: number,
): TargetRow {
  if (candidate === undefined || floor === undefined) return [name, undefined, undefined]
  if (candidate.length === 0 || candidate.length !== floor.length) return [name, undefined, undefined]
  const ratios = candidate.map((value, round) => value / floor[round]!)
  if (ratios.some((ratio) => !Number.isFinite(ratio))) return [name, undefined, undefined]
  const ratio = median(ratios)
  const figures = `${ratio.toFixed(2)}× ± ${halfInterquartileRange(ratios).toFixed(2)} (median of ${ratios.length} rounds; ${nanoseconds(median(candidate))} vs ${nanoseconds(median(floor))})`
  return [name, figures, ratio <= limit]
}

function nanoseconds(ns: number): string {
  return ns < 1000 ? `${ns.toFixed(1)} ns` : `${(ns / 1000).toFixed(2)} µs`
}

/**
 * The Targets table for one or more runs, in the first run's order; a target another run lacks
 * reads `—` there.
 *
 * @example
 * renderTargets([quiet, shared]) // | target | Xeon (16 cores, 64 GiB) | | EPYC (2 cores, 24 GiB) | | …
 */
export function renderTargets(runs: readonly TargetRun[]): string {
  const header = `| target | ${runs.map((run) => `${run.machine}, Node ${run.node}, ${run.date} | `).join('| ')}|`
  const rule = `| --- | ${runs.map(() => '--- | --- | ').join('')}`.trimEnd()
  const rows = runs[0]!.targets.map(([name]) => {
    const cells = runs.map((run) => {
      const row = run.targets.find(([other]) => other === name)
      if (row === undefined) return '— | |'
      const [measured, verdict] = verdictCells(row)
      return `${measured} | ${verdict} |`
    })
    return `| ${name} | ${cells.join(' ')}`
  })
  return [header, rule, ...rows].join('\n')
}
