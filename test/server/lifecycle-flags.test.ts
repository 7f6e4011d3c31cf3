/**
 * The token lifecycle's flags (issue 30): --max-token-lifetime DAYS and --secret-scanning-keys FILE,
 * each validated with one clear line and exit code 2, listed in --help and in the README's table.
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { type Console, run } from '../../examples/server/cli.js'
import { parseCommandLine, USAGE } from '../../examples/server/flags.js'
import { ROOT } from './server-instances.js'

const directory = mkdtempSync(join(tmpdir(), 'dap-lifecycle-flags-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

function file(name: string, content: string): string {
  const path = join(directory, name)
  writeFileSync(path, content)
  return path
}

const pem = (curve: string) =>
  generateKeyPairSync('ec', { namedCurve: curve }).publicKey.export({ type: 'spki', format: 'pem' }) as string
const P256 = pem('prime256v1')
const RSA = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
  type: 'spki',
  format: 'pem',
}) as string

function capture(): Console & { readonly out_: string[]; readonly err_: string[] } {
  const out_: string[] = []
  const err_: string[] = []
  return { out: (line) => out_.push(line), err: (line) => err_.push(line), out_, err_ }
}

describe('--max-token-lifetime', () => {
  test.each([
    ['1', 1],
    ['90', 90],
    ['36500', 36_500],
  ])('%s days', (value, days) => {
    const parsed = parseCommandLine(['--max-token-lifetime', value])
    expect(parsed.help ? undefined : parsed.flags.maxTokenLifetimeDays).toBe(days)
  })

  test.each(['0', '-1', '1.5', '090', '36501', 'ninety', ''])(
    'refuses %j with one line, exit code 2',
    async (value) => {
      const io = capture()
      expect(await run([`--max-token-lifetime=${value}`, '--port', '0'], io)).toEqual({ exitCode: 2 })
      expect(io.err_).toEqual([
        `--max-token-lifetime: ${JSON.stringify(value)} is not a whole number of days from 1 to 36500`,
      ])
    },
  )
})

describe('--secret-scanning-keys', () => {
  test.each([
    [
      'a missing file',
      () => join(directory, 'missing.json'),
      /^--secret-scanning-keys: cannot read ".*missing\.json" \(ENOENT\)$/,
    ],
    ['a file that is not JSON', () => file('broken.json', '{'), /is not valid JSON/],
    [
      'a list instead of an object',
      () => file('list.json', '[]'),
      /must be an object with a "public_keys" array$/,
    ],
    ['no keys', () => file('empty.json', '{"public_keys":[]}'), /public_keys is empty/],
    [
      'a key without an identifier',
      () => file('noid.json', JSON.stringify({ public_keys: [{ key: P256 }] })),
      /public_keys\[0\]\.key_identifier must be/,
    ],
    [
      'an identifier twice',
      () =>
        file(
          'twice.json',
          JSON.stringify({
            public_keys: [
              { key_identifier: 'a', key: P256 },
              { key_identifier: 'a', key: P256 },
            ],
          }),
        ),
      /public_keys\[1\]\.key_identifier "a" is given twice$/,
    ],
    [
      'a key that is not PEM',
      () => file('garbage.json', JSON.stringify({ public_keys: [{ key_identifier: 'a', key: 'nope' }] })),
      /public_keys\[0\]\.key is not a PEM public key$/,
    ],
    [
      'an RSA key',
      () => file('rsa.json', JSON.stringify({ public_keys: [{ key_identifier: 'a', key: RSA }] })),
      /public_keys\[0\]\.key must be an ECDSA P-256 key$/,
    ],
    [
      'a P-384 key',
      () =>
        file('p384.json', JSON.stringify({ public_keys: [{ key_identifier: 'a', key: pem('secp384r1') }] })),
      /public_keys\[0\]\.key must be an ECDSA P-256 key$/,
    ],
  ])('%s: one line, exit code 2', async (_what, path, line) => {
    const io = capture()
    expect(await run(['--secret-scanning-keys', path(), '--port', '0'], io)).toEqual({ exitCode: 2 })
    expect(io.err_).toHaveLength(1)
    expect(io.err_[0]).toMatch(line)
  })

  test('a valid file (GitHub public-keys shape) starts the server with the leak endpoint', async () => {
    const keys = file(
      'keys.json',
      JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: P256, is_current: true }] }),
    )
    const io = capture()
    const result = await run(
      ['--secret-scanning-keys', keys, '--max-token-lifetime', '90', '--port', '0'],
      io,
    )
    if (!('server' in result)) throw new Error(io.err_.join('\n'))
    try {
      const response = await fetch(`${result.server.url}/secret-scanning/report`, {
        method: 'POST',
        body: '[]',
      })
      expect(response.status).toBe(401)
    } finally {
      await result.server.close()
    }
  })
})

test('--help and the README list both flags', () => {
  expect(USAGE).toContain('--max-token-lifetime DAYS')
  expect(USAGE).toContain('--secret-scanning-keys FILE')
  const readme = readFileSync(join(ROOT, 'examples', 'server', 'README.md'), 'utf8')
  expect(readme).toMatch(/^\| `--max-token-lifetime DAYS` /m)
  expect(readme).toMatch(/^\| `--secret-scanning-keys FILE` /m)
})
