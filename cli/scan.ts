// `data-access-policy scan [PATH…]`: finds token values committed to files and to git history, by
// their exact format and checksum (findTokenValues), and prints where, never the value.
import { spawnSync } from 'node:child_process'
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs'
import { devNull } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import {
  type FoundTokenValue,
  findTokenValues,
  TOKEN_VALUE_LENGTH,
  type TokenKind,
  tokenValueHint,
} from '../src/tokens/token-format.js'

/** One token value found, without the value. */
export interface ScanFinding {
  /** The file, as given or relative to the scanned directory; in history, relative to the repository. */
  readonly file: string
  /** 1-based line number. */
  readonly line: number
  /** The commit that added the line, for a finding in git history. */
  readonly commit?: string
  readonly kind: TokenKind
  /** The prefix, `…` and the last four characters: enough to tell tokens apart, never to use one. */
  readonly hint: string
}

/** What a scan found, and what it could not read. */
export interface ScanResult {
  readonly findings: readonly ScanFinding[]
  /** Paths that could not be read, or history that could not be listed: a scan with these is not clean. */
  readonly problems: readonly string[]
}

/** Options of {@link scanPaths}. */
export interface ScanOptions {
  /** Also scan the git history of every repository a path lies in (`git log -p --all`); default true. */
  readonly history?: boolean
}

// Directories no committed secret lives in, that would only make a scan slow.
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules'])
// A file larger than this is not source; its tokens would show in history if it were committed.
const MAX_FILE_BYTES = 10 * 1024 * 1024
// Enough for the history of a large repository; git's output past it is an error, not a silent cut.
const MAX_HISTORY_BYTES = 1024 * 1024 * 1024

/**
 * A scan stops reading once it has found this many values, and a problem says so: 1 GiB of history
 * can hold tens of millions, more objects than the heap holds, and a list that long helps nobody.
 */
export const MAX_FINDINGS = 10_000

/** The findings of one scan, up to {@link MAX_FINDINGS}. */
class Findings {
  readonly list: ScanFinding[] = []
  /** A value past the cap was found: the scan stops reading. */
  full = false

  /** The number of findings that can still be added. */
  get room(): number {
    return MAX_FINDINGS - this.list.length
  }

  /** Adds a finding, or, past the cap, none: false then, and the caller stops reading. */
  add(finding: ScanFinding): boolean {
    if (this.room === 0) this.full = true
    else this.list.push(finding)
    return !this.full
  }
}

function scanText(text: string, file: string, findings: Findings): void {
  const lines = text.split('\n')
  for (const [index, line] of lines.entries()) {
    for (const { value, kind } of findTokenValues(line)) {
      if (!findings.add({ file, line: index + 1, kind, hint: tokenValueHint(value) })) return
    }
  }
}

function scanFile(path: string, shown: string, findings: Findings, problems: string[]): void {
  let bytes: Buffer
  try {
    if (statSync(path).size > MAX_FILE_BYTES) return
    bytes = readFileSync(path)
  } catch (error) {
    problems.push(`${shown}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    return
  }
  // Binary files (a NUL byte) hold no committed token as text.
  if (bytes.includes(0)) return
  scanText(bytes.toString('utf8'), shown, findings)
}

function walk(directory: string, shownBase: string, findings: Findings, problems: string[]): void {
  let entries: Dirent[]
  try {
    entries = readdirSync(directory, { withFileTypes: true })
  } catch (error) {
    problems.push(`${shownBase || '.'}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    return
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (findings.full) return
    const path = join(directory, entry.name)
    const shown = shownBase === '' ? entry.name : join(shownBase, entry.name)
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) walk(path, shown, findings, problems)
    } else if (entry.isFile()) {
      scanFile(path, shown, findings, problems)
    }
  }
}

