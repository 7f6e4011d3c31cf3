/**
 * `data-access-policy scan`: every token value in a fixture tree and in the git history of a
 * repository made here (a value deleted since, one on another branch), by format and checksum, and
 * no look-alike; where it is and what kind, never the value; exit codes for hooks and CI.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest'
import { runCli } from '../cli/main.js'
import { MAX_FINDINGS } from '../cli/scan.js'
import { generateTokenValue, tokenValueHint } from '../src/tokens/token-format.js'
import { git, write } from './cli-scan-repository.js'

const root = mkdtempSync(join(tmpdir(), 'dap-scan-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const api = generateTokenValue('api')
const oauth = generateTokenValue('oauth')
const nested = generateTokenValue('api')
const twice = generateTokenValue('api')

// Each differs from a real value in one way a naive pattern would miss.
const lookAlikes = [
  `${api.slice(0, -1)}${api.endsWith('0') ? '1' : '0'}`, // wrong checksum
  `dax_${api.slice(4)}`, // wrong prefix
  `DAP_${api.slice(4)}`, // wrong case
  api.slice(0, -1), // one character short
  `${api}Z`, // embedded in a longer run of base62 (after)
  `Z${api}`, // (before)
  `sha${api.slice(4)}${api.slice(4)}`, // a long base62 run with no prefix
]

describe('a fixture tree', () => {
  const tree = join(root, 'tree')
  write(join(tree, '.env'), `SERVICE_API_TOKEN=${api}\nOTHER=1\n`)
  write(
    join(tree, 'config', 'deep', 'settings.json'),
    `{\n  "a": 1,\n  "session": "${oauth}",\n  "b": "${nested}"\n}\n`,
  )
  write(join(tree, 'notes.md'), `two on one line: ${twice} and '${twice}'\n`)
  write(join(tree, 'look-alikes.txt'), `${lookAlikes.join('\n')}\n`)
  write(join(tree, 'node_modules', 'pkg', 'index.js'), `const t = '${generateTokenValue('api')}'\n`)
  // Binary content (a NUL byte) is searched too, as history is.
  const inBinary = generateTokenValue('api')
  write(join(tree, 'image.bin'), Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(inBinary)]))

  test('finds every token, with file, line and kind, and no look-alike; exit 1', () => {
    const result = runCli(['scan', '--no-history', tree])
    expect(result.code).toBe(1)
    expect(result.stdout.trim().split('\n').sort()).toEqual(
      [
        `${join(tree, '.env')}:1: API token ${tokenValueHint(api)}`,
        `${join(tree, 'config', 'deep', 'settings.json')}:3: OAuth token ${tokenValueHint(oauth)}`,
        `${join(tree, 'config', 'deep', 'settings.json')}:4: API token ${tokenValueHint(nested)}`,
        `${join(tree, 'notes.md')}:1: API token ${tokenValueHint(twice)}`,
        `${join(tree, 'notes.md')}:1: API token ${tokenValueHint(twice)}`,
        `${join(tree, 'image.bin')}:1: API token ${tokenValueHint(inBinary)}`,
      ].sort(),
    )
    expect(result.stderr).toBe('6 token value(s) found: revoke them, then remove them\n')
    for (const value of [api, oauth, nested, twice, inBinary])
      expect(result.stdout + result.stderr).not.toContain(value.slice(4, -4))
  })

  test('a file given by itself; a clean file exits 0', () => {
    expect(runCli(['scan', '--no-history', join(tree, '.env')]).stdout).toBe(
      `${join(tree, '.env')}:1: API token ${tokenValueHint(api)}\n`,
    )
    expect(runCli(['scan', '--no-history', join(tree, 'look-alikes.txt')])).toEqual({
      code: 0,
      stdout: '',
      stderr: 'no token values found\n',
    })
  })

  test.each([
    [['scan', '--colour'], /Unknown option '--colour'/],
    [['scan', '--no-history', join(root, 'missing')], /missing: cannot read \(ENOENT\)/],
  ])('%j is bad usage: exit 2', (args, message) => {
    const result = runCli(args)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
  })

  test('--help explains the command', () => {
    expect(runCli(['scan', '--help']).stdout).toContain('git log -p --all')
  })
})

describe('git history', () => {
  const repository = join(root, 'repository')
  const deleted = generateTokenValue('api')
  const branched = generateTokenValue('oauth')
  const current = generateTokenValue('api')
  mkdirSync(repository, { recursive: true })
  git(repository, 'init', '-q', '-b', 'main')
  write(join(repository, 'app', 'config.js'), `// config\nexport const token = '${deleted}'\n`)
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'add config')
  const added = git(repository, 'rev-parse', 'HEAD').trim()
  write(
    join(repository, 'app', 'config.js'),
    '// config\nexport const token = process.env.SERVICE_API_TOKEN\n',
  )
  write(join(repository, 'README.md'), `# app\n\nlook-alike: ${lookAlikes[0]}\n`)
  git(repository, 'commit', '-q', '-am', 'read the token from the environment')
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'readme')
  git(repository, 'checkout', '-q', '-b', 'feature')
  write(join(repository, 'feature.txt'), `a\nb\n${branched}\n`)
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'feature')
  const onBranch = git(repository, 'rev-parse', 'HEAD').trim()
  git(repository, 'checkout', '-q', 'main')
  // Not committed: found in the working tree only.
  write(join(repository, 'local.env'), `TOKEN=${current}\n`)

  test('finds values deleted since and on other branches, with the commit that added them', () => {
    const result = runCli(['scan', repository])
    expect(result.code).toBe(1)
    const lines = result.stdout.trim().split('\n')
    expect(lines).toContain(
      `app/config.js:2 (commit ${added.slice(0, 12)}): API token ${tokenValueHint(deleted)}`,
    )
    expect(lines).toContain(
      `feature.txt:3 (commit ${onBranch.slice(0, 12)}): OAuth token ${tokenValueHint(branched)}`,
    )
    expect(lines).toContain(`${join(repository, 'local.env')}:1: API token ${tokenValueHint(current)}`)
    expect(lines).toHaveLength(3)
    for (const value of [deleted, branched, current]) expect(result.stdout).not.toContain(value.slice(4, -4))
  })

  test('a path inside the repository limits the history to it', () => {
    const result = runCli(['scan', join(repository, 'app')])
    expect(result.stdout.trim().split('\n')).toEqual([
      `app/config.js:2 (commit ${added.slice(0, 12)}): API token ${tokenValueHint(deleted)}`,
    ])
  })

  test('--no-history scans the working tree only', () => {
    const result = runCli(['scan', '--no-history', repository])
    expect(result.stdout).toBe(`${join(repository, 'local.env')}:1: API token ${tokenValueHint(current)}\n`)
  })
})

/**
 * Merges (security review): a pathspec (`.` for the root) simplified history, so a side branch that
 * added a value and removed it, merged with --no-ff, was never read; and -p shows no diff for a
 * merge, so a value the merge commit itself wrote was never seen. Each value is reported once, under
 * the commit that wrote it, with its line (a merge's diff also holds what its side branch brought).
 */
