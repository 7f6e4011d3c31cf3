import { parseScopes, type ScopeSet } from '../decisions/scopes.js'
import type { ScopeError } from '../errors.js'
import { OAuthError } from './oauth-error.js'

/**
 * The scopes a client asks for in a `scope` parameter, parsed with the core's scope rules; absent
 * means `public` only.
 *
 * @throws {OAuthError} `invalid_scope`, with the scope parser's message.
 */
export function parseRequestedScopes(scope: string | undefined): ScopeSet {
  try {
    return parseScopes(scope ?? '')
  } catch (error) {
    // parseScopes throws nothing but ScopeError for a string.
    throw new OAuthError('invalid_scope', (error as ScopeError).message, { cause: error })
  }
}
