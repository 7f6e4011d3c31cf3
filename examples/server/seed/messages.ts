/**
 * How a bad seed is told: one line naming the field and quoting the bad value, e.g.
 * `datasets[1].exportRestrictions.allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?`.
 * Secrets are never quoted: a line about a token value, a password or a client secret names the
 * field and says what is wrong; for a token value it shows at most the hint the token list shows
 * (`dap_…VPIp`: the prefix, "…" and the last four characters).
 */

import { ConfigError, type ConfigPath } from 'data-access-policy'
import type { z } from 'zod'

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

/**
 * The one line for the first problem zod found in the seed's shapes.
 *
 * @example
 * const parsed = seedShape.safeParse(input)
 * if (!parsed.success) throw shapeError(parsed.error, input)
 */
export function shapeError(error: z.ZodError, input: unknown): ConfigError {
  const issue = error.issues[0]!
  const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol')
  // An unknown key is named by its own path, like any other bad field.
  if (issue.code === 'unrecognized_keys') {
    return new ConfigError([...path, issue.keys[0]!], 'unknown key', { cause: error })
  }
  return new ConfigError(path.length === 0 ? ['seed'] : path, describeIssue(issue, path, input), {
    cause: error,
  })
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