describe('merges', () => {
  const repository = join(root, 'merges')
  const removed = generateTokenValue('api')
  const kept = generateTokenValue('oauth')
  const evil = generateTokenValue('api')
  const linear = generateTokenValue('oauth')
  const evilLock = generateTokenValue('oauth')
  mkdirSync(repository, { recursive: true })
  git(repository, 'init', '-q', '-b', 'main')
  write(join(repository, 'app', 'config.txt'), 'one\ntwo\nthree\n')
  // git's combined diff of a merge ignores --text: a lockfile marked binary would hide a value there.
  write(join(repository, 'app', '.gitattributes'), '*.lock binary\n')
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'root')
  write(join(repository, 'linear.txt'), `a\n${linear}\n`)
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'linear')
  const linearCommit = git(repository, 'rev-parse', 'HEAD').trim()
  // A side branch adds a value and removes it: the merge's tree is main's.
  git(repository, 'checkout', '-q', '-b', 'oops')
  write(join(repository, 'secret.txt'), `TOKEN=${removed}\n`)
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'oops')
  const oops = git(repository, 'rev-parse', 'HEAD').trim()
  git(repository, 'rm', '-q', 'secret.txt')
  git(repository, 'commit', '-q', '-m', 'remove it')
  git(repository, 'checkout', '-q', 'main')
  git(repository, 'merge', '-q', '--no-ff', '-m', 'merge oops', 'oops')
  // A side branch keeps its value, in a file main also changes: the merge differs from both parents.
  git(repository, 'checkout', '-q', '-b', 'keep')
  write(join(repository, 'app', 'config.txt'), `one\ntwo\nthree\nTOKEN=${kept}\n`)
  git(repository, 'commit', '-q', '-am', 'keep')
  const keep = git(repository, 'rev-parse', 'HEAD').trim()
  git(repository, 'checkout', '-q', 'main')
  write(join(repository, 'app', 'config.txt'), 'ONE\ntwo\nthree\n')
  git(repository, 'commit', '-q', '-am', 'capitals')
  // The merge itself writes a value on line 3, in neither parent, and one in a lockfile.
  git(repository, 'merge', '-q', '--no-ff', '--no-commit', 'keep')
  write(join(repository, 'app', 'config.txt'), `ONE\ntwo\nEVIL=${evil}\nthree\nTOKEN=${kept}\n`)
  write(join(repository, 'app', 'yarn.lock'), `lock\n${evilLock}\n`)
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'evil merge')
  const merge = git(repository, 'rev-parse', 'HEAD').trim()
  rmSync(join(repository, 'app', 'config.txt'))
  rmSync(join(repository, 'app', 'yarn.lock'))
  rmSync(join(repository, 'linear.txt'))

  test.each([
    ['the root', repository],
    ['a directory in it', join(repository, 'app')],
  ])(
    'each value once, under the commit that wrote it: side branches, evil merges, linear commits (%s)',
    (_name, path) => {
      const result = runCli(['scan', path])
      expect(result.code).toBe(1)
      const all = [
        `secret.txt:1 (commit ${oops.slice(0, 12)}): API token ${tokenValueHint(removed)}`,
        `app/config.txt:4 (commit ${keep.slice(0, 12)}): OAuth token ${tokenValueHint(kept)}`,
        `app/config.txt:3 (commit ${merge.slice(0, 12)}): API token ${tokenValueHint(evil)}`,
        `app/yarn.lock:2 (commit ${merge.slice(0, 12)}): OAuth token ${tokenValueHint(evilLock)}`,
        `linear.txt:2 (commit ${linearCommit.slice(0, 12)}): OAuth token ${tokenValueHint(linear)}`,
      ]
      const expected = path === repository ? all : all.filter((found) => found.startsWith('app/'))
      expect(result.stdout.trim().split('\n').sort()).toEqual(expected.sort())
    },
  )
})

