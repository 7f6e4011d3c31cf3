import { errorDescription } from '../authentication/http-denial.js'
import { DataAccessPolicyError } from '../errors.js'

/**
 * The OAuth error codes this library answers with (RFC 6749 §4.1.2.1 and §5.2, RFC 8628 §3.5,
 * RFC 7009 §2.2.1, RFC 8707 §2, RFC 7591 §3.2.2, RFC 9449 §5 and §8).
 */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'unsupported_response_type',
  'server_error',
  'temporarily_unavailable',
  'authorization_pending',
  'slow_down',
  'expired_token',
  'unsupported_token_type',
  'invalid_target',
  // RFC 7591 §3.2.2: a dynamic registration request the server refuses.
  'invalid_redirect_uri',
  'invalid_client_metadata',
  // RFC 9449 §5 and §8: a DPoP proof the token endpoint refuses, or one without its nonce.
  'invalid_dpop_proof',
  'use_dpop_nonce',
] as const

/** One of the OAuth error codes of {@link OAUTH_ERROR_CODES}: a closed union. */
export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number]

/** The JSON body of an OAuth error response (RFC 6749 §5.2). */
export type OAuthErrorBody = {
  readonly error: OAuthErrorCode
  readonly error_description: string
}

/** Options of {@link OAuthError}. */
export type OAuthErrorOptions = {
  /**
   * The HTTP status; 401 for `invalid_client`, 500 for `server_error`, 503 for
   * `temporarily_unavailable`, otherwise 400 by default.
   */
  readonly status?: number
  readonly cause?: unknown
}

function defaultStatus(error: OAuthErrorCode): number {
  // RFC 6749 §5.2: 400 unless specified otherwise; a failed client authentication is 401.
  if (error === 'invalid_client') return 401
  if (error === 'server_error') return 500
  // RFC 6749 §4.1.2.1: the code stands for the 503 a redirect cannot carry.
  if (error === 'temporarily_unavailable') return 503
  return 400
}

/**
 * An OAuth request broke a rule. `error` is the RFC code sent to the client, `error_description` the
 * human-readable detail, `status` the HTTP status of the answer; `JSON.stringify` gives the §5.2 body.
 *
 * @example
 * const error = new OAuthError('invalid_grant', 'the authorization code has expired')
 * error.status // 400
 * JSON.stringify(error) // '{"error":"invalid_grant","error_description":"the authorization code has expired"}'
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.2
 */
export class OAuthError extends DataAccessPolicyError {
  /** The RFC 6749 / RFC 8628 error code. */
  readonly error: OAuthErrorCode
  /** Human-readable detail, restricted to the characters RFC 6749 §5.2 allows. */
  readonly error_description: string
  /** The HTTP status of the answer. */
  readonly status: number

  constructor(error: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    const clean = errorDescription(description)
    super(
      'ERR_OAUTH',
      `${error}: ${clean}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    )
    this.error = error
    this.error_description = clean
    this.status = options.status ?? defaultStatus(error)
  }

  /** The RFC 6749 §5.2 body. */
  toJSON(): OAuthErrorBody {
    return { error: this.error, error_description: this.error_description }
  }
}