// A scanned repository is not trusted. A partial clone fetches missing objects while `git log -p`
// reads them, through its own remote and transport settings (core.sshCommand, an ext:: URL that
// protocol.ext.allow lets run): no transport is allowed, so the fetch fails and is a problem. Its
// info/grafts file could give the commit that added a value a parent that has it (the value is
// then never added): no graft file is read.
const UNTRUSTED_REPOSITORY_ENV = { GIT_ALLOW_PROTOCOL: '', GIT_NO_LAZY_FETCH: '1', GIT_GRAFT_FILE: devNull }
// git's messages untranslated, since one of them ("not a repository") is matched, and no advice.
const UNTRANSLATED_ENV = { LC_ALL: 'C', LANG: 'C', LANGUAGE: '', GIT_ADVICE: '0' }
// What git says when no directory from the path up is a repository. Any other failure (a
// repository git refuses: "dubious ownership", routine in CI containers, or a format version it
// does not know; a .git file naming no repository) leaves a history unread, which is a problem.
// Matched at the start of git's message only: a later line can hold a path, which can hold anything.
const NOT_A_REPOSITORY = /^fatal: not a git repository \(or any /

// git's output as bytes: history read as text holds binary content, which need not be UTF-8 and
// can be one line longer than the longest string a JavaScript engine makes.
function git(
  cwd: string,
  args: readonly string[],
): { ok: true; out: Buffer } | { ok: false; detail: string } {
  // GIT_GRAFT_FILE makes git 2.39 (and others) advise against grafts on every run: a problem's
  // message would hold nine lines of hints before git's own. GIT_ADVICE=0 (git 2.46) turns off any
  // other advice.
  const run = spawnSync('git', ['-c', 'advice.graftFileDeprecated=false', ...args], {
    cwd,
    maxBuffer: MAX_HISTORY_BYTES,
    env: { ...process.env, ...UNTRUSTED_REPOSITORY_ENV, ...UNTRANSLATED_ENV },
  })
  if (run.error !== undefined) return { ok: false, detail: run.error.message }
  if (run.status !== 0) return { ok: false, detail: run.stderr.toString('utf8').trim() }
  return { ok: true, out: run.stdout }
}

// A line of content is searched in windows of this many bytes, so that no line, however long (a
// binary file with no newline), is decoded whole.
const WINDOW_BYTES = 1024 * 1024

/**
 * The token values in one line of content. Token values are ASCII, so bytes are decoded as latin1
 * (one character a byte: any bytes decode, and a UTF-8 sequence stays non-base62 as it should).
 * Windows overlap by a value's length and a byte before, so a value across two is found, in the
 * window it starts in, with its real neighbours for the boundary check.
 */
function tokensInLine(bytes: Buffer): FoundTokenValue[] {
  if (bytes.length <= WINDOW_BYTES) return findTokenValues(bytes.toString('latin1'))
  const found: FoundTokenValue[] = []
  for (let start = 0; start < bytes.length; start += WINDOW_BYTES) {
    const from = Math.max(0, start - 1)
    const text = bytes.subarray(from, start + WINDOW_BYTES + TOKEN_VALUE_LENGTH + 1).toString('latin1')
    for (const value of findTokenValues(text)) {
      const at = from + value.index
      if (at >= start && at < start + WINDOW_BYTES) found.push({ ...value, index: at })
    }
  }
  return found
}

const NEWLINE = '\n'.charCodeAt(0)
const PLUS = '+'.charCodeAt(0)
// The first bytes of the lines the parser reads besides added ones: `commit `, `diff --git `, `@@ `.
const MARKER_BYTES = new Set(['c', 'd', '@'].map((character) => character.charCodeAt(0)))

/**
 * The lines every commit of every ref added (`git log -p --all`), under the given paths of one
 * repository: a value deleted since is still found where it was added. Lines removed are skipped:
 * they were added by an earlier commit, and are reported there.
 *
 * A merge is diffed against its first parent, so a line the merge itself wrote (an "evil merge") is
 * read, as --text reads it. That diff also holds every line the other parents brought, each added
 * by a commit on their side and reported there: a merge's finding whose file and value some commit
 * that is not a merge also added is left out. git's combined diff (`--cc`) would show the merge's
 * own lines alone, but it ignores --text (a file marked binary or -diff, as lockfiles are, shows as
 * "Binary files differ"), which would hide a value a merge writes in one.
 */
function scanHistory(top: string, pathspecs: readonly string[], findings: Findings): string | undefined {
  // The repository's own config (.git/config, what it includes) and attributes must neither run a
  // command nor change what the parser below reads, so every setting that could is fixed here:
  // - run a command: a pager (--no-pager; git's output is a pipe anyway), external diff drivers
  //   (diff.external, diff.<driver>.command), textconv drivers, an fsmonitor hook, gpg.program for
  //   log.showSignature (a signed commit is verified by running it), a submodule's inline diff
  //   (diff.submodule=diff runs a diff in the submodule under its own config);
  // - hide lines: log.showRoot=false (no diff for a root commit: --root), replace refs that swap a
  //   blob for a clean one (--no-replace-objects), a commit-graph file whose parents are not the
  //   commits' own, as grafts would be (core.commitGraph=false);
  // - change the format: colour, diff.noprefix and diff.mnemonicPrefix (the `+++ b/` the file name
  //   is cut from), diff.relative, diff.interHunkContext (context lines between hunks would shift
  //   line numbers), core.quotePath (names quoted in octal), log.showSignature's gpg lines.
  // Hooks (core.hooksPath) do not run for log; --format fixes the header whatever format.pretty or
  // log.decorate say.
  const log = git(top, [
    '--no-pager',
    '--no-replace-objects',
    '-c',
    'core.quotePath=false',
    '-c',
    'core.fsmonitor=false',
    '-c',
    'core.commitGraph=false',
    'log',
    '-p',
    // Without it a pathspec (always one, `.` for the root) simplifies history: a merge whose tree
    // matches one parent's is followed through that parent only, so a side branch that added a
    // value and removed it again is never read.
    '--full-history',
    // -p alone shows no diff for a merge (git 2.31 and later; an older git refuses it: a problem).
    '--diff-merges=first-parent',
    '--all',
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
  ])
  if (!log.ok) return `git history of ${top}: ${log.detail}`
  const found: { readonly finding: ScanFinding; readonly key: string; readonly merge: boolean }[] = []
  // The file and value (a NUL between: no file name holds one) of each line a commit that is not a
  // merge added: a merge's line with one of these came from another parent.
  const added = new Set<string>()
  let commit = ''
  let merge = false
  let file: string | undefined
  let line = 0
  // Between `diff --git` and the first hunk: a `+++ ` line there names the file; inside a hunk it
  // is an added line that starts with `++`.
  let header = false
  const out = log.out
  // Every value found counts towards the cap, before a merge's repeats are left out: memory is bounded.
  const room = findings.room
  for (let start = 0; start < out.length && !findings.full; ) {
    const newline = out.indexOf(NEWLINE, start)
    const end = newline < 0 ? out.length : newline
    const bytes = out.subarray(start, end)
    start = end + 1
    if (!header && bytes[0] === PLUS) {
      if (file === undefined) continue
      for (const { value, kind } of tokensInLine(bytes.subarray(1))) {
        if (found.length === room) {
          findings.full = true
          break
        }
        const key = `${file}\0${value}`
        if (!merge) added.add(key)
        found.push({ finding: { file, line, commit, kind, hint: tokenValueHint(value) }, key, merge })
      }
      line++
      continue
    }
    // Removed lines (as long as added ones) are never decoded; header lines are short.
    if (!header && !MARKER_BYTES.has(bytes[0] ?? NEWLINE)) continue
    const text = bytes.toString('utf8')
    if (text.startsWith('commit ')) {
      // A diff with no hunk (an empty file, a mode change) ends at the next commit too.
      commit = text.slice(7, 19)
      merge = text.split(' ').length > 3
      header = false
      file = undefined
    } else if (text.startsWith('diff --git ')) {
      header = true
      file = undefined
    } else if (header && text.startsWith('+++ ')) {
      file = text === '+++ /dev/null' ? undefined : text.slice(6)
    } else if (text.startsWith('@@ ')) {
      header = false
      line = Number(/\+(\d+)/.exec(text)?.[1] ?? 0)
    }
  }
  for (const { finding, key, merge } of found) if (!merge || !added.has(key)) findings.add(finding)
  return undefined
}

/**
 * Scans files and directories (recursively, skipping `.git` and `node_modules`) for token values,
 * and, unless `history` is false, the git history of the repositories they lie in.
 *
 * @example
 * const { findings } = scanPaths(['.'])
 * for (const found of findings) console.log(`${found.file}:${found.line}: ${found.kind} token ${found.hint}`)
 */
export function scanPaths(paths: readonly string[], options: ScanOptions = {}): ScanResult {
  const findings = new Findings()
  const problems: string[] = []
  const repositories = new Map<string, string[]>()
  for (const path of paths) {
    if (findings.full) break
    let directory: boolean
    try {
      directory = statSync(path).isDirectory()
    } catch (error) {
      problems.push(`${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
      continue
    }
    if (directory) walk(path, path === '.' ? '' : path, findings, problems)
    else scanFile(path, path, findings, problems)
    if (options.history === false) continue
    const from = directory ? path : dirname(path)
    const top = git(from, ['rev-parse', '--show-toplevel'])
    if (!top.ok) {
      if (!NOT_A_REPOSITORY.test(top.detail)) problems.push(`git history of ${path}: ${top.detail}`)
      continue
    }
    const root = top.out.toString('utf8').trim()
    const spec = relative(root, resolve(path)) || '.'
    repositories.set(root, [...(repositories.get(root) ?? []), spec])
  }
  for (const [root, pathspecs] of repositories) {
    if (findings.full) break
    const problem = scanHistory(root, pathspecs, findings)
    if (problem !== undefined) problems.push(problem)
  }
  if (findings.full) {
    problems.push(
      `the scan stopped at its cap of ${MAX_FINDINGS} token values found, so there may be more: revoke these, remove them and scan again`,
    )
  }
  return { findings: findings.list, problems }
}

/** One line per finding: `file:line: api token dap_…Cnw5`, with `(commit abc123…)` for history. */
export function formatFinding(found: ScanFinding): string {
  const where =
    found.commit === undefined
      ? `${found.file}:${found.line}`
      : `${found.file}:${found.line} (commit ${found.commit})`
  return `${where}: ${found.kind === 'api' ? 'API' : 'OAuth'} token ${found.hint}`
}
