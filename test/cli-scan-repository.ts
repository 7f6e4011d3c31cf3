// Repositories for the `scan` tests: files written with their directories, and git run with a
// fixed identity and no signing, whatever the machine's own config says.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Writes `content` at `path`, making its directories. */
export function write(path: string, content: string | Buffer): void {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, content)
}

/** Runs git in `cwd` as a test user who signs nothing; its output. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args],
    { cwd, encoding: 'utf8' },
  )
}

/** A new repository at `path` on branch main. */
export function initRepository(path: string): string {
  mkdirSync(path, { recursive: true })
  git(path, 'init', '-q', '-b', 'main')
  return path
}

/** Stages everything in `repository` and commits it with `message`; the commit's full id. */
export function commitAll(repository: string, message: string): string {
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', message)
  return git(repository, 'rev-parse', 'HEAD').trim()
}
