/**
 * The shapes of a seed file, in zod: unknown keys are errors and every field is checked, each with
 * a message that quotes the bad value (never a secret). What refers to what is checked afterwards,
 * in seed/references.ts.
 */

import {
  DATASET_LEVELS,
  exportRestrictionsSchema,
  isWellFormedTokenValue,
  PUBLIC_DATASET_LEVELS,
  PUBLIC_WORKFLOW_LEVELS,
  TOKEN_VALUE_LENGTH,
  WORKFLOW_LEVELS,
} from 'data-access-policy'
import { isResourceIdentifier, RESOURCE_IDENTIFIER_RULE } from 'data-access-policy/oauth'
import { z } from 'zod'
import { quote, tokenValueHint } from './messages.js'

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
  redirectUris: z.array(
    z.string().refine(isRedirectUri, {
      error: (issue) => `${quote(issue.input)} is not an absolute http(s) URL without a fragment`,
    }),
  ),
  offline: z.boolean().optional(),
  introspect: z.boolean().optional(),
  dpopBound: z.boolean().optional(),
})

// A resource server this server issues tokens for (RFC 8707): its identifier, and the name the
// consent page shows for it.
const resourceSchema = z.strictObject({
  uri: z.string().refine(isResourceIdentifier, {
    error: (issue) => `${quote(issue.input)} is not a resource identifier: it ${RESOURCE_IDENTIFIER_RULE}`,
  }),
  name: z
    .string()
    .refine((value) => value.trim() !== '' && value === value.trim(), {
      error: 'must not be empty or start or end with white space',
    })
    .refine((value) => [...value].length <= 100, { error: 'must be at most 100 characters' })
    .refine((value) => !CONTROL_CHARACTER.test(value), { error: 'must not contain control characters' }),
})

/** A whole seed file, as parsed before the cross-references are checked. */
export const seedShape = z.strictObject({
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
  resources: z.array(resourceSchema).max(15, { error: 'must list at most 15 resources' }).optional(),
})

/** A seed whose shapes are right. */
export type SeedShape = z.output<typeof seedShape>

function describeBadTokenName(value: string): string | undefined {
  if (value.trim() === '') return 'must not be empty'
  if (value !== value.trim()) return 'must not start or end with white space'
  if ([...value].length > 100) return 'must be at most 100 characters'
  if (CONTROL_CHARACTER.test(value)) return 'must not contain control characters'
  return undefined
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
