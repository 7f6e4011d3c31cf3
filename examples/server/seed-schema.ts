/**
 * The seed file of the reference server (design §9), validated with zod: unknown keys are errors,
 * every field is checked, and the cross-references (users, owners, handles, token values) are
 * checked once the shapes are right. A bad seed is reported as ONE line naming the field and
 * quoting the bad value, e.g.
 * `datasets[1].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?`.
 * Secrets are never quoted: a line about a token value, a password or a client secret names the
 * field and says what is wrong; for a token value it shows at most the hint the token list shows
 * (`dap_…VPIp`: the prefix, "…" and the last four characters).
 */
import { z } from 'zod'
import {
  ConfigError,
  type ConfigPath,
  DATASET_LEVELS,
  type DatasetLevel,
  type ExportRestrictions,
  exportRestrictionsSchema,
  isWellFormedTokenValue,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  type PublicDatasetLevel,
  type PublicWorkflowLevel,
  parseScopes,
  type Scope,
  ScopeError,
  TOKEN_VALUE_LENGTH,
  WORKFLOW_LEVELS,
  type WorkflowLevel,
} from '../../src/index.js'

/** A JSON scalar: what a table cell may hold. */
export type Cell = string | number | boolean | null

/** A seed as validated, before passwords and token values are hashed. */
export interface SeedSpec {
  readonly users: readonly { readonly handle: string; readonly password: string }[]
  readonly organizations: readonly {
    readonly handle: string
    readonly admins: readonly string[]
    readonly members: readonly string[]
  }[]
  readonly datasets: readonly SeedDataset[]
  readonly workflows: readonly SeedWorkflow[]
  readonly tokens: readonly SeedToken[]
  readonly clients: readonly SeedClient[]
}

export interface SeedDataset {
  readonly owner: string
  readonly name: string
  readonly description: string
  readonly publicLevel: PublicDatasetLevel
  readonly access: Readonly<Record<string, DatasetLevel>>
  readonly exportRestrictions: ExportRestrictions | undefined
  readonly tables: readonly SeedTable[]
}

export interface SeedTable {
  readonly name: string
  readonly variables: readonly { readonly name: string; readonly type: string }[]
  readonly rows: readonly (readonly Cell[])[]
}

export interface SeedWorkflow {
  readonly owner: string
  readonly name: string
  readonly publicLevel: PublicWorkflowLevel
  readonly access: Readonly<Record<string, WorkflowLevel>>
}

export interface SeedToken {
  readonly user: string
  readonly name: string
  readonly scopes: readonly Scope[]
  readonly value: string
  /** Epoch milliseconds; a past instant seeds an already expired token. */
  readonly expiresAt: number | undefined
  readonly revoked: boolean
}

export interface SeedClient {
  readonly id: string
  /** Absent for a public client. */
  readonly secret: string | undefined
  readonly redirectUris: readonly string[]
  readonly offline: boolean
}

const MAX_QUOTED_LENGTH = 80

/** A value as an error line shows it: JSON, shortened so that one line stays one line. */
export function quote(value: unknown): string {
  let text: string
  try {
    text = value === undefined ? 'nothing' : (JSON.stringify(value) ?? String(value))
  } catch {
    text = `a value of type ${typeof value}`
  }
  return text.length > MAX_QUOTED_LENGTH ? `${text.slice(0, MAX_QUOTED_LENGTH - 1)}…` : text
}

// Handles, dataset, workflow and table names appear as URL path segments: keeping them to
// characters that never need percent-encoding lets the server refuse every encoded path outright.
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const NAME_RULE = 'use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit'
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
// Descriptions may span lines: tabs and line breaks are the only control characters they may hold.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const TEXT_CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/
const CLIENT_ID_PATTERN = /^[\x21-\x7e]{1,80}$/

/** The longest description, in UTF-16 code units. */
export const MAX_TEXT_LENGTH = 10_000

function name(what: string) {
  return z.string().refine((value) => NAME_PATTERN.test(value), {
    error: (issue) => `${quote(issue.input)} is not a valid ${what}: ${NAME_RULE}`,
  })
}

/** Whether free text (a description) is acceptable: bounded, and no control characters but line breaks and tabs. */
export function isValidText(value: string, maxLength: number): boolean {
  return value.length <= maxLength && !TEXT_CONTROL_CHARACTER.test(value)
}

function text(what: string, maxLength: number) {
  return z.string().refine((value) => isValidText(value, maxLength), {
    error: (issue) =>
      `${quote(issue.input)} is not a valid ${what}: at most ${maxLength} characters, no control characters but tabs and line breaks`,
  })
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z.enum(values, {
    error: (issue) => `${quote(issue.input)} is not a ${what}; expected one of ${values.join(', ')}`,
  })
}

const cellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: (issue) => `${quote(issue.input)} is not a cell value; expected a string, number, boolean or null`,
})

const tableSchema = z.strictObject({
  name: name('table name'),
  variables: z.array(
    z.strictObject({
      name: z
        .string()
        .refine((value) => value !== '' && value.length <= 100 && !CONTROL_CHARACTER.test(value), {
          error: (issue) =>
            `${quote(issue.input)} is not a valid variable name: 1–100 characters, no control characters`,
        }),
      type: z.string().refine((value) => NAME_PATTERN.test(value), {
        error: (issue) => `${quote(issue.input)} is not a valid variable type, such as "integer" or "string"`,
      }),
    }),
  ),
  rows: z.array(z.array(cellSchema)),
})

const datasetSchema = z.strictObject({
  owner: name('owner handle'),
  name: name('dataset name'),
  description: text('description', MAX_TEXT_LENGTH).optional(),
  publicLevel: oneOf(PUBLIC_DATASET_LEVELS, 'public level'),
  access: z.record(z.string(), oneOf(DATASET_LEVELS, 'dataset access level')).optional(),
  exportRestrictions: exportRestrictionsSchema.optional(),
  tables: z.array(tableSchema).optional(),
})

const workflowSchema = z.strictObject({
  owner: name('owner handle'),
  name: name('workflow name'),
  publicLevel: oneOf(PUBLIC_WORKFLOW_LEVELS, 'public level'),
  access: z.record(z.string(), oneOf(WORKFLOW_LEVELS, 'workflow access level')).optional(),
})

const tokenSchema = z.strictObject({
  user: z.string(),
  name: z.string().refine((value) => describeBadTokenName(value) === undefined, {
    error: (issue) =>
      `${quote(issue.input)} is not a valid token name: ${describeBadTokenName(issue.input as string)}`,
  }),
  scopes: z.array(z.string()),
  value: z.string().refine((value) => describeBadTokenValue(value) === undefined, {
    error: (issue) => describeBadTokenValue(issue.input as string),
  }),
  expiresAt: z.iso
    .datetime({
      offset: true,
      error: (issue) =>
        `${quote(issue.input)} is not an ISO 8601 date-time with a time zone, such as "2027-01-01T00:00:00Z"`,
    })
    .optional(),
  revoked: z.boolean().optional(),
})

const clientSchema = z.strictObject({
  id: z.string().refine((value) => CLIENT_ID_PATTERN.test(value), {
    error: (issue) => `${quote(issue.input)} is not a valid client id: 1–80 visible ASCII characters`,
  }),
  secret: z.string().min(1, { error: 'must not be empty' }).optional(),
  redirectUris: z
    .array(
      z.string().refine(isRedirectUri, {
        error: (issue) => `${quote(issue.input)} is not an absolute http(s) URL without a fragment`,
      }),
    )
    .min(1, { error: 'must list at least one redirect URI' }),
  offline: z.boolean().optional(),
})

const seedShape = z.strictObject({
  users: z.array(
    z.strictObject({
      handle: name('user handle'),
      password: z.string().min(1, { error: 'must not be empty' }),
    }),
  ),
  organizations: z.array(
    z.strictObject({
      handle: name('organization handle'),
      admins: z.array(z.string()),
      members: z.array(z.string()).optional(),
    }),
  ),
  datasets: z.array(datasetSchema),
  workflows: z.array(workflowSchema).optional(),
  tokens: z.array(tokenSchema),
  clients: z.array(clientSchema).optional(),
})

type SeedShape = z.output<typeof seedShape>

function describeBadTokenName(value: string): string | undefined {
  if (value.trim() === '') return 'must not be empty'
  if (value !== value.trim()) return 'must not start or end with white space'
  if ([...value].length > 100) return 'must be at most 100 characters'
  if (CONTROL_CHARACTER.test(value)) return 'must not contain control characters'
  return undefined
}

// Shorter than this, the last four characters would be a large share of what was typed.
const MIN_HINTED_LENGTH = 20

/**
 * What an error line may show of a token value: its hint as the token list shows it (`dap_…VPIp`,
 * the prefix, "…" and the last four characters), or nothing when the value does not start with a
 * token prefix, is too short for four characters to be a small part of it, or does not end in four
 * base62 characters. Never more of the value: it is a secret, even when it is malformed (a value
 * with a stray space is a working token once trimmed).
 *
 * @example
 * tokenValueHint('dap_9dzMtUcaWCDPen7A6qZ22SWPZrBH2Tke23VPIp') // 'dap_…VPIp'
 * tokenValueHint('hunter2')                                    // undefined
 */
export function tokenValueHint(value: string): string | undefined {
  const prefix = value.slice(0, 4)
  if (prefix !== 'dap_' && prefix !== 'dao_') return undefined
  const last = value.slice(-4)
  if (value.length < MIN_HINTED_LENGTH || !/^[0-9A-Za-z]{4}$/.test(last)) return undefined
  return `${prefix}…${last}`
}

