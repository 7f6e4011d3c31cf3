// The git history `scan` reads: every line every commit of every ref added, and every commit's and
// annotated tag's message, in batches of commits so that progress can be told and no single git
// output holds the whole history.
import { tokenValueHint } from '../src/tokens/token-format.js'
import { type Findings, HistoryFindings, NEWLINE, tokensInLine } from './scan-findings.js'
import { git, outputLines, UNTRUSTED_REPOSITORY_OPTIONS } from './scan-git.js'
import { scanCommitMessages, scanTagMessages } from './scan-messages.js'

/** How far the history of one repository has been read. */
export interface HistoryProgress {
  /** The repository's top directory. */
  readonly repository: string
  /** Commits whose message and diff have been read. */
  readonly commits: number
  /** Every commit of every ref (`git rev-list --all`). */
  readonly total: number
}

// Commits read by one git command: few enough that progress moves and a batch's output stays far
// below the output cap, enough that starting git is a small part of the time.
const BATCH_COMMITS = 500

/**
 * The commits of every ref; with `pathspecs`, those whose diff touches them. --full-history: without
 * it a pathspec (always one, `.` for the root) simplifies history, so that a merge whose tree matches
 * one parent's is followed through that parent only, and a side branch that added a value and
 * removed it again is never read.
 */
function listCommits(top: string, pathspecs?: readonly string[]): string[] | string {
  const limit = pathspecs === undefined ? [] : ['--full-history', '--', ...pathspecs]
  const list = git(top, [...UNTRUSTED_REPOSITORY_OPTIONS, 'rev-list', '--all', ...limit])
  return list.ok ? outputLines(list.out) : list.detail
}

/**
 * Reads the history of the repository at `top`: the lines every commit of every ref added under
 * `pathspecs` (`git log -p`: a value deleted since is still found where it was added), the message
 * of every commit (whatever paths it touched: a message is the repository's) and of every annotated
 * tag. A problem is returned, and what was found before it is kept.
 */
export function scanHistory(
  top: string,
  pathspecs: readonly string[],
  findings: Findings,
  onProgress?: (progress: HistoryProgress) => void,
): string | undefined {
  const all = listCommits(top)
  if (typeof all === 'string') return `git history of ${top}: ${all}`
  const diffed = listCommits(top, pathspecs)
  if (typeof diffed === 'string') return `git history of ${top}: ${diffed}`
  const withDiff = new Set(diffed)
  const history = new HistoryFindings(findings)
  const progress = (commits: number) => onProgress?.({ repository: top, commits, total: all.length })
  progress(0)
  let problem: string | undefined
  for (let start = 0; start < all.length && problem === undefined && !history.full; ) {
    const batch = all.slice(start, start + BATCH_COMMITS)
    problem =
      scanCommitMessages(top, batch, history) ??
      scanDiffs(
        top,
        pathspecs,
        batch.filter((commit) => withDiff.has(commit)),
        history,
      )
    start += batch.length
    if (problem === undefined) progress(start)
  }
  if (problem === undefined && !history.full) problem = scanTagMessages(top, history)
  history.flush()
  return problem === undefined ? undefined : `git history of ${top}: ${problem}`
}

/**
 * The lines `commits` added under `pathspecs`. Lines removed are skipped: they were added by an
 * earlier commit, and are reported there.
 *
 * A merge is diffed against its first parent, so a line the merge itself wrote (an "evil merge") is
 * read, as --text reads it; its lines that other parents brought are left out by HistoryFindings.
 * git's combined diff (`--cc`) would show the merge's own lines alone, but it ignores --text (a file
 * marked binary or -diff, as lockfiles are, shows as "Binary files differ"), which would hide a
 * value a merge writes in one.
 */
