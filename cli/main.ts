// The `data-access-policy` command: decision tables, fresh token values, restriction checks, a
// scan for committed token values, and the OpenAPI security of every operation.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { buildDecisionTables } from '../src/decisions/decision-tables.js'
import { OPERATION_NAMES } from '../src/decisions/operations.js'
import { formatConfigPath, InvalidArgumentError, TokenLifetimeError } from '../src/errors.js'
import {
  type OpenApiOptions,
  type OpenApiVersion,
  operationSecurity,
  type RouteRequirement,
  securitySchemes,
} from '../src/openapi/index.js'
import { exportRestrictionsSchema } from '../src/restrictions/export-restrictions.js'
import { generateTokenValue } from '../src/tokens/token-format.js'
import {
  checkTokenLifetime,
  DAY_MS,
  isLifetimeDays,
  TOKEN_LIFETIME_DAYS,
} from '../src/tokens/token-lifetime.js'
import {
  renderDecisionTablesCsv,
  renderDecisionTablesJson,
  renderDecisionTablesMarkdown,
} from './decision-tables-render.js'
import { formatFinding, type HistoryProgress, MAX_FINDINGS, scanPaths } from './scan.js'
import { toYaml } from './yaml.js'

/** Exit codes: 0 success, 1 the checked input is invalid, 2 the command line is wrong. */
export const EXIT = { ok: 0, invalid: 1, usage: 2 } as const

const USAGE = `Usage: data-access-policy <command> [options]

Commands:
  tables [--format md|json|csv]     print the policy's decision tables (default md)
  token [--kind api|oauth] [--lifetime L] [--max-lifetime DAYS]
                                    print a fresh, well-formed token value (default api) and,
                                    with --lifetime, its expiry for a seed file
  scan [--no-history] [PATH…]       find token values in files and git history (default .)
  check-restrictions FILE           validate export restrictions in a JSON file: one restrictions
                                    object, an array of them, or a seed with datasets[].exportRestrictions
  openapi [--format json|yaml]      print the OpenAPI security schemes and every operation's security,
          [--issuer URL]            denial responses and x-data-access (default json)
          [--openapi 3.0|3.1|3.2]

Run 'data-access-policy <command> --help' for a command's help.
Exit codes: 0 success, 1 the file is invalid (scan: token values found), 2 bad usage or unreadable file.`

const HELP: Record<string, string> = {
  tables: `Usage: data-access-policy tables [--format md|json|csv]

Prints every decision of the policy (scope × public level × user level × operation) and the
export-restriction examples, generated from the core. Exit 0.`,
  token: `Usage: data-access-policy token [--kind api|oauth] [--lifetime L] [--max-lifetime DAYS]

Prints a fresh token value: dap_ (api) or dao_ (oauth), 32 random base62 characters and a
6-character CRC-32 checksum. It is not registered anywhere.

--lifetime L           7, 30, 60, 90 or 365 (days from now), a date YYYY-MM-DD (00:00 UTC), or
                       none: prints a second line, "expiresAt: <ISO instant>" (or "expiresAt: none"),
                       the seed file's field
--max-lifetime DAYS    refuse a lifetime longer than DAYS, and none, as --max-token-lifetime does

Exit 0; 2 on a bad option or a lifetime over the cap.`,
  scan: `Usage: data-access-policy scan [--no-history] [PATH…]

Finds token values (dap_/dao_ + 32 base62 + a valid CRC-32 checksum: no look-alikes) in the files
under each PATH (default: the current directory; .git and node_modules are skipped; binary files,
a NUL byte in a .env, are searched too) and, unless --no-history, in the git history of the
repositories the PATHs lie in: every line ever added (git log -p --all --text, limited to the PATHs;
binary files, merged branches and the lines merge commits wrote included) and the message of every
commit and annotated tag.
Prints one line per value found, "FILE:LINE: API token dap_…Cnw5", with "(commit SHA)" after the
line for history, or "commit SHA message:LINE: …" and "tag NAME message:LINE: …" for a message;
never a value. On a terminal, stderr shows how many commits of the history have been read.

Exit 0 when none is found, 1 when any is (for pre-commit hooks and CI), 2 on bad usage, when a
PATH or the history cannot be read, or when ${MAX_FINDINGS} values are listed: the scan stops there.`,
  'check-restrictions': `Usage: data-access-policy check-restrictions FILE

Validates export restrictions ({ maxBytes?, maxRecords?, allowedIps? }) in a JSON file and explains
every error with its path. Exit 0 when valid, 1 when not, 2 when the file cannot be read or parsed.`,
  openapi: `Usage: data-access-policy openapi [--format json|yaml] [--issuer URL] [--openapi 3.0|3.1|3.2]

Prints what data-access-policy/openapi derives from the operation catalogue: components.securitySchemes
(bearer; with --issuer, OAuth with the authorization-code and device flows) and, for every operation
and for 'authenticated' (any valid token) and 'public' routes, its security requirement (the minimal
scope), its denial responses and its x-data-access object. --openapi is the document's version
(default 3.1). Exit 0.`,
}