// Says precisely what is wrong, so that a value mangled while copying is easy to spot — and never
// what the value is (at most its hint).
function describeBadTokenValue(value: string): string | undefined {
  const problem = tokenValueProblem(value)
  if (problem === undefined) return undefined
  const hint = tokenValueHint(value.trim())
  return hint === undefined ? problem : `${hint} ${problem}`
}

function tokenValueProblem(value: string): string | undefined {
  const trimmed = value.trim()
  if (trimmed !== value) {
    const where = trimmed === '' ? 'is only' : value.startsWith(trimmed) ? 'ends with' : 'starts with'
    return `is not an API token value: it ${where} white space`
  }
  if (!value.startsWith('dap_')) {
    return value.startsWith('dao_')
      ? 'is an OAuth token value; seed tokens are API tokens (dap_…)'
      : 'is not an API token value: it must start with "dap_"'
  }
  if (value.length !== TOKEN_VALUE_LENGTH) {
    return `is not an API token value: it has ${value.length} characters, not ${TOKEN_VALUE_LENGTH}`
  }
  if (!/^dap_[0-9A-Za-z]{38}$/.test(value))
    return 'is not an API token value: only base62 characters may follow "dap_"'
  if (!isWellFormedTokenValue(value)) return 'is not an API token value: its checksum does not match'
  return undefined
}

function isRedirectUri(value: string): boolean {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === '' && !value.includes('#')
}

interface Issue {
  readonly path: ConfigPath
  readonly detail: string
}

// The references between entries, checked in document order so the first problem in the file is
// the one reported.
function crossCheck(seed: SeedShape): Issue | undefined {
  const users = new Set<string>()
  const owners = new Map<string, string>()
  for (const [i, user] of seed.users.entries()) {
    if (users.has(user.handle))
      return { path: ['users', i, 'handle'], detail: `${quote(user.handle)} is already a user` }
    users.add(user.handle)
    owners.set(user.handle, 'user')
  }
  const isUser = (handle: string) => users.has(handle)
  const notUser = (handle: string) => `${quote(handle)} is not a user of this seed`

  for (const [i, organization] of seed.organizations.entries()) {
    const taken = owners.get(organization.handle)
    if (taken !== undefined) {
      return {
        path: ['organizations', i, 'handle'],
        detail: `${quote(organization.handle)} is already a ${taken} handle`,
      }
    }
    owners.set(organization.handle, 'organization')
    for (const list of ['admins', 'members'] as const) {
      const seen = new Set<string>()
      for (const [j, handle] of (organization[list] ?? []).entries()) {
        if (!isUser(handle)) return { path: ['organizations', i, list, j], detail: notUser(handle) }
        if (seen.has(handle))
          return { path: ['organizations', i, list, j], detail: `${quote(handle)} is listed twice` }
        seen.add(handle)
      }
    }
  }

  for (const [kind, entries] of [
    ['datasets', seed.datasets],
    ['workflows', seed.workflows ?? []],
  ] as const) {
    const seen = new Map<string, number>()
    for (const [i, entry] of entries.entries()) {
      if (!owners.has(entry.owner)) {
        return {
          path: [kind, i, 'owner'],
          detail: `${quote(entry.owner)} is neither a user nor an organization`,
        }
      }
      const key = `${entry.owner}/${entry.name}`
      const first = seen.get(key)
      if (first !== undefined) {
        return {
          path: [kind, i, 'name'],
          detail: `${quote(entry.name)} is already used by ${kind}[${first}] of ${quote(entry.owner)}`,
        }
      }
      seen.set(key, i)
      for (const handle of Object.keys(entry.access ?? {})) {
        if (!isUser(handle)) return { path: [kind, i, 'access', handle], detail: notUser(handle) }
      }
    }
  }

  for (const [i, dataset] of seed.datasets.entries()) {
    const issue = checkTables(dataset.tables ?? [])
    if (issue !== undefined) return { path: ['datasets', i, 'tables', ...issue.path], detail: issue.detail }
  }

  const values = new Map<string, number>()
  for (const [i, token] of seed.tokens.entries()) {
    if (!isUser(token.user)) return { path: ['tokens', i, 'user'], detail: notUser(token.user) }
    for (const [j, scope] of token.scopes.entries()) {
      try {
        parseScopes([scope])
      } catch (error) {
        if (!(error instanceof ScopeError)) throw error
        return { path: ['tokens', i, 'scopes', j], detail: error.message }
      }
    }
    const first = values.get(token.value)
    // The value is a secret: name where it was first used instead of printing it again.
    if (first !== undefined)
      return { path: ['tokens', i, 'value'], detail: `is the same value as tokens[${first}].value` }
    values.set(token.value, i)
  }

  const clients = new Set<string>()
  for (const [i, client] of (seed.clients ?? []).entries()) {
    if (clients.has(client.id))
      return { path: ['clients', i, 'id'], detail: `${quote(client.id)} is already a client id` }
    clients.add(client.id)
  }
  return undefined
}

