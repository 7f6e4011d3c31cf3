/**
 * `data-access-policy scan` on a repository that is not trusted: its config and attributes neither
 * run a program nor hide or move a value, in the lines of history and in messages.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { runCli } from '../cli/main.js'
import { generateTokenValue, tokenValueHint } from '../src/tokens/token-format.js'
import { git, write } from './cli-scan-repository.js'

const root = mkdtempSync(join(tmpdir(), 'dap-scan-hostile-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/**
 * A repository's own config and attributes are not trusted (the scanned repository may be anyone's):
 * each case configures one that, without scan's explicit options, runs a program (the marker file
 * appears) or hides or misplaces a value (the findings differ). The token in the root commit and the
 * one on line 5 after a change on line 1 (two hunks) are found either way, as is the working tree's.
 */
describe('a hostile repository', () => {
  const base = join(root, 'hostile')
  mkdirSync(base, { recursive: true })
  const marker = join(base, 'ran')
  const program = join(base, 'evil.sh')
  writeFileSync(program, `#!/bin/sh\ntouch '${marker}'\ncat\n`, { mode: 0o755 })
  let count = 0

  /** A repository of two commits (the second signed), with the config and attributes given. */
  function hostileRepository(config: readonly (readonly [string, string])[], attributes = '') {
    const repository = join(base, `repository-${count++}`)
    const first = generateTokenValue('api')
    const second = generateTokenValue('oauth')
    mkdirSync(repository, { recursive: true })
    git(repository, 'init', '-q', '-b', 'main')
    write(join(repository, 'café', 'config.txt'), `one\ntwo\nthree\nfour\nTOKEN=${first}\n`)
    git(repository, 'add', '.')
    git(repository, 'commit', '-q', '-m', 'root')
    write(join(repository, 'café', 'config.txt'), `ONE\ntwo\nthree\nfour\nTOKEN=${second}\n`)
    git(repository, 'commit', '-q', '-am', 'change')
    // A gpgsig header is all log.showSignature needs to run gpg.program on the commit.
    const unsigned = git(repository, 'cat-file', 'commit', 'HEAD')
    const signed = unsigned.replace(
      '\n\n',
      '\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n',
    )
    const signedCommit = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: repository,
      input: signed,
      encoding: 'utf8',
    }).trim()
    git(repository, 'update-ref', 'refs/heads/main', signedCommit)
    const rootCommit = git(repository, 'rev-parse', 'HEAD~1').trim()
    for (const [key, value] of config) git(repository, 'config', key, value)
    write(join(repository, '.git', 'info', 'attributes'), attributes)
    return {
      repository,
      expected: [
        `café/config.txt:5 (commit ${rootCommit.slice(0, 12)}): API token ${tokenValueHint(first)}`,
        `café/config.txt:5 (commit ${signedCommit.slice(0, 12)}): OAuth token ${tokenValueHint(second)}`,
        `${join(repository, 'café', 'config.txt')}:5: OAuth token ${tokenValueHint(second)}`,
      ],
    }
  }

  test.each<[string, readonly (readonly [string, string])[], string?]>([
    [
      'log.showSignature runs gpg.program',
      [
        ['log.showSignature', 'true'],
        ['gpg.program', program],
      ],
    ],
    ['diff.external', [['diff.external', program]]],
    ['a diff driver’s command', [['diff.evil.command', program]], '* diff=evil\n'],
    ['a textconv driver', [['diff.evil.textconv', program]], '* diff=evil\n'],
    ['core.fsmonitor', [['core.fsmonitor', program]]],
    ['the binary attribute', [], '* binary\n'],
    ['the -diff attribute', [], '* -diff\n'],
    ['core.bigFileThreshold (larger files are binary)', [['core.bigFileThreshold', '1']]],
    [
      'core.pager and pager.log',
      [
        ['core.pager', program],
        ['pager.log', program],
      ],
    ],
    [
      'colour',
      [
        ['color.ui', 'always'],
        ['color.diff', 'always'],
      ],
    ],
    ['diff.noprefix', [['diff.noprefix', 'true']]],
    ['diff.mnemonicPrefix', [['diff.mnemonicPrefix', 'true']]],
    ['diff.relative', [['diff.relative', 'true']]],
    ['log.showRoot=false', [['log.showRoot', 'false']]],
    ['diff.interHunkContext', [['diff.interHunkContext', '10']]],
    ['core.quotePath', [['core.quotePath', 'true']]],
    [
      'format.pretty and log.decorate',
      [
        ['format.pretty', 'oneline'],
        ['log.decorate', 'full'],
      ],
    ],
  ])('%s neither runs a program nor hides or moves a value', (_name, config, attributes) => {
    rmSync(marker, { force: true })
    const { repository, expected } = hostileRepository(config, attributes)
    const result = runCli(['scan', repository])
    expect(existsSync(marker)).toBe(false)
    expect(result.code).toBe(1)
    expect(result.stdout.trim().split('\n').sort()).toEqual([...expected].sort())
  })

  test('a replace ref that swaps the blob for a clean one does not hide the value', () => {
    const { repository, expected } = hostileRepository([])
    const blob = git(repository, 'rev-parse', 'HEAD~1:café/config.txt').trim()
    const clean = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: repository,
      input: 'one\ntwo\nthree\nfour\nTOKEN=\n',
      encoding: 'utf8',
    }).trim()
    git(repository, 'replace', blob, clean)
    const result = runCli(['scan', repository])
    expect(result.stdout.trim().split('\n')).toContain(expected[0])
  })

  /**
   * A repository whose first commit adds a value and whose second adds another file; `lie` then
   * gives the first commit the second as its parent (the value is in both, so never added).
   */
  function hiddenByParent(name: string, lie: (repository: string, first: string, second: string) => void) {
    const repository = join(base, name)
    const value = generateTokenValue('api')
    mkdirSync(repository, { recursive: true })
    git(repository, 'init', '-q', '-b', 'main')
    write(join(repository, 'config.txt'), `TOKEN=${value}\n`)
    git(repository, 'add', '.')
    git(repository, 'commit', '-q', '-m', 'the value')
    const first = git(repository, 'rev-parse', 'HEAD').trim()
    write(join(repository, 'other.txt'), 'other\n')
    git(repository, 'add', '.')
    git(repository, 'commit', '-q', '-m', 'another file')
    lie(repository, first, git(repository, 'rev-parse', 'HEAD').trim())
    rmSync(join(repository, 'config.txt'))
    const result = runCli(['scan', repository])
    expect(result.stdout).toBe(
      `config.txt:1 (commit ${first.slice(0, 12)}): API token ${tokenValueHint(value)}\n`,
    )
  }

  test('info/grafts that give the commit adding a value a parent with it do not hide it', () => {
    hiddenByParent('grafted', (repository, first, second) =>
      write(join(repository, '.git', 'info', 'grafts'), `${first} ${second}\n`),
    )
  })

  test('a commit-graph file that gives the commit adding a value a parent with it does not hide it', () => {
    hiddenByParent('commit-graph', (repository, first, second) => {
      git(repository, 'commit-graph', 'write', '--reachable')
      // The file: a header, a table of chunks (4-byte id, 8-byte offset), OIDL (the commits' ids,
      // 20 bytes each, in order) and CDAT (per commit: the tree's id, then the first parent's
      // position in OIDL).
      const path = join(repository, '.git', 'objects', 'info', 'commit-graph')
      const graph = readFileSync(path)
      const offsets = new Map<string, number>()
      for (let chunk = 0; chunk <= graph[6]!; chunk++) {
        const entry = 8 + 12 * chunk
        offsets.set(
          graph.subarray(entry, entry + 4).toString('latin1'),
          Number(graph.readBigUInt64BE(entry + 4)),
        )
      }
      const ids = offsets.get('OIDL')!
      const positionOf = (commit: string) =>
        graph.subarray(ids, offsets.get('CDAT')!).indexOf(Buffer.from(commit, 'hex')) / 20
      graph.writeUInt32BE(positionOf(second), offsets.get('CDAT')! + 36 * positionOf(first) + 20)
      rmSync(path)
      writeFileSync(path, graph)
    })
  })

  test('diff.submodule=diff runs no diff in a submodule under the submodule’s own config', () => {
    rmSync(marker, { force: true })
    const submodule = join(base, 'submodule')
    mkdirSync(submodule, { recursive: true })
    git(submodule, 'init', '-q', '-b', 'main')
    write(join(submodule, 'data.txt'), 'a\n')
    git(submodule, 'add', '.')
    git(submodule, 'commit', '-q', '-m', 'first')
    const { repository } = hostileRepository([['diff.submodule', 'diff']])
    git(repository, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', submodule, 'sub')
    git(repository, 'commit', '-q', '-m', 'add the submodule')
    const inside = join(repository, 'sub')
    write(join(inside, 'data.txt'), 'a\nb\n')
    git(inside, 'commit', '-q', '-am', 'second')
    git(inside, 'config', 'diff.external', program)
    git(inside, 'config', 'diff.evil.textconv', program)
    write(join(repository, '.git', 'modules', 'sub', 'info', 'attributes'), '* diff=evil\n')
    git(repository, 'commit', '-q', '-am', 'bump the submodule')
    const result = runCli(['scan', repository])
    expect(existsSync(marker)).toBe(false)
    expect(result.code).toBe(1)
  })

  test('a partial clone’s lazy fetch runs no transport the repository names (ext::, core.sshCommand)', () => {
    const source = join(base, 'partial-source')
    mkdirSync(source, { recursive: true })
    git(source, 'init', '-q', '-b', 'main')
    write(join(source, 'config.txt'), `TOKEN=${generateTokenValue('api')}\n`)
    git(source, 'add', '.')
    git(source, 'commit', '-q', '-m', 'root')
    git(source, 'config', 'uploadpack.allowFilter', 'true')
    const clone = join(base, 'partial-clone')
    git(base, 'clone', '-q', '--filter=blob:none', '--no-checkout', `file://${source}`, clone)
    for (const url of [`ext::sh -c touch% ${marker}`, 'ssh://example.invalid/repository']) {
      rmSync(marker, { force: true })
      git(clone, 'config', 'remote.origin.url', url)
      git(clone, 'config', 'protocol.ext.allow', 'always')
      git(clone, 'config', 'core.sshCommand', program)
      const result = runCli(['scan', clone])
      expect(existsSync(marker)).toBe(false)
      // The blob could not be read: the history is a problem, never a clean scan.
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(`git history of ${clone}`)
      // git's own message, without advice (GIT_GRAFT_FILE made git add nine lines of hints).
      expect(result.stderr).toMatch(/could not fetch/)
      expect(result.stderr).not.toMatch(/hint:|graft/i)
    }
  })
})
