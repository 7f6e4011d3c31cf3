/**
 * Records on their way into and out of Redis. Everything written is validated first; everything
 * read is parsed and validated again, because what comes back from the network is untrusted: a
 * value that is not JSON or does not match the schema is a `TokenStoreError` (→ 503), never a
 * record.
 */
import type { z } from 'zod'
import { TokenStoreError } from '../../src/errors.js'
import { deepFreeze, describeIssues } from '../../src/tokens/store-records.js'

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