function checkTables(tables: SeedShape['datasets'][number]['tables'] & {}): Issue | undefined {
  const names = new Set<string>()
  for (const [t, table] of tables.entries()) {
    if (names.has(table.name))
      return { path: [t, 'name'], detail: `${quote(table.name)} is already a table of this dataset` }
    names.add(table.name)
    const variables = new Set<string>()
    for (const [v, variable] of table.variables.entries()) {
      if (variables.has(variable.name)) {
        return {
          path: [t, 'variables', v, 'name'],
          detail: `${quote(variable.name)} is already a variable of this table`,
        }
      }
      variables.add(variable.name)
    }
    for (const [r, row] of table.rows.entries()) {
      if (row.length !== table.variables.length) {
        const count = table.variables.length
        return {
          path: [t, 'rows', r],
          detail: `${quote(row)} has ${row.length} value${row.length === 1 ? '' : 's'}; the table has ${count} variable${count === 1 ? '' : 's'}`,
        }
      }
    }
  }
  return undefined
}

/**
 * Validates a parsed seed file and returns it with every default applied.
 *
 * @throws {ConfigError} for the first problem, its message one line: `tokens[0].user: "eve" is not a user of this seed`.
 * @example
 * const seed = parseSeed(JSON.parse(readFileSync('seed.json', 'utf8')))
 */
export function parseSeed(input: unknown): SeedSpec {
  const parsed = seedShape.safeParse(input)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol')
    // An unknown key is named by its own path, like any other bad field.
    if (issue.code === 'unrecognized_keys') {
      throw new ConfigError([...path, issue.keys[0]!], 'unknown key', { cause: parsed.error })
    }
    throw new ConfigError(path.length === 0 ? ['seed'] : path, describeIssue(issue, path, input), {
      cause: parsed.error,
    })
  }
  const seed = parsed.data
  const issue = crossCheck(seed)
  if (issue !== undefined) throw new ConfigError(issue.path, issue.detail)
  return {
    users: seed.users,
    organizations: seed.organizations.map((organization) => ({
      ...organization,
      members: organization.members ?? [],
    })),
    datasets: seed.datasets.map((dataset) => ({
      owner: dataset.owner,
      name: dataset.name,
      description: dataset.description ?? '',
      publicLevel: dataset.publicLevel,
      access: dataset.access ?? {},
      exportRestrictions: dataset.exportRestrictions,
      tables: dataset.tables ?? [],
    })),
    workflows: (seed.workflows ?? []).map((workflow) => ({ ...workflow, access: workflow.access ?? {} })),
    tokens: seed.tokens.map((token) => ({
      user: token.user,
      name: token.name,
      scopes: parseScopes(token.scopes).granted,
      value: token.value,
      expiresAt: token.expiresAt === undefined ? undefined : Date.parse(token.expiresAt),
      revoked: token.revoked ?? false,
    })),
    clients: (seed.clients ?? []).map((client) => ({
      id: client.id,
      secret: client.secret,
      redirectUris: client.redirectUris,
      offline: client.offline ?? false,
    })),
  }
}

const MISSING = Symbol('missing')

function valueAt(root: unknown, path: ConfigPath): unknown {
  let value: unknown = root
  for (const part of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return MISSING
    value = (value as Record<string | number, unknown>)[part]
  }
  return value
}

const ARTICLES: Readonly<Record<string, string>> = {
  array: 'an array',
  object: 'an object',
  string: 'a string',
  boolean: 'a boolean',
  number: 'a number',
  record: 'an object',
}

// Where a seed holds secrets: a message about these fields never quotes what they hold.
function isSecretField(path: ConfigPath): boolean {
  const [section, , field] = path
  return (
    path.length === 3 &&
    ((section === 'tokens' && field === 'value') ||
      (section === 'users' && field === 'password') ||
      (section === 'clients' && field === 'secret'))
  )
}

// zod's own messages do not show the value; these do (unless it is a secret), and say what was
// expected instead.
function describeIssue(issue: z.core.$ZodIssue, path: ConfigPath, root: unknown): string {
  const value = valueAt(root, path)
  if (value === MISSING || value === undefined) return 'is required'
  if (issue.code === 'invalid_type') {
    const expected = ARTICLES[issue.expected] ?? issue.expected
    return isSecretField(path) ? `is not ${expected}` : `${quote(value)} is not ${expected}`
  }
  return issue.message
}
