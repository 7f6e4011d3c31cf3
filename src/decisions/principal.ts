import { parseScopes, type ScopeSet } from './scopes.js'

/** Who is calling: an authenticated token, or (only where the host opts in) the anonymous caller. */
export interface Principal {
  /** `token` for an authenticated token, `anonymous` for a caller without credentials. */
  readonly kind: 'token' | 'anonymous'
  /** The token's owner; absent for the anonymous caller. */
  readonly userId?: string
  /** The token's current scopes; `public` alone for the anonymous caller. */
  readonly scopes: ScopeSet
  /** The token record's id, for audit logs (never the value). */
  readonly tokenId?: string
  /** `api` for API tokens, `oauth` for OAuth-issued ones. */
  readonly tokenKind?: 'api' | 'oauth'
  /** The OAuth client the token was issued to, where one was used. */
  readonly clientId?: string
}

/** The anonymous caller: `public` scope only, no user. Used only where the host opts in. */
export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', scopes: parseScopes([]) })