function scanDiffs(
  top: string,
  pathspecs: readonly string[],
  commits: readonly string[],
  history: HistoryFindings,
): string | undefined {
  if (commits.length === 0) return undefined
  // The repository's own config (.git/config, what it includes) and attributes must neither run a
  // command nor change what the parser below reads, so every setting that could is fixed here, on
  // top of UNTRUSTED_REPOSITORY_OPTIONS:
  // - run a command: external diff drivers (diff.external, diff.<driver>.command), textconv
  //   drivers, gpg.program for log.showSignature (a signed commit is verified by running it), a
  //   submodule's inline diff (diff.submodule=diff runs a diff in the submodule under its own config);
  // - hide lines: log.showRoot=false (no diff for a root commit: --root);
  // - change the format: colour, diff.noprefix and diff.mnemonicPrefix (the `+++ b/` the file name
  //   is cut from), diff.relative, diff.interHunkContext (context lines between hunks would shift
  //   line numbers), log.showSignature's gpg lines.
  // Hooks (core.hooksPath) do not run for log; --format fixes the header whatever format.pretty or
  // log.decorate say.
  const log = git(
    top,
    [
      ...UNTRUSTED_REPOSITORY_OPTIONS,
      'log',
      '-p',
      // The commits are listed already (listCommits walked the history): these, in this order.
      '--no-walk=unsorted',
      '--stdin',
      // -p alone shows no diff for a merge (git 2.31 and later; an older git refuses it: a problem).
      '--diff-merges=first-parent',
      '--root',
      '--no-show-signature',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      // Files marked binary or -diff (lockfiles often are) would show as "Binary files … differ".
      '--text',
      '--submodule=short',
      '--no-renames',
      '--no-relative',
      '--src-prefix=a/',
      '--dst-prefix=b/',
      '--unified=0',
      '--inter-hunk-context=0',
      // The parents tell a merge.
      '--format=commit %H %P',
      '--',
      ...pathspecs,
    ],
    `${commits.join('\n')}\n`,
  )
  if (!log.ok) return log.detail
  readDiffs(log.out, history)
  return undefined
}

const PLUS = '+'.charCodeAt(0)
// The first bytes of the lines the parser reads besides added ones: `commit `, `diff --git `, `@@ `.
const MARKER_BYTES = new Set(['c', 'd', '@'].map((character) => character.charCodeAt(0)))

/** Where the parser of `git log -p` is. */
interface DiffPosition {
  commit: string
  merge: boolean
  file: string | undefined
  /** The line number of the next added line. */
  line: number
  /**
   * Between `diff --git` and the first hunk: a `+++ ` line there names the file; inside a hunk it
   * is an added line that starts with `++`.
   */
  header: boolean
}

function readDiffs(out: Buffer, history: HistoryFindings): void {
  const at: DiffPosition = { commit: '', merge: false, file: undefined, line: 0, header: false }
  for (let start = 0; start < out.length && !history.full; ) {
    const newline = out.indexOf(NEWLINE, start)
    const end = newline < 0 ? out.length : newline
    const bytes = out.subarray(start, end)
    start = end + 1
    if (!at.header && bytes[0] === PLUS) {
      if (at.file !== undefined) readAddedLine(bytes.subarray(1), at.file, at, history)
      continue
    }
    // Removed lines (as long as added ones) are never decoded; header lines are short.
    if (at.header || MARKER_BYTES.has(bytes[0] ?? NEWLINE)) readMarkerLine(bytes.toString('utf8'), at)
  }
}

function readAddedLine(bytes: Buffer, file: string, at: DiffPosition, history: HistoryFindings): void {
  for (const { value, kind } of tokensInLine(bytes)) {
    const finding = { file, line: at.line, commit: at.commit, kind, hint: tokenValueHint(value) }
    if (!history.hold(finding, `${file}\0${value}`, at.merge)) return
  }
  at.line++
}

function readMarkerLine(text: string, at: DiffPosition): void {
  if (text.startsWith('commit ')) {
    // A diff with no hunk (an empty file, a mode change) ends at the next commit too.
    at.commit = text.slice(7, 19)
    at.merge = text.split(' ').length > 3
    at.header = false
    at.file = undefined
  } else if (text.startsWith('diff --git ')) {
    at.header = true
    at.file = undefined
  } else if (at.header && text.startsWith('+++ ')) {
    at.file = text === '+++ /dev/null' ? undefined : text.slice(6)
  } else if (text.startsWith('@@ ')) {
    at.header = false
    at.line = Number(/\+(\d+)/.exec(text)?.[1] ?? 0)
  }
}
