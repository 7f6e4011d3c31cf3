import type { z } from 'zod'
import { ConfigError, type ConfigPath } from './errors.js'

/**
 * Turns a zod failure into a {@link ConfigError} naming the first offending field. The detail is
 * the issue's message, so schemas write their messages as "what was expected".
 */
export function configErrorFromZod(error: z.ZodError, prefix: ConfigPath = []): ConfigError {
  const issue = error.issues[0]
  if (issue === undefined) return new ConfigError(prefix, 'is invalid', { cause: error })
  const path = [...prefix, ...issue.path.filter((part): part is string | number => typeof part !== 'symbol')]
  return new ConfigError(path, describeIssue(issue), { cause: error })
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`
  }
  return issue.message
}
