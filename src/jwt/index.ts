/**
 * A token store for JWT access tokens that the host's identity provider signs (RFC 9068): keys from
 * its JWKS (or discovery), checked issuer, audience, lifetime, algorithm and `typ`, claims turned
 * into the principal the policy decides on. Runs wherever `fetch` and Web Crypto do: Node, Bun,
 * Deno, Workers.
 *
 * @packageDocumentation
 * @module data-access-policy/jwt
 */
export type { JwtAlgorithm } from './jwt-algorithms.js'
export type { JwtClaims } from './jwt-claims.js'
export { JwtTokenStore, type JwtTokenStoreOptions } from './jwt-token-store.js'
