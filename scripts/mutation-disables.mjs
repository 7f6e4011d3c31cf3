// `npm run mutation:disables`: checks every `// Stryker disable next-line <mutators>: <reason>`.
//
// Such a comment switches off every mutant of the named kinds on its line, not only the equivalent
// one its reason is about, so a table written with the disables in place could hide a mutant that
// no test kills. This script copies the tree, removes every disable from the copy, tests every
// mutant there (a full run, tens of minutes), and reads each disable against that run:
// - a disable none of whose mutants survives hides nothing equivalent: it is reported, to be removed;
// - a surviving mutant on no disabled line (or of a kind its line's disable does not name) is a
//   missing test;
// - the other survivors are the equivalent mutants the disables name: listed, with the number of
//   killed mutants of the same kinds that share their lines.
// It then writes docs/reliability.md's table from that run: the survivors on disabled lines counted
// as disabled, every other mutant as the run found it (so a mutant a disable switches off beside
// its equivalent one shows as killed, since a test kills it).
// Exits 1 when a disable is unneeded or a survivor is not disabled.
//
// `--report PATH` reads an earlier run's JSON report (of a copy made by this script) instead of
// running Stryker again.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

const root = process.cwd()
const config = JSON.parse(readFileSync(join(root, 'stryker.config.json'), 'utf8'))
const DISABLE = /\/\/ Stryker disable next-line ([A-Za-z,]+)(?::\s*(.*))?$/

// The disables of one file's text: the line each applies to (1-based), the mutators it names, and
// for every line of the stripped text the line it was in the original.
function disablesOf(text) {
  const disables = []
  const originalLine = []
  const lines = text.split('\n')
  // Stryker reads "next line" as the next line of code: other comments (a linter's) may stand between.
  const codeAfter = (index) => {
    let next = index + 1
    while (next < lines.length && /^\s*\/\//.test(lines[next])) next++
    return next + 1
  }
  lines.forEach((line, index) => {
    const match = line.match(DISABLE)
    if (match !== null) {
      disables.push({ line: codeAfter(index), mutators: match[1].split(','), reason: match[2] ?? '' })
      // A comment alone on its line goes with it; one after code leaves the code.
      if (/^\s*\/\/ Stryker disable/.test(line)) return
    }
    originalLine.push(index + 1)
  })
  return { disables, originalLine }
}

function strip(text) {
  return text
    .split('\n')
    .filter((line) => !/^\s*\/\/ Stryker disable next-line/.test(line))
    .map((line) => line.replace(/\s*\/\/ Stryker disable next-line .*$/, ''))
    .join('\n')
}

function runStripped() {
  const copy = mkdtempSync(join(tmpdir(), 'mutation-disables-'))
  const tracked = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean)
  for (const file of tracked) {
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    cpSync(join(root, file), join(copy, file))
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'))
  const files = execFileSync('git', ['ls-files', '-z', 'src', 'adapters'], { encoding: 'utf8' })
    .split('\0')
    .filter((file) => file.endsWith('.ts'))
  for (const file of files) writeFileSync(join(copy, file), strip(readFileSync(join(root, file), 'utf8')))
  console.error(`mutation:disables: a full run without disables in ${copy}`)
  const run = spawnSync('npx', ['stryker', 'run', '--force'], { cwd: copy, stdio: 'inherit' })
  if (run.status !== 0) throw new Error(`stryker exited with ${run.status}`)
  const report = join(copy, 'reports', 'mutation', 'mutation.json')
  const text = readFileSync(report, 'utf8')
  rmSync(copy, { recursive: true, force: true })
  return text
}

const at = process.argv.indexOf('--report')
const report = JSON.parse(at === -1 ? runStripped() : readFileSync(process.argv[at + 1], 'utf8'))

const survived = (mutant) => mutant.status === 'Survived' || mutant.status === 'NoCoverage'
const unneeded = []
const undisabled = []
const equivalent = []
for (const [file, entry] of Object.entries(report.files)) {
  const { disables, originalLine } = disablesOf(readFileSync(join(root, file), 'utf8'))
  for (const mutant of entry.mutants) {
    const line = originalLine[mutant.location.start.line - 1]
    const disable = disables.find((d) => d.line === line && d.mutators.includes(mutant.mutatorName))
    mutant.disabledBy = disable
    if (!survived(mutant)) continue
    if (disable === undefined) undisabled.push(`${file}:${line} ${mutant.mutatorName}: ${mutant.replacement}`)
    else {
      disable.survivors = (disable.survivors ?? 0) + 1
      // What a run of the tree itself reports for it.
      mutant.status = 'Ignored'
    }
  }
  for (const disable of disables) {
    const covered = entry.mutants.filter((mutant) => mutant.disabledBy === disable)
    if ((disable.survivors ?? 0) === 0) {
      unneeded.push(
        `${file}:${disable.line - 1} (${disable.mutators.join(',')}): ${covered.length} mutants, all killed`,
      )
    } else {
      equivalent.push(
        `${file}:${disable.line} ${disable.mutators.join(',')}: ${disable.survivors} equivalent, ${covered.length - disable.survivors} killed beside them — ${disable.reason}`,
      )
    }
  }
}

const reportPath = join(root, config.jsonReporter?.fileName ?? 'reports/mutation/mutation.json')
mkdirSync(dirname(reportPath), { recursive: true })
writeFileSync(reportPath, JSON.stringify(report))
const table = spawnSync(
  process.execPath,
  [join(root, 'scripts', 'mutation-report.mjs'), '--without-disables'],
  {
    stdio: 'inherit',
  },
)
if (table.status !== 0) process.exitCode = 1

console.log(`\n${equivalent.length} disables, each over at least one surviving (equivalent) mutant:`)
for (const line of equivalent) console.log(`  ${line}`)
if (unneeded.length > 0) {
  console.error(`\n${unneeded.length} disables hide no surviving mutant: remove them`)
  for (const line of unneeded) console.error(`  ${line}`)
}
if (undisabled.length > 0) {
  console.error(`\n${undisabled.length} surviving mutants on no disabled line: tests are missing`)
  for (const line of undisabled) console.error(`  ${line}`)
}
if (unneeded.length > 0 || undisabled.length > 0) process.exitCode = 1
