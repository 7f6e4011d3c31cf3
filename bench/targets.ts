// The Targets table of docs/performance.md: one run's verdicts, or several runs' side by side (the
// quiet machine's beside this one's, `--beside FILE`), each run's figures from that run alone.

/** One target as one run measured it: its name, the figures, and whether it was met. */
export type TargetRow = readonly [name: string, measured: string, met: boolean]

/** A run's verdicts, as `--targets FILE` writes them. */
export interface TargetRun {
  /** The CPU model, cores and memory, e.g. `Intel Xeon … (16 cores, 64 GiB)`. */
  readonly machine: string
  readonly node: string
  readonly date: string
  readonly targets: readonly TargetRow[]
}

const verdict = (met: boolean) => (met ? '✅ met' : '❌ missed')

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
      return row === undefined ? '— | |' : `${row[1]} | ${verdict(row[2])} |`
    })
    return `| ${name} | ${cells.join(' ')}`
  })
  return [header, rule, ...rows].join('\n')
}
