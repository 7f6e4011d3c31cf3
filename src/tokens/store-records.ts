/**
 * What every store (in memory or in Redis, tokens or OAuth state) does with the records it keeps:
 * validate them on the way in, describe a mismatch by field, freeze what it hands out, hide what is
 * past its retention, and refuse a clock value that is not epoch milliseconds.
 */
import type { z } from 'zod'
import { formatConfigPath, TokenStoreError } from '../errors.js'
import { isEpochMilliseconds } from './clock.js'

/**
 * Every issue of a failed validation as `path: message`, joined by `; `. Schemas report shapes,
 * not contents, so no value (a hash, a secret) ends up in the text.
 */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = formatConfigPath(issue.path.filter((part) => typeof part !== 'symbol'))
      return where === '' ? issue.message : `${where}: ${issue.message}`
    })
    .join('; ')
}

/**
 * The record as `schema` parses it, or a `TokenStoreError` naming the offending fields, prefixed
 * with `cannot ${action}: ` when an action is given.
 */
export function validateRecord<T>(schema: z.ZodType<T>, record: T, what: string, action?: string): T {
  const parsed = schema.safeParse(record)
  if (!parsed.success) {
    const context = action === undefined ? '' : `cannot ${action}: `
    throw new TokenStoreError(`${context}not a valid ${what} (${describeIssues(parsed.error)})`, {
      cause: parsed.error,
    })
  }
  return parsed.data
}

/** Freezes `value` and everything it holds, so callers can neither corrupt a store nor each other. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/** The record while it is retained (`now` before its `retainUntil`), else undefined: gone. */
export function live<T extends { readonly retainUntil: number }>(
  record: T | undefined,
  now: number,
): T | undefined {
  return record !== undefined && now < record.retainUntil ? record : undefined
}

/** Refuses a clock value that is not epoch milliseconds, as a store error. */
export function requireStoreNow(now: number): void {
  if (!isEpochMilliseconds(now)) throw new TokenStoreError('now must be epoch milliseconds')
}
