/**
 * `data-access-policy scan` reads what GitHub's secret scanning reads: commit messages (a commit
 * that touches no file included), annotated tag messages (a tag of a tag included), binary files in
 * the working tree (a `.env` with a NUL byte, the pre-commit use) and in history; never printing a
 * value. On a terminal it tells how many commits it has read, on stderr; piped, nothing.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { type CliResult, type ProgressStream, runCli } from '../cli/main.js'
import { generateTokenValue, tokenValueHint } from '../src/tokens/token-format.js'
import { commitAll, git, initRepository, write } from './cli-scan-repository.js'

const root = mkdtempSync(join(tmpdir(), 'dap-scan-messages-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The part of each value no hint shows appears nowhere in what scan printed. */
function expectNoValue(result: CliResult, values: readonly string[]): void {
  for (const value of values) expect(result.stdout + result.stderr).not.toContain(value.slice(4, -4))
}

describe('commit and tag messages', () => {
  const repository = initRepository(join(root, 'messages'))
  const inBody = generateTokenValue('api')
  const inEmpty = generateTokenValue('oauth')
  const inTag = generateTokenValue('oauth')
  const inInner = generateTokenValue('api')
  write(join(repository, 'app', 'clean.txt'), 'nothing\n')
  const first = commitAll(repository, `add clean.txt\n\nthe token was\n${inBody}\n`)
  // A commit that changes no file: no diff names it, its message is still read.
  git(repository, 'commit', '-q', '--allow-empty', '-m', `empty\n\nTOKEN=${inEmpty}`)
  const empty = git(repository, 'rev-parse', 'HEAD').trim()
  git(repository, 'tag', '-a', 'v1.0', '-m', `release\n\nwith ${inTag} in it`)
  // A tag of a tag whose own ref is gone: the inner tag is read through the outer one.
  git(repository, 'tag', '-a', 'inner', '-m', `inner: ${inInner}`)
  git(repository, '-c', 'advice.nestedTag=false', 'tag', '-a', 'outer', '-m', 'outer', 'inner')
  git(repository, 'tag', '-d', 'inner')
  const expected = [
    `commit ${first.slice(0, 12)} message:4: API token ${tokenValueHint(inBody)}`,
    `commit ${empty.slice(0, 12)} message:3: OAuth token ${tokenValueHint(inEmpty)}`,
    `tag v1.0 message:3: OAuth token ${tokenValueHint(inTag)}`,
    `tag outer message:1: API token ${tokenValueHint(inInner)}`,
  ]

  test('values in commit and annotated tag messages are found, with where they are; exit 1', () => {
    const result = runCli(['scan', repository])
    expect(result.code).toBe(1)
    expect(result.stdout.trim().split('\n').sort()).toEqual([...expected].sort())
    expect(result.stderr).toBe('4 token value(s) found: revoke them, then remove them\n')
    expectNoValue(result, [inBody, inEmpty, inTag, inInner])
  })

  test('a path inside the repository still reads every message: a message is the repository’s', () => {
    const result = runCli(['scan', join(repository, 'app')])
    expect(result.stdout.trim().split('\n').sort()).toEqual([...expected].sort())
  })

  test('--no-history reads no message', () => {
    expect(runCli(['scan', '--no-history', repository])).toEqual({
      code: 0,
      stdout: '',
      stderr: 'no token values found\n',
    })
  })

  test('a replace ref that swaps a commit for one with a clean message does not hide the value', () => {
    const swapped = initRepository(join(root, 'replaced'))
    const value = generateTokenValue('api')
    write(join(swapped, 'a.txt'), 'a\n')
    const commit = commitAll(swapped, `add a\n\n${value}`)
    const raw = git(swapped, 'cat-file', 'commit', commit)
    const clean = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: swapped,
      input: raw.replace(value, 'nothing here'),
      encoding: 'utf8',
    }).trim()
    git(swapped, 'replace', commit, clean)
    expect(runCli(['scan', swapped]).stdout).toBe(
      `commit ${commit.slice(0, 12)} message:3: API token ${tokenValueHint(value)}\n`,
    )
  })
})

test('a repository with lightweight tags only, and clean messages, is clean: exit 0', () => {
  const repository = initRepository(join(root, 'lightweight'))
  write(join(repository, 'a.txt'), 'a\n')
  commitAll(repository, 'first')
  git(repository, 'tag', 'v1')
  write(join(repository, 'b.txt'), 'b\n')
  commitAll(repository, 'second')
  git(repository, 'tag', 'v2')
  expect(runCli(['scan', repository])).toEqual({ code: 0, stdout: '', stderr: 'no token values found\n' })
})

