/**
 * Every error this library throws carries one of these stable codes.
 *
 * - `ERR_INVALID_SCOPE`: a scope name is unknown, empty, malformed or wrongly cased.
 * - `ERR_INVALID_CONFIG`: an option, restriction, seed entry or other configuration is invalid.
 * - `ERR_INVALID_TOKEN_FORMAT`: a token value is not of the `dap_`/`dao_` format.
 * - `ERR_TOKEN_STORE`: a token store failed, timed out or answered garbage.
 * - `ERR_INVALID_ARGUMENT`: a function was called with an argument of the wrong shape.
 * - `ERR_OAUTH`: an OAuth request broke a rule; the error's `error` holds the RFC 6749 code.
 * - `ERR_CLIENT`: the API client received a denial or an unexpected answer.
 * - `ERR_TOKEN_LIFETIME`: a token's requested lifetime is longer than the configured cap, or it
 *   asks for no expiry where one is required.
 * - `ERR_DPOP_PROOF`: a DPoP proof (RFC 9449) is missing, malformed, replayed or does not match the
 *   request, the token or the key; the error's `error` holds the RFC 9449 code.
 */
export type ErrorCode =
  | 'ERR_INVALID_SCOPE'
  | 'ERR_INVALID_CONFIG'
  | 'ERR_INVALID_TOKEN_FORMAT'
  | 'ERR_TOKEN_STORE'
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_OAUTH'
  | 'ERR_CLIENT'
  | 'ERR_TOKEN_LIFETIME'
  | 'ERR_DPOP_PROOF'

/**
 * Base class of every error thrown by data-access-policy; `code` is stable across versions.
 *
 * @example
 * try {
 *   parseScopes('workflow.read')
 * } catch (error) {
 *   if (error instanceof DataAccessPolicyError) console.error(error.code) // 'ERR_INVALID_SCOPE'
 * }
 */
export class DataAccessPolicyError extends Error {
  /** The stable error code. */
  readonly code: ErrorCode

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.name = new.target.name
  }
}

/**
 * A scope name is unknown, empty, malformed or wrongly cased; `entry` is the offending name.
 *
 * @example
 * parseScopes('workflow.read') // throws ScopeError, entry 'workflow.read'
 */
export class ScopeError extends DataAccessPolicyError {
  /** The offending entry, exactly as given. */
  readonly entry: string

  constructor(entry: string, message: string) {
    super('ERR_INVALID_SCOPE', message)
    this.entry = entry
  }
}

/** A path into a configuration object, as `['datasets', 1, 'exportRestrictions']`. */
export type ConfigPath = readonly (string | number)[]

/** Formats a configuration path as `datasets[1].exportRestrictions.allowedIps[0]`. */
export function formatConfigPath(path: ConfigPath): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out === '' ? part : `.${part}`
  }
  return out
}

/**
 * Configuration is invalid. Thrown when options are loaded, never while deciding a request.
 * The message starts with the path of the offending field: `allowedIps[2]: "10.1" is not …`.
 *
 * @example
 * compileExportRestrictions({ allowedIps: ['10.1.2.77/24'] })
 * // throws ConfigError: allowedIps[0]: "10.1.2.77/24" has host bits set; did you mean 10.1.2.0/24?
 */
export class ConfigError extends DataAccessPolicyError {
  /** Where the bad value sits, as a list of keys and indexes. */
  readonly path: ConfigPath
  /** What is wrong, without the path. */
  readonly detail: string

  constructor(path: ConfigPath, detail: string, options?: { cause?: unknown }) {
    const where = formatConfigPath(path)
    super('ERR_INVALID_CONFIG', where === '' ? detail : `${where}: ${detail}`, options)
    this.path = path
    this.detail = detail
  }
}

/**
 * A token value is not well formed. The message never contains the value.
 *
 * @example
 * importApiToken({ userId: 'alice', name: 'ci', scopes: [], value: 'dap_short', now: Date.now() })
 * // throws TokenFormatError (the value is never in the message)
 */
export class TokenFormatError extends DataAccessPolicyError {
  constructor(message: string) {
    super('ERR_INVALID_TOKEN_FORMAT', message)
  }
}

/**
 * A token store failed, timed out or answered something that is not a token record.
 *
 * @example
 * await store.save(record)
 * await store.save(record) // throws TokenStoreError: duplicate id
 */
export class TokenStoreError extends DataAccessPolicyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TOKEN_STORE', message, options)
  }
}

/**
 * A token store refuses to look a token up for now: the client's network (or every network
 * together) has spent the store's budget of lookups it may pass on (an introspecting store asks the
 * issuer for every token it does not know). The policy answers 429 `rate_limited` with
 * `Retry-After: retryAfterSeconds`, not a 503, and does not report it to `onError`: it is the
 * store working as configured.
 *
 * @example
 * throw new TokenLookupLimitError('the miss budget of 203.0.113.9 is spent', 12)
 */
export class TokenLookupLimitError extends TokenStoreError {
  /** Seconds after which a lookup may be allowed again (at least 1). */
  readonly retryAfterSeconds: number

  constructor(message: string, retryAfterSeconds: number) {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/**
 * A function received an argument of the wrong shape; the message names the argument.
 *
 * @example
 * minimalScopes(['table.write']) // throws InvalidArgumentError: operations[0]: unknown operation "table.write"; …
 */
export class InvalidArgumentError extends DataAccessPolicyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_INVALID_ARGUMENT', message, options)
  }
}

/**
 * A requested token lifetime breaks the lifetime cap (`maxLifetimeDays`): it is longer, or it asks
 * for no expiry at all. The message names the cap, for the host to show as it is.
 *
 * @example
 * createApiToken({ userId: 'alice', name: 'ci', scopes: [], lifetimeDays: 365, maxLifetimeDays: 90, now })
 * // throws TokenLifetimeError: the lifetime is capped at 90 days; choose 90 days or fewer
 */
export class TokenLifetimeError extends DataAccessPolicyError {
  /** The cap that was broken, in days. */
  readonly maxLifetimeDays: number

  constructor(maxLifetimeDays: number, message: string) {
    super('ERR_TOKEN_LIFETIME', message)
    this.maxLifetimeDays = maxLifetimeDays
  }
}

/**
 * A DPoP proof (RFC 9449) was refused. `error` is the code to answer with: `invalid_dpop_proof`,
 * or `use_dpop_nonce` when the proof lacks the server's current nonce (RFC 9449 §8). The message
 * says which check failed, for the error hook and the `error_description`; it never holds the
 * proof or the token.
 *
 * @example
 * await verifyDpopProof(proof, { method: 'GET', url }) // throws DpopProofError: the proof's htm is "POST", expected "GET"
 */
export class DpopProofError extends DataAccessPolicyError {
  /** The RFC 9449 error code. */
  readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce'

  constructor(
    error: 'invalid_dpop_proof' | 'use_dpop_nonce',
    message: string,
    options?: { cause?: unknown },
  ) {
    super('ERR_DPOP_PROOF', message, options)
    this.error = error
  }
}
