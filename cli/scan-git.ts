// How `scan` runs git on a repository it does not trust: every call goes through `git` below, with
// the environment and the options that keep the repository's own config from running a program or
// changing what is read.
import { spawnSync } from 'node:child_process'
import { devNull } from 'node:os'

// Enough for one batch of a large repository's history; git's output past it is an error, not a
// silent cut.
const MAX_OUTPUT_BYTES = 1024 * 1024 * 1024

// A scanned repository is not trusted. A partial clone fetches missing objects while `git log -p`
// reads them, through its own remote and transport settings (core.sshCommand, an ext:: URL that
// protocol.ext.allow lets run): no transport is allowed, so the fetch fails and is a problem. Its
// info/grafts file could give the commit that added a value a parent that has it (the value is
// then never added): no graft file is read.
const UNTRUSTED_REPOSITORY_ENV = { GIT_ALLOW_PROTOCOL: '', GIT_NO_LAZY_FETCH: '1', GIT_GRAFT_FILE: devNull }
// git's messages untranslated, since one of them ("not a repository") is matched, and no advice.
const UNTRANSLATED_ENV = { LC_ALL: 'C', LANG: 'C', LANGUAGE: '', GIT_ADVICE: '0' }

/**
 * What git says when no directory from the path up is a repository. Any other failure (a
 * repository git refuses: "dubious ownership", routine in CI containers, or a format version it
 * does not know; a .git file naming no repository) leaves a history unread, which is a problem.
 * Matched at the start of git's message only: a later line can hold a path, which can hold anything.
 *
 * @example
 * NOT_A_REPOSITORY.test('fatal: not a git repository (or any of the parent directories): .git') // true
 */
export const NOT_A_REPOSITORY = /^fatal: not a git repository \(or any /

/**
 * The options, before the command, of every git command that reads a scanned repository's objects
 * or walks its history: a pager never runs (--no-pager; git's output is a pipe anyway), replace refs
 * that swap an object for a clean one are ignored, names are never quoted in octal, no fsmonitor
 * hook runs, and no commit-graph file gives a commit parents that are not its own (as grafts would,
 * hiding the commit that added a value, or the commit itself from the walk).
 *
 * @example
 * git(top, [...UNTRUSTED_REPOSITORY_OPTIONS, 'rev-list', '--all'])
 */
export const UNTRUSTED_REPOSITORY_OPTIONS: readonly string[] = [
  '--no-pager',
  '--no-replace-objects',
  '-c',
  'core.quotePath=false',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.commitGraph=false',
]

/** What one git command gave: its output as bytes, or why it failed (git's own message). */
export type GitOutput = { ok: true; out: Buffer } | { ok: false; detail: string }

/**
 * Runs git in `cwd` with `args` (and `input` on its stdin) under the environment above. The output
 * is bytes: history read as text holds binary content, which need not be UTF-8 and can be one line
 * longer than the longest string a JavaScript engine makes.
 *
 * @example
 * const top = git('.', ['rev-parse', '--show-toplevel'])
 * if (top.ok) console.log(top.out.toString('utf8').trim())
 */
export function git(cwd: string, args: readonly string[], input?: string): GitOutput {
  // GIT_GRAFT_FILE makes git 2.39 (and others) advise against grafts on every run: a problem's
  // message would hold nine lines of hints before git's own. GIT_ADVICE=0 (git 2.46) turns off any
  // other advice.
  const run = spawnSync('git', ['-c', 'advice.graftFileDeprecated=false', ...args], {
    cwd,
    maxBuffer: MAX_OUTPUT_BYTES,
    env: { ...process.env, ...UNTRUSTED_REPOSITORY_ENV, ...UNTRANSLATED_ENV },
    ...(input === undefined ? {} : { input }),
  })
  if (run.error !== undefined) return { ok: false, detail: run.error.message }
  if (run.status !== 0) return { ok: false, detail: run.stderr.toString('utf8').trim() }
  return { ok: true, out: run.stdout }
}

/**
 * The lines of git's output, as text: object ids and ref names, which hold no newline.
 *
 * @example
 * outputLines(Buffer.from('a\nb\n')) // ['a', 'b']
 */
export function outputLines(out: Buffer): string[] {
  const text = out.toString('utf8')
  return text === '' ? [] : text.replace(/\n$/, '').split('\n')
}

/** One object as `git cat-file --batch` gives it. */
export interface GitObject {
  readonly id: string
  readonly type: string
  readonly content: Buffer
}

/**
 * The objects named by `ids`, read whole (`git cat-file --batch`: each is sized, so no content,
 * however odd, is taken for the next header). A missing object is a problem.
 *
 * @example
 * const objects = readObjects(top, ['3f2c1a9e0b41…'])
 * if (Array.isArray(objects)) for (const { type, content } of objects) console.log(type, content.length)
 */
export function readObjects(top: string, ids: readonly string[]): GitObject[] | string {
  if (ids.length === 0) return []
  const batch = git(top, [...UNTRUSTED_REPOSITORY_OPTIONS, 'cat-file', '--batch'], `${ids.join('\n')}\n`)
  if (!batch.ok) return batch.detail
  const objects: GitObject[] = []
  const out = batch.out
  for (let start = 0; start < out.length; ) {
    const newline = out.indexOf(0x0a, start)
    if (newline < 0) return 'git cat-file: an object header without an end'
    const [id = '', type = '', size] = out.subarray(start, newline).toString('utf8').split(' ')
    if (size === undefined) return `git cat-file: ${id} ${type}`
    const from = newline + 1
    const to = from + Number(size)
    objects.push({ id, type, content: out.subarray(from, to) })
    start = to + 1
  }
  return objects
}