describe('files with a NUL byte', () => {
  const repository = initRepository(join(root, 'nul'))
  const committed = generateTokenValue('oauth')
  const local = generateTokenValue('api')
  write(join(repository, 'data.env'), Buffer.from(`A=1\0\nTOKEN=${committed}\0\n`))
  const commit = commitAll(repository, 'data')
  rmSync(join(repository, 'data.env'))
  // Not committed: what a pre-commit hook checks.
  write(join(repository, '.env'), Buffer.from(`MODE=\0x\nSERVICE_API_TOKEN=${local}\n`))

  test('--no-history: a NUL-holding .env in the working tree is searched', () => {
    const result = runCli(['scan', '--no-history', repository])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe(`${join(repository, '.env')}:2: API token ${tokenValueHint(local)}\n`)
    expectNoValue(result, [local])
  })

  test('a NUL-holding file in history is searched, with its commit', () => {
    const result = runCli(['scan', repository])
    expect(result.stdout.trim().split('\n').sort()).toEqual(
      [
        `${join(repository, '.env')}:2: API token ${tokenValueHint(local)}`,
        `data.env:2 (commit ${commit.slice(0, 12)}): OAuth token ${tokenValueHint(committed)}`,
      ].sort(),
    )
    expectNoValue(result, [local, committed])
  })
})

/** A stand-in for process.stderr that keeps what is written. */
function terminal(isTTY: boolean | undefined): {
  readonly stream: ProgressStream
  readonly written: string[]
} {
  const written: string[] = []
  const write = (text: string) => written.push(text)
  return { stream: isTTY === undefined ? { write } : { isTTY, write }, written }
}

describe('progress', () => {
  // 1001 commits (two full batches of 500 and one more), made at once by fast-import; the values
  // are in commit 2's file and commit 700's message, in different batches.
  const repository = initRepository(join(root, 'long'))
  const inFile = generateTokenValue('api')
  const inMessage = generateTokenValue('oauth')
  const stream: string[] = []
  for (let commit = 1; commit <= 1001; commit++) {
    const message = commit === 700 ? `commit ${commit}\n\n${inMessage}\n` : `commit ${commit}\n`
    const content = commit === 2 ? `${commit}\n${inFile}\n` : `${commit}\n`
    stream.push(
      'commit refs/heads/main',
      `committer Test <test@example.com> ${1_700_000_000 + commit} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      'M 644 inline file.txt',
      `data ${Buffer.byteLength(content)}`,
      content,
    )
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: repository, input: stream.join('\n') })
  const atCommit = (number: number) =>
    git(repository, 'rev-parse', `main~${1001 - number}`)
      .trim()
      .slice(0, 12)
  const expected = [
    `file.txt:2 (commit ${atCommit(2)}): API token ${tokenValueHint(inFile)}`,
    `commit ${atCommit(700)} message:3: OAuth token ${tokenValueHint(inMessage)}`,
  ]

  test('on a terminal: commits read of the total on stderr, on one line erased at the end', () => {
    const { stream: tty, written } = terminal(true)
    const result = runCli(['scan', repository], undefined, tty)
    expect(result.stdout.trim().split('\n').sort()).toEqual([...expected].sort())
    expect(written).toEqual([
      '\r\u001b[Kscanning git history: 0 of 1001 commits',
      '\r\u001b[Kscanning git history: 500 of 1001 commits',
      '\r\u001b[Kscanning git history: 1000 of 1001 commits',
      '\r\u001b[Kscanning git history: 1001 of 1001 commits',
      '\r\u001b[K',
    ])
    expect(result.stderr).toBe('2 token value(s) found: revoke them, then remove them\n')
    expectNoValue(result, [inFile, inMessage])
    expect(written.join('')).not.toContain(inFile.slice(4, -4))
  })

  test.each([
    ['piped (not a terminal)', false],
    ['a stream that says nothing of a terminal', undefined],
  ])('%s: nothing extra, the same result', (_name, isTTY) => {
    const { stream: piped, written } = terminal(isTTY)
    const result = runCli(['scan', repository], undefined, piped)
    expect(written).toEqual([])
    expect(result).toEqual(runCli(['scan', repository]))
  })

  test('--no-history on a terminal: no history, no progress', () => {
    const { stream: tty, written } = terminal(true)
    expect(runCli(['scan', '--no-history', repository], undefined, tty).code).toBe(0)
    expect(written).toEqual([])
  })
})
