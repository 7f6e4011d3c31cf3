// Writes the "Mutation testing" table of docs/reliability.md from Stryker's JSON report, so that the
// table in the docs is the output of the last run, never numbers typed by hand. Run by
// `npm run mutation` after `stryker run`; fails when a file or the total falls below the target.
// Only the text between the two markers is replaced: the rest of the page belongs to other sections.
import { readFileSync, statSync, writeFileSync } from 'node:fs'

const REPORT = 'reports/mutation/mutation.json'
const PAGE = 'docs/reliability.md'
const START = '<!-- mutation-report:start -->'
const END = '<!-- mutation-report:end -->'
const FILE_TARGET = 95
const TOTAL_TARGET = 97

// Stryker's mutation score: detected over valid mutants. Ignored (disabled in place as equivalent),
// compile and runtime errors are not valid mutants; a mutant no test reaches counts as undetected.
function tally(mutants) {
  const count = (...statuses) => mutants.filter((mutant) => statuses.includes(mutant.status)).length
  const killed = count('Killed', 'Timeout')
  const survived = count('Survived')
  const noCoverage = count('NoCoverage')
  const ignored = count('Ignored')
  const valid = killed + survived + noCoverage
  return { killed, survived, noCoverage, ignored, score: valid === 0 ? 100 : (100 * killed) / valid }
}

// Rounded down, so 94.99 % never reads as 95.0 %.
const percent = (score) => `${(Math.floor(score * 10) / 10).toFixed(1)} %`

const report = JSON.parse(readFileSync(REPORT, 'utf8'))
const date = statSync(REPORT).mtime.toISOString().slice(0, 10)
const rows = Object.entries(report.files)
  .map(([file, { mutants }]) => ({ file, ...tally(mutants) }))
  .sort((a, b) => a.file.localeCompare(b.file))
const total = tally(Object.values(report.files).flatMap((file) => file.mutants))

const line = (cells) => `| ${cells.join(' | ')} |`
const table = [
  line(['file', 'score', 'killed', 'survived', 'no coverage', 'disabled (equivalent)']),
  line(['---', '---:', '---:', '---:', '---:', '---:']),
  ...rows.map((row) =>
    line([`\`${row.file}\``, percent(row.score), row.killed, row.survived, row.noCoverage, row.ignored]),
  ),
  line([
    '**all**',
    `**${percent(total.score)}**`,
    total.killed,
    total.survived,
    total.noCoverage,
    total.ignored,
  ]),
]
const version = report.framework?.version === undefined ? '' : ` ${report.framework.version}`
// An incremental run reuses earlier results, and Stryker can carry a survivor over after a test
// that kills it was added: the page says which kind of run wrote the table.
const full = process.argv.includes('--full')
const withoutDisables = process.argv.includes('--without-disables')
const kind = withoutDisables
  ? 'a full run with every disable removed (`npm run mutation:disables`), the survivors on disabled lines counted as disabled'
  : full
    ? 'a full run (`npm run mutation:full`)'
    : 'an incremental run (`npm run mutation`)'
const generated = [
  START,
  `Last run: ${date}, Stryker${version}, ${kind}. Written by scripts/mutation-report.mjs; do not edit by hand.`,
  '',
  ...table,
  END,
].join('\n')

let page = ''
try {
  page = readFileSync(PAGE, 'utf8')
} catch (error) {
  if (error.code !== 'ENOENT') throw error
}
const start = page.indexOf(START)
const end = page.indexOf(END)
if (start === -1 || end === -1) {
  throw new Error(`${PAGE} has no ${START} … ${END} markers: add them under "## Mutation testing"`)
}
writeFileSync(PAGE, page.slice(0, start) + generated + page.slice(end + END.length))
console.log(`${PAGE}: mutation score ${percent(total.score)} over ${rows.length} files (${date})`)

const short = rows.filter((row) => row.score < FILE_TARGET)
for (const row of short) console.error(`${row.file}: ${percent(row.score)} is below ${FILE_TARGET} %`)
if (total.score < TOTAL_TARGET) console.error(`overall ${percent(total.score)} is below ${TOTAL_TARGET} %`)
if (short.length > 0 || total.score < TOTAL_TARGET) process.exitCode = 1
