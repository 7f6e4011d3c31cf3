import { ConfigError } from '../errors.js'
import { OAuthError, type OAuthErrorBody } from './oauth-error.js'

/**
 * An answer of an OAuth JSON endpoint for the HTTP layer: send `status`, every header, and `body`
 * serialized as JSON (`application/json`). `error` is there for logging (it may carry a `cause`).
 */
export type OAuthEndpointResponse<TBody> = {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: TBody | OAuthErrorBody
  readonly error?: OAuthError
}

// RFC 6749 §5.1: token responses must not be cached; RFC 8628 §3.2 answers are as sensitive.
const NO_STORE: Readonly<Record<string, string>> = Object.freeze({
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
})

const REALM = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,100}$/

/** Checks the realm of the `WWW-Authenticate: Basic` challenge, so that it needs no escaping. */
export function requireRealm(realm: string | undefined): string {
  if (realm === undefined) return 'oauth'
  if (typeof realm !== 'string' || !REALM.test(realm)) {
    throw new ConfigError(['realm'], 'must be 1-100 printable ASCII characters without quotes or backslashes')
  }
  return realm
}

/** Checks an optional duration option, answering its default when absent. */
export function requireDuration(
  name: string,
  value: number | undefined,
  fallback: number,
  max: number,
): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value <= 0 || value > max) {
    throw new ConfigError([name], `must be a positive integer no greater than ${max}`)
  }
  return value
}

/** A 200 answer. */
export function successResponse<TBody>(body: TBody): OAuthEndpointResponse<TBody> {
  return { status: 200, headers: NO_STORE, body }
}

/**
 * An error answer. A thrown value that is not an {@link OAuthError} (a store or registry failure) is
 * `server_error` 503: the endpoint fails closed and never says why.
 */
export function errorResponse<TBody>(thrown: unknown, realm: string): OAuthEndpointResponse<TBody> {
  const error =
    thrown instanceof OAuthError
      ? thrown
      : new OAuthError('server_error', 'the authorization server is temporarily unavailable', {
          status: 503,
          cause: thrown,
        })
  // RFC 9110 §15.5.2: a 401 carries a challenge; RFC 6749 §5.2 names the scheme the client used.
  const headers =
    error.status === 401 ? { ...NO_STORE, 'WWW-Authenticate': `Basic realm="${realm}"` } : NO_STORE
  return { status: error.status, headers, body: error.toJSON(), error }
}
