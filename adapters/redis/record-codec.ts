/**
 * Records on their way into and out of Redis. Everything written is validated first; everything
 * read is parsed and validated again, because what comes back from the network is untrusted: a
 * value that is not JSON or does not match the schema is a `TokenStoreError` (→ 503), never a
 * record.
 */
import type { z } from 'zod'
import { formatConfigPath, TokenStoreError } from '../../src/errors.js'

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = formatConfigPath(issue.path.filter((part) => typeof part !== 'symbol'))
      return where === '' ? issue.message : `${where}: ${issue.message}`
    })
    .join('; ')
}

// Records leave the store deeply frozen, as the memory stores' do, so callers can share them.
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/**
 * Validates a record before it is written; the message names the offending fields, never a value
 * that could be a secret (schemas report shapes, not contents).
 *
 * @throws {TokenStoreError} when the record does not match `schema`.
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

/**
 * Parses a stored JSON document and validates it: the deep-frozen record, or a `TokenStoreError`
 * for anything else.
 *
 * @throws {TokenStoreError} when the text is not JSON or not a valid record.
 */
export function decodeRecord<T>(schema: z.ZodType<T>, text: string, what: string): T {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new TokenStoreError(`Redis answered a ${what} that is not JSON`, { cause: error })
  }
  const parsed = schema.safeParse(json)
  if (!parsed.success) {
    throw new TokenStoreError(`Redis answered a malformed ${what} (${describeIssues(parsed.error)})`, {
      cause: parsed.error,
    })
  }
  return deepFreeze(parsed.data)
}

/** Wraps any failure of a Redis call (refused, closed, timed out) as a `TokenStoreError`. */
export function storeFailure(action: string, error: unknown): TokenStoreError {
  if (error instanceof TokenStoreError) return error
  const detail = error instanceof Error ? error.message : String(error)
  return new TokenStoreError(`Redis could not ${action}: ${detail}`, { cause: error })
}

/** Fails like the memory stores on a clock value that is not epoch milliseconds. */
export function requireNow(now: number): void {
  if (!Number.isSafeInteger(now) || now < 0) throw new TokenStoreError('now must be epoch milliseconds')
}