/** What a command produced: text for stdout and stderr, and the exit code. */
export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const ok = (stdout: string): CliResult => ({ code: EXIT.ok, stdout, stderr: '' })
const usage = (message: string): CliResult => ({
  code: EXIT.usage,
  stdout: '',
  stderr: `${message}\n\n${USAGE}\n`,
})

/**
 * Where a command tells how far it is while it runs (`process.stderr`): only when it is a terminal,
 * and then on one line it rewrites; nothing when it is piped, so logs and CI output stay clean.
 */
export interface ProgressStream {
  readonly isTTY?: boolean
  write(text: string): unknown
}

/**
 * Runs the command line `args` (without `node` and the script) and returns its result. `progress`
 * is told how far a long command (scan) is, when it is a terminal.
 *
 * @example
 * const { code, stdout, stderr } = runCli(process.argv.slice(2), undefined, process.stderr)
 */
export function runCli(
  args: readonly string[],
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
  progress?: ProgressStream,
): CliResult {
  const [command, ...rest] = args
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return command === undefined ? usage('missing command') : ok(`${USAGE}\n`)
  }
  if (!(command in HELP)) return usage(`unknown command ${JSON.stringify(command)}`)
  if (command === 'scan') return scan(rest, progress?.isTTY === true ? progress : undefined)
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      args: [...rest],
      allowPositionals: command === 'check-restrictions',
      options: {
        help: { type: 'boolean', short: 'h' },
        format: { type: 'string' },
        kind: { type: 'string' },
        ...(command === 'token'
          ? { lifetime: { type: 'string' as const }, 'max-lifetime': { type: 'string' as const } }
          : {}),
        ...(command === 'openapi'
          ? { issuer: { type: 'string' as const }, openapi: { type: 'string' as const } }
          : {}),
      },
      strict: true,
    })
  } catch (error) {
    return usage((error as Error).message)
  }
  if (parsed.values.help === true) return ok(`${HELP[command]}\n`)
  switch (command) {
    case 'tables':
      return tables(parsed.values.format)
    case 'token':
      return token(parsed.values.kind, parsed.values.lifetime, parsed.values['max-lifetime'])
    case 'openapi':
      return openapi(parsed.values)
    default:
      return checkRestrictions(parsed.positionals, readFile)
  }
}

function tables(format: unknown): CliResult {
  if (parsed(format, ['md', 'json', 'csv']) === undefined) {
    return usage(`--format must be md, json or csv, got ${JSON.stringify(format)}`)
  }
  const data = buildDecisionTables()
  if (format === 'json') return ok(renderDecisionTablesJson(data))
  if (format === 'csv') return ok(renderDecisionTablesCsv(data))
  return ok(renderDecisionTablesMarkdown(data))
}

function token(kind: unknown, lifetime: unknown, maxLifetime: unknown): CliResult {
  const chosen = parsed(kind, ['api', 'oauth'])
  if (chosen === undefined) return usage(`--kind must be api or oauth, got ${JSON.stringify(kind)}`)
  const value = generateTokenValue(chosen === 'oauth' ? 'oauth' : 'api')
  if (lifetime === undefined && maxLifetime === undefined) return ok(`${value}\n`)
  let cap: number | undefined
  if (maxLifetime !== undefined) {
    cap = /^[1-9][0-9]*$/.test(String(maxLifetime)) ? Number(maxLifetime) : Number.NaN
    if (!isLifetimeDays(cap)) {
      return usage(
        `--max-lifetime must be a whole number of days from 1 to 36500, got ${JSON.stringify(maxLifetime)}`,
      )
    }
  }
  const now = Date.now()
  const expiresAt = expiryOf(String(lifetime ?? 'none'), now)
  if (expiresAt === null) {
    return usage(
      `--lifetime must be ${TOKEN_LIFETIME_DAYS.join(', ')}, a date YYYY-MM-DD in the future or none, got ${JSON.stringify(lifetime)}`,
    )
  }
  try {
    checkTokenLifetime(expiresAt, now, cap)
  } catch (error) {
    if (error instanceof TokenLifetimeError)
      return { code: EXIT.usage, stdout: '', stderr: `${error.message}\n` }
    throw error
  }
  return ok(`${value}\nexpiresAt: ${expiresAt === undefined ? 'none' : new Date(expiresAt).toISOString()}\n`)
}

// A --lifetime's expiry: epoch ms, undefined for none, null when it is none of the choices.
function expiryOf(lifetime: string, now: number): number | undefined | null {
  if (lifetime === 'none') return undefined
  const days = TOKEN_LIFETIME_DAYS.find((each) => String(each) === lifetime)
  if (days !== undefined) return now + days * DAY_MS
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(lifetime)
  if (date === null) return null
  const at = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))
  const real = new Date(at).toISOString().slice(0, 10) === lifetime
  return real && at > now ? at : null
}

// `\r` and "erase to the end of the line": each report replaces the last, and the last is erased.
const REWRITE_LINE = '\r\u001b[K'

