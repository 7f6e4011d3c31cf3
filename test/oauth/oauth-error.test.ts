import { describe, expect, it } from 'vitest'
import { DataAccessPolicyError } from '../../src/errors.js'
import { OAUTH_ERROR_CODES, OAuthError, type OAuthErrorCode } from '../../src/oauth/oauth-error.js'

describe('OAuthError', () => {
  it('is a DataAccessPolicyError coded ERR_OAUTH, named after its class', () => {
    const error = new OAuthError('invalid_grant', 'the authorization code has expired')
    expect(error).toBeInstanceOf(DataAccessPolicyError)
    expect(error.code).toBe('ERR_OAUTH')
    expect(error.name).toBe('OAuthError')
    expect(error.message).toBe('invalid_grant: the authorization code has expired')
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      error: 'invalid_grant',
      error_description: 'the authorization code has expired',
    })
  })

  const statuses: Record<OAuthErrorCode, number> = {
    invalid_request: 400,
    invalid_client: 401,
    invalid_grant: 400,
    unauthorized_client: 400,
    unsupported_grant_type: 400,
    invalid_scope: 400,
    access_denied: 400,
    unsupported_response_type: 400,
    server_error: 500,
    authorization_pending: 400,
    slow_down: 400,
    expired_token: 400,
    temporarily_unavailable: 503,
    unsupported_token_type: 400,
    invalid_target: 400,
    invalid_redirect_uri: 400,
    invalid_client_metadata: 400,
    invalid_dpop_proof: 400,
    use_dpop_nonce: 400,
  }

  it('has a closed list of the RFC 6749, RFC 8628, RFC 7009, RFC 8707, RFC 7591 and RFC 9449 codes', () => {
    expect([...OAUTH_ERROR_CODES].sort()).toEqual(Object.keys(statuses).sort())
  })

  it.each(Object.entries(statuses))('%s answers %i by default (RFC 6749 §5.2)', (error, status) => {
    expect(new OAuthError(error as OAuthErrorCode, 'x').status).toBe(status)
  })

  it('takes an explicit status and a cause', () => {
    const cause = new Error('redis down')
    const error = new OAuthError('server_error', 'unavailable', { status: 503, cause })
    expect(error.status).toBe(503)
    expect(error.cause).toBe(cause)
  })

  it('keeps the description within the characters RFC 6749 §5.2 allows', () => {
    const error = new OAuthError(
      'invalid_scope',
      'unknown scope "workflow.read"; did you mean "wokflow.read"? \\ – ok',
    )
    expect(error.error_description).toBe("unknown scope 'workflow.read'; did you mean 'wokflow.read'? / ? ok")
    expect(error.error_description).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/)
  })
})
