/**
 * How the server's own Redis stores (sessions, pending consents, registered clients) fail: every
 * failure of a Redis call (refused, closed, timed out, garbage) is the store's, a `TokenStoreError`
 * that the routes answer with 503 and report, never an allow.
 */
import { TokenStoreError } from 'data-access-policy'

/**
 * The store failure for a Redis call that threw `error` while doing `action` ("store a consent
 * request"); a `TokenStoreError` passes as it is.
 *
 * @example
 * throw redisFailure('read the sign-in key', error)
 */
export function redisFailure(action: string, error: unknown): TokenStoreError {
  if (error instanceof TokenStoreError) return error
  const detail = error instanceof Error ? error.message : String(error)
  return new TokenStoreError(`Redis could not ${action}: ${detail}`, { cause: error })
}

/**
 * Runs one Redis call, turning whatever it throws into {@link redisFailure}.
 *
 * @example
 * const value = await redisCall('take a consent request', () => client.getdel(key))
 */
export async function redisCall<T>(action: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw redisFailure(action, error)
  }
}

/**
 * A stored JSON text as a value, or `undefined` when it is not JSON (a schema check follows).
 *
 * @example
 * safeJson('{"a":1}') // { a: 1 }
 */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
