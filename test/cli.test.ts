import { describe, expect, test } from 'vitest'
import { runCli } from '../cli/main.js'
import { isWellFormedTokenValue } from '../src/tokens/token-format.js'

const files: Record<string, string> = {
  'good.json': JSON.stringify({ maxRecords: 10, allowedIps: ['10.0.0.0/8'] }),
  'list.json': JSON.stringify([{ maxBytes: 5 }, { allowedIps: ['010.1.1.1', '::/0'] }]),
  'seed.json': JSON.stringify({
    datasets: [
      { name: 'a', exportRestrictions: { maxRecords: 1 } },
      { name: 'b', exportRestrictions: { allowedIps: ['10.1.2.77/24'], maxRecords: -1 } },
      { name: 'c' },
    ],
  }),
  'broken.json': '{ nope',
}
const read = (path: string) => {
  const content = files[path]
  if (content === undefined) throw new Error(`ENOENT: no such file '${path}'`)
  return content
}

describe('data-access-policy CLI', () => {
  test.each([
    [['tables'], '# Decision tables'],
    [['tables', '--format', 'md'], '# Decision tables'],
    [['tables', '--format', 'json'], '{\n  "decisions": ['],
    [
      ['tables', '--format', 'csv'],
      'resource,scope,public_level,user_level,operation,status,code,required_scope',
    ],
  ])('%j prints the tables', (args, start) => {
    const result = runCli(args, read)
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith(start)).toBe(true)
  })

  test.each([
    [['token'], 'dap_'],
    [['token', '--kind', 'api'], 'dap_'],
    [['token', '--kind', 'oauth'], 'dao_'],
  ])('%j prints a well-formed value', (args, prefix) => {
    const value = runCli(args, read).stdout.trim()
    expect(value.startsWith(prefix)).toBe(true)
    expect(isWellFormedTokenValue(value)).toBe(true)
  })

  test('check-restrictions accepts a valid file', () => {
    expect(runCli(['check-restrictions', 'good.json'], read)).toEqual({
      code: 0,
      stdout: 'good.json: 1 restriction set(s) valid\n',
      stderr: '',
    })
  })

  test('check-restrictions explains every error of a list', () => {
    const result = runCli(['check-restrictions', 'list.json'], read)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('list.json: 1 error(s)')
    expect(result.stderr).toContain('[1].allowedIps[0]: "010.1.1.1"')
  })

  test('check-restrictions explains every error of a seed', () => {
    const result = runCli(['check-restrictions', 'seed.json'], read)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      'datasets[1].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?',
    )
    expect(result.stderr).toContain('datasets[1].exportRestrictions.maxRecords:')
  })

  test.each([
    [[], 'missing command'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['tables', '--format', 'xml'], '--format must be md, json or csv, got "xml"'],
    [['token', '--kind', 'jwt'], '--kind must be api or oauth, got "jwt"'],
    [['token', '--bogus'], "Unknown option '--bogus'"],
    [['check-restrictions'], 'check-restrictions takes exactly one FILE'],
    [['check-restrictions', 'missing.json'], 'missing.json: cannot read JSON: ENOENT'],
    [['check-restrictions', 'broken.json'], 'broken.json: cannot read JSON'],
  ])('%j is a usage error (exit 2)', (args, message) => {
    const result = runCli(args, read)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
  })

  test.each([['--help'], ['tables', '--help'], ['token', '-h'], ['check-restrictions', '--help']])(
    '%j prints help',
    (...args) => {
      const result = runCli(args, read)
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/^Usage: data-access-policy/)
    },
  )
})
