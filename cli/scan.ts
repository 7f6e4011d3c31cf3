// `data-access-policy scan [PATH…]`: finds token values committed to files and to git history
// (lines, commit and tag messages), by their exact format and checksum (findTokenValues), and
// prints where, never the value.
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { tokenValueHint } from '../src/tokens/token-format.js'
import { Findings, forEachTokenValue, MAX_FINDINGS, type ScanFinding } from './scan-findings.js'
import { git, NOT_A_REPOSITORY } from './scan-git.js'
import { type HistoryProgress, scanHistory } from './scan-history.js'

export { MAX_FINDINGS, type ScanFinding } from './scan-findings.js'
export type { HistoryProgress } from './scan-history.js'

/** What a scan found, and what it could not read. */
export interface ScanResult {
  readonly findings: readonly ScanFinding[]
  /** Paths that could not be read, or history that could not be listed: a scan with these is not clean. */
  readonly problems: readonly string[]
}

/** Options of {@link scanPaths}. */
export interface ScanOptions {
  /**
   * Also scan the git history of every repository a path lies in (`git log -p --all`, and the
   * message of every commit and annotated tag); default true.
   */
  readonly history?: boolean
  /** Told, repository by repository, how many commits of its history have been read. */
  readonly onProgress?: (progress: HistoryProgress) => void
}

// Directories no committed secret lives in, that would only make a scan slow.
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules'])
// A file larger than this is not source; its tokens would show in history if it were committed.
const MAX_FILE_BYTES = 10 * 1024 * 1024

function cannotRead(shown: string, error: unknown): string {
  return `${shown}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`
}

// Binary content (a NUL byte: a .env file can hold one) is searched as git history is, line by line
// in windows of bytes: a value in it is still a value.
function scanFile(path: string, shown: string, findings: Findings, problems: string[]): void {
  let bytes: Buffer
  try {
    if (statSync(path).size > MAX_FILE_BYTES) return
    bytes = readFileSync(path)
  } catch (error) {
    problems.push(cannotRead(shown, error))
    return
  }
  forEachTokenValue(bytes, (line, { value, kind }) =>
    findings.add({ file: shown, line, kind, hint: tokenValueHint(value) }),
  )
}

function walk(directory: string, shownBase: string, findings: Findings, problems: string[]): void {
  let entries: Dirent[]
  try {
    entries = readdirSync(directory, { withFileTypes: true })
  } catch (error) {
    problems.push(cannotRead(shownBase || '.', error))
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

/**
 * The repository `path` lies in (its top directory) and the pathspec that names `path` in it;
 * undefined when it lies in none; a problem when git refuses the repository.
 */
function repositoryOf(
  path: string,
  directory: boolean,
): { readonly root: string; readonly spec: string } | string | undefined {
  const top = git(directory ? path : dirname(path), ['rev-parse', '--show-toplevel'])
  if (!top.ok) return NOT_A_REPOSITORY.test(top.detail) ? undefined : `git history of ${path}: ${top.detail}`
  const root = top.out.toString('utf8').trim()
  return { root, spec: relative(root, resolve(path)) || '.' }
}

/**
 * Scans files and directories (recursively, skipping `.git` and `node_modules`; binary files
 * included) for token values, and, unless `history` is false, the git history of the repositories
 * they lie in: the lines commits added, and commit and annotated tag messages.
 *
 * @example
 * const { findings } = scanPaths(['.'])
 * for (const found of findings) console.log(`${formatFinding(found)}`)
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
      problems.push(cannotRead(path, error))
      continue
    }
    if (directory) walk(path, path === '.' ? '' : path, findings, problems)
    else scanFile(path, path, findings, problems)
    if (options.history === false) continue
    const repository = repositoryOf(path, directory)
    if (typeof repository === 'string') problems.push(repository)
    else if (repository !== undefined) {
      repositories.set(repository.root, [...(repositories.get(repository.root) ?? []), repository.spec])
    }
  }
  for (const [root, pathspecs] of repositories) {
    if (findings.full) break
    const problem = scanHistory(root, pathspecs, findings, options.onProgress)
    if (problem !== undefined) problems.push(problem)
  }
  if (findings.full) {
    problems.push(
      `the scan stopped at its cap of ${MAX_FINDINGS} token values found, so there may be more: revoke these, remove them and scan again`,
    )
  }
  return { findings: findings.list, problems }
}

/**
 * One line per finding, never the value: `FILE:LINE: API token dap_…Cnw5`, with `(commit SHA)` after
 * the line for history; `commit SHA message:LINE: …` or `tag NAME message:LINE: …` for a message.
 *
 * @example
 * formatFinding({ file: '.env', line: 1, kind: 'api', hint: 'dap_…Cnw5' }) // '.env:1: API token dap_…Cnw5'
 * formatFinding({ tag: 'v1.0', line: 3, kind: 'oauth', hint: 'dao_…x9Qa' }) // 'tag v1.0 message:3: OAuth token dao_…x9Qa'
 */
export function formatFinding(found: ScanFinding): string {
  return `${whereFound(found)}: ${found.kind === 'api' ? 'API' : 'OAuth'} token ${found.hint}`
}

function whereFound({ file, line, commit, tag }: ScanFinding): string {
  if (file === undefined)
    return tag === undefined ? `commit ${commit} message:${line}` : `tag ${tag} message:${line}`
  return commit === undefined ? `${file}:${line}` : `${file}:${line} (commit ${commit})`
}