/**
 * A path whose repository git refuses is a problem, not a scan without history (security review):
 * only "not a git repository" means there is no history to read.
 */
describe('a repository git will not read', () => {
  const base = join(root, 'refused')
  afterEach(() => vi.unstubAllEnvs())

  test.each<[string, (repository: string) => void]>([
    [
      'an unknown core.repositoryformatversion',
      (repository) => {
        git(repository, 'config', 'core.repositoryformatversion', '99')
      },
    ],
    // As when a CI container's user does not own the checkout; git's own switch for its tests.
    ['dubious ownership', () => vi.stubEnv('GIT_TEST_ASSUME_DIFFERENT_OWNER', '1')],
    [
      'a .git file that names no repository',
      (repository) => {
        rmSync(join(repository, '.git'), { recursive: true })
        write(join(repository, '.git'), `gitdir: ${join(base, 'nowhere')}\n`)
      },
    ],
  ])('%s: exit 2, the path named', (name, refuse) => {
    const repository = join(base, name.replace(/\W+/g, '-'))
    mkdirSync(repository, { recursive: true })
    git(repository, 'init', '-q', '-b', 'main')
    write(join(repository, 'clean.txt'), 'nothing\n')
    git(repository, 'add', '.')
    git(repository, 'commit', '-q', '-m', 'clean')
    refuse(repository)
    const result = runCli(['scan', repository])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`git history of ${repository}: fatal: `)
    expect(result.stderr).not.toMatch(/hint:|graft/i)
  })

  test('a directory in no repository is scanned without history, no problem', () => {
    const plain = join(base, 'plain')
    write(join(plain, 'clean.txt'), 'nothing\n')
    // Whatever directory the system's temporary one lies in, discovery stops here.
    vi.stubEnv('GIT_CEILING_DIRECTORIES', base)
    expect(runCli(['scan', plain])).toEqual({ code: 0, stdout: '', stderr: 'no token values found\n' })
  })
})

/**
 * A cap on findings (security review): 1 GiB of repeated values gave millions of objects and a heap
 * crash. Past the cap the scan stops reading, lists what it found and exits 2 with a problem.
 */
describe('the cap on findings', () => {
  const base = join(root, 'cap')
  const value = generateTokenValue('api')
  const cap = `the scan stopped at its cap of ${MAX_FINDINGS} token values found`

  /** A repository whose one commit adds `count` values; in the working tree too unless `history`. */
  function repeated(name: string, count: number, history: boolean): string {
    const repository = join(base, name)
    mkdirSync(repository, { recursive: true })
    git(repository, 'init', '-q', '-b', 'main')
    write(join(repository, 'many.txt'), `TOKEN=${value}\n`.repeat(count))
    git(repository, 'add', '.')
    git(repository, 'commit', '-q', '-m', 'many')
    if (history) rmSync(join(repository, 'many.txt'))
    return repository
  }

  test.each([
    ['files', ['--no-history'], false],
    ['history', [], true],
  ])('%s: the cap is listed and exits 1; one more stops the scan, exit 2', (name, options, history) => {
    const atCap = runCli(['scan', ...options, repeated(`${name}-at`, MAX_FINDINGS, history)])
    expect(atCap.code).toBe(1)
    expect(atCap.stdout.trim().split('\n')).toHaveLength(MAX_FINDINGS)
    expect(atCap.stderr).not.toContain(cap)
    const past = runCli(['scan', ...options, repeated(`${name}-past`, MAX_FINDINGS + 1, history)])
    expect(past.code).toBe(2)
    expect(past.stdout.trim().split('\n')).toHaveLength(MAX_FINDINGS)
    expect(past.stderr).toContain(cap)
  })
})

