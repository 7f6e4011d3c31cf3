import { describe, expect, test } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { runCli } from '../cli/main.js'
import { toYaml } from '../cli/yaml.js'
import { OPERATION_NAMES } from '../src/decisions/operations.js'
import { operationSecurity, securitySchemes } from '../src/openapi/index.js'
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
    [['openapi', '--format', 'xml'], '--format must be json or yaml, got "xml"'],
    [['openapi', '--openapi', '2.0'], '--openapi must be 3.0, 3.1 or 3.2, got "2.0"'],
    [['openapi', '--issuer', 'auth.example.org'], '--issuer: expected an absolute http(s) URL'],
  ])('%j is a usage error (exit 2)', (args, message) => {
    const result = runCli(args, read)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
  })

  test.each([
    ['--help'],
    ['tables', '--help'],
    ['token', '-h'],
    ['check-restrictions', '--help'],
    ['openapi', '-h'],
  ])('%j prints help', (...args) => {
    const result = runCli(args, read)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Usage: data-access-policy/)
  })
})

describe('data-access-policy openapi', () => {
  const ISSUER = 'https://auth.example.org'

  test('prints the security schemes and every requirement as JSON, from data-access-policy/openapi', () => {
    const result = runCli(['openapi', '--issuer', ISSUER])
    expect(result.code).toBe(0)
    const printed = JSON.parse(result.stdout) as {
      components: unknown
      operations: Record<string, unknown>
    }
    expect(printed.components).toEqual({ securitySchemes: securitySchemes({ issuer: ISSUER }) })
    expect(Object.keys(printed.operations)).toEqual([...OPERATION_NAMES, 'authenticated', 'public'])
    expect(printed.operations['table.read']).toEqual(operationSecurity('table.read', { issuer: ISSUER }))
  })

  test.each([
    [[]],
    [['--issuer', ISSUER]],
    [['--openapi', '3.2', '--issuer', ISSUER]],
    [['--openapi', '3.0']],
  ])('YAML with %j parses back to the JSON output', (args) => {
    const yaml = runCli(['openapi', '--format', 'yaml', ...args])
    const json = runCli(['openapi', '--format', 'json', ...args])
    expect(yaml.code).toBe(0)
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout))
  })

  test('--openapi 3.2 names the standard device flow', () => {
    const printed = JSON.parse(runCli(['openapi', '--openapi', '3.2', '--issuer', ISSUER]).stdout)
    expect(Object.keys(printed.components.securitySchemes.oauth2.flows)).toEqual([
      'authorizationCode',
      'deviceAuthorization',
    ])
  })
})

describe('toYaml', () => {
  test.each([
    [{ a: 1 }, 'a: 1\n'],
    [{ security: [{ bearer: ['data.data'] }] }, 'security:\n- bearer:\n  - "data.data"\n'],
    [[], '[]\n'],
    [{}, '{}\n'],
    ['text', '"text"\n'],
  ])('%j', (value, expected) => {
    expect(toYaml(value)).toBe(expected)
  })

  // Keys and strings YAML would otherwise read as another type, or as structure.
  test.each([
    { '400': { yes: true, no: null, 'x-data-access': { a: [] } } },
    { 'a b': 'q"\n', '': '', '- x': ': y', '#': '# z', '~': '~', true: 'false', '1.5': '0x10' },
    { nested: [[1, [2, { k: [] }]], [], {}], unicode: 'é ✓ \u0000', empty: '' },
    { list: [{ a: 1, b: [{ c: 'd' }] }, 'e', null, false, -1.25e-7] },
  ])('%j round-trips through a YAML parser', (value) => {
    expect(parseYaml(toYaml(value))).toEqual(value)
  })
})