/** Reports of a history scan's progress, on one line of a terminal, and the call that erases it. */
function progressLine(terminal: ProgressStream | undefined): {
  readonly report?: (progress: HistoryProgress) => void
  readonly end: () => void
} {
  if (terminal === undefined) return { end: () => {} }
  let shown = false
  return {
    report: ({ commits, total }) => {
      shown = true
      terminal.write(`${REWRITE_LINE}scanning git history: ${commits} of ${total} commits`)
    },
    end: () => {
      if (shown) terminal.write(REWRITE_LINE)
    },
  }
}

function scan(args: readonly string[], terminal?: ProgressStream): CliResult {
  let parsedArgs: ReturnType<typeof parseArgs>
  try {
    parsedArgs = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, 'no-history': { type: 'boolean' } },
      strict: true,
    })
  } catch (error) {
    return usage((error as Error).message)
  }
  if (parsedArgs.values.help === true) return ok(`${HELP.scan}\n`)
  const paths = parsedArgs.positionals.length === 0 ? ['.'] : parsedArgs.positionals
  const progress = progressLine(terminal)
  const { findings, problems } = scanPaths(paths, {
    history: parsedArgs.values['no-history'] !== true,
    ...(progress.report === undefined ? {} : { onProgress: progress.report }),
  })
  progress.end()
  const stdout = findings.map((found) => `${formatFinding(found)}\n`).join('')
  const summary =
    findings.length === 0
      ? 'no token values found\n'
      : `${findings.length} token value(s) found: revoke them, then remove them\n`
  if (problems.length > 0) {
    return { code: EXIT.usage, stdout, stderr: `${problems.join('\n')}\n${summary}` }
  }
  return { code: findings.length === 0 ? EXIT.ok : EXIT.invalid, stdout, stderr: summary }
}

const REQUIREMENTS: readonly RouteRequirement[] = [...OPERATION_NAMES, 'authenticated', 'public']

function openapi(values: { format?: unknown; issuer?: unknown; openapi?: unknown }): CliResult {
  const format = parsed(values.format, ['json', 'yaml'])
  if (format === undefined)
    return usage(`--format must be json or yaml, got ${JSON.stringify(values.format)}`)
  const version = parsed(values.openapi, ['3.1', '3.0', '3.2'] as const satisfies readonly OpenApiVersion[])
  if (version === undefined) {
    return usage(`--openapi must be 3.0, 3.1 or 3.2, got ${JSON.stringify(values.openapi)}`)
  }
  const options: OpenApiOptions =
    values.issuer === undefined ? { openapi: version } : { openapi: version, issuer: values.issuer as string }
  let output: unknown
  try {
    output = {
      components: { securitySchemes: securitySchemes(options) },
      operations: Object.fromEntries(
        REQUIREMENTS.map((requirement) => [requirement, operationSecurity(requirement, options)]),
      ),
    }
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      return usage(error.message.replace(/^options\.issuer/, '--issuer'))
    throw error
  }
  return ok(format === 'yaml' ? toYaml(output) : `${JSON.stringify(output, null, 2)}\n`)
}

// An absent option takes the first allowed value; a present one must be allowed.
function parsed<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined) return allowed[0]
  return allowed.find((candidate) => candidate === value)
}

function checkRestrictions(files: readonly string[], readFile: (path: string) => string): CliResult {
  if (files.length !== 1) return usage('check-restrictions takes exactly one FILE')
  const file = files[0]!
  let data: unknown
  try {
    data = JSON.parse(readFile(file))
  } catch (error) {
    return {
      code: EXIT.usage,
      stdout: '',
      stderr: `${file}: cannot read JSON: ${(error as Error).message}\n`,
    }
  }
  const targets = restrictionsIn(data)
  const problems: string[] = []
  for (const [path, value] of targets) {
    const result = exportRestrictionsSchema.safeParse(value)
    if (result.success) continue
    for (const issue of result.error.issues) {
      const where = formatConfigPath([
        ...path,
        ...issue.path.filter((p): p is string | number => typeof p !== 'symbol'),
      ])
      problems.push(`${where === '' ? '(root)' : where}: ${issue.message}`)
    }
  }
  if (problems.length > 0) {
    return {
      code: EXIT.invalid,
      stdout: '',
      stderr: `${file}: ${problems.length} error(s)\n${problems.join('\n')}\n`,
    }
  }
  return ok(`${file}: ${targets.length} restriction set(s) valid\n`)
}

function restrictionsIn(data: unknown): [(string | number)[], unknown][] {
  if (Array.isArray(data)) return data.map((value, index) => [[index], value])
  const datasets = (data as { datasets?: unknown } | null)?.datasets
  if (Array.isArray(datasets)) {
    return datasets.flatMap((dataset, index): [(string | number)[], unknown][] => {
      const value = (dataset as { exportRestrictions?: unknown } | null)?.exportRestrictions
      return value === undefined ? [] : [[['datasets', index, 'exportRestrictions'], value]]
    })
  }
  return [[[], data]]
}