describe('history of files git shows as binary', () => {
  const repository = join(root, 'binary')
  mkdirSync(repository, { recursive: true })
  git(repository, 'init', '-q', '-b', 'main')
  const locked = generateTokenValue('api')
  const image = generateTokenValue('oauth')
  const afterEmpty = generateTokenValue('api')
  // Lockfiles are often marked -diff or binary, so that `git log -p` prints "Binary files … differ".
  write(join(repository, '.gitattributes'), 'package-lock.json -diff\n*.lock binary\n')
  write(join(repository, 'package-lock.json'), `{\n  "resolved": "https://x.example/?t=${locked}"\n}\n`)
  write(join(repository, 'yarn.lock'), `a\n${locked}\n`)
  // Real binary content: NUL bytes, bytes that are not UTF-8, a carriage return, and the value
  // between NULs on the fourth line.
  write(
    join(repository, 'image.bin'),
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x0a, 0x00]),
      Buffer.from(image),
      Buffer.from([0x00, 0xc3, 0x28, 0x0a]),
    ]),
  )
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'binary files')
  const first = git(repository, 'rev-parse', 'HEAD').trim()
  // A commit whose only diff has no hunk must not keep the next commit's lines in its header.
  write(join(repository, 'empty.txt'), '')
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'an empty file')
  write(join(repository, 'later.txt'), `${afterEmpty}\n`)
  git(repository, 'add', '.')
  git(repository, 'commit', '-q', '-m', 'later')
  const later = git(repository, 'rev-parse', 'HEAD').trim()

  test('values in -diff, binary and NUL-holding files are found in history, with their commit', () => {
    const result = runCli(['scan', repository])
    expect(result.code).toBe(1)
    const history = result.stdout
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith(repository))
    expect(history.sort()).toEqual(
      [
        `package-lock.json:2 (commit ${first.slice(0, 12)}): API token ${tokenValueHint(locked)}`,
        `yarn.lock:2 (commit ${first.slice(0, 12)}): API token ${tokenValueHint(locked)}`,
        `image.bin:4 (commit ${first.slice(0, 12)}): OAuth token ${tokenValueHint(image)}`,
        `later.txt:1 (commit ${later.slice(0, 12)}): API token ${tokenValueHint(afterEmpty)}`,
      ].sort(),
    )
  })

  test('a line of binary content longer than a search window: values at and across its edges, no look-alike', () => {
    const long = join(root, 'binary-long')
    mkdirSync(long, { recursive: true })
    git(long, 'init', '-q', '-b', 'main')
    // scan searches a line in windows of 1 MiB; this line is 4 MiB of non-base62 bytes, no newline.
    const window = 1024 * 1024
    const content = Buffer.alloc(4 * window, 0xff)
    const across = generateTokenValue('api')
    const atEdge = generateTokenValue('oauth')
    const lookAlike = generateTokenValue('api')
    content.write(across, window - 20, 'latin1')
    content.write(atEdge, 2 * window, 'latin1')
    // A base62 character just before the last window: the value it starts with is part of a longer run.
    content.write(`Z${lookAlike}`, 3 * window - 1, 'latin1')
    content[0] = 0
    write(join(long, 'blob.bin'), content)
    git(long, 'add', '.')
    git(long, 'commit', '-q', '-m', 'blob')
    const commit = git(long, 'rev-parse', 'HEAD').trim().slice(0, 12)
    const result = runCli(['scan', long])
    // The working tree's copy is searched the same way.
    expect(result.stdout.trim().split('\n')).toEqual([
      `${join(long, 'blob.bin')}:1: API token ${tokenValueHint(across)}`,
      `${join(long, 'blob.bin')}:1: OAuth token ${tokenValueHint(atEdge)}`,
      `blob.bin:1 (commit ${commit}): API token ${tokenValueHint(across)}`,
      `blob.bin:1 (commit ${commit}): OAuth token ${tokenValueHint(atEdge)}`,
    ])
  })
})
