/**
 * What a verified JWT access token's claims become: the record the policy decides on, or nothing
 * for a token whose claims this library cannot honour (a 401, like any other bad token).
 */
import { SCOPES, type Scope } from '../decisions/scopes.js'
import { TokenStoreError } from '../errors.js'
import { isResourceIdentifier, MAX_AUDIENCE_SIZE } from '../tokens/audience.js'
import {
  CLIENT_ID_PATTERN,
  JWK_THUMBPRINT_PATTERN,
  MAX_USER_ID_LENGTH,
  TOKEN_ID_PATTERN,
  type TokenRecord,
} from '../tokens/token-fields.js'

/** A verified token's claims set, as the host's scope hook sees it. */
export type JwtClaims = Readonly<Record<string, unknown>>

/** How claims become a record, fixed when the store is created. Internal to the package. */
export interface ClaimsMapping {
  /** More scope names from custom claims, added to those of `scope` and `scp`. */
  readonly claimsToScopes: ((claims: JwtClaims) => readonly string[]) | undefined
  /** True when the store checks the audience itself (its `audience` option). */
  readonly audienceChecked: boolean
  /** The `client_id`s accepted in place of an `aud` check (Cognito), when so configured. */
  readonly clientIds: ReadonlySet<string> | undefined
  /** The clock tolerance, in ms, added to `exp` so that the policy and the verification agree. */
  readonly toleranceMs: number
}

const NAME = 'JWT access token'

// `scope` is a space-separated string (RFC 9068 §2.2.3, RFC 8693 §4.2); `scp` is an array (Okta) or,
// at Microsoft Entra, a space-separated string too.
function addNames(names: Set<string>, claim: unknown): void {
  if (typeof claim === 'string') {
    for (const name of claim.split(' ')) names.add(name)
  } else if (Array.isArray(claim)) {
    for (const name of claim) if (typeof name === 'string') names.add(name)
  }
}

function hookedNames(claims: JwtClaims, hook: (claims: JwtClaims) => readonly string[]): readonly string[] {
  let names: unknown
  try {
    names = hook(claims)
  } catch (cause) {
    throw new TokenStoreError('claimsToScopes threw', { cause })
  }
  if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) {
    throw new TokenStoreError('claimsToScopes must answer an array of scope names')
  }
  return names
}

/**
 * The contract scopes the claims grant, `public` first and in contract order: every other name
 * (`openid`, `profile`, an API's own permissions) is ignored. Internal to the package.
 *
 * @throws {TokenStoreError} when the host's hook throws or answers something else than names.
 */
export function scopesOfClaims(claims: JwtClaims, mapping: ClaimsMapping): readonly Scope[] {
  const names = new Set<string>()
  addNames(names, claims.scope)
  addNames(names, claims.scp)
  if (mapping.claimsToScopes !== undefined) {
    for (const name of hookedNames(claims, mapping.claimsToScopes)) names.add(name)
  }
  return Object.freeze(SCOPES.filter((scope) => scope === 'public' || names.has(scope)))
}

// Without the store's own audience check, the token must name the resources it is for as RFC 8707
// resource identifiers, which the policy compares with its `resource`; a token without `aud` would
// otherwise be good at every API of its issuer.
function audienceOf(aud: unknown, mapping: ClaimsMapping): readonly string[] | undefined | false {
  if (mapping.audienceChecked) return undefined
  const values = typeof aud === 'string' ? [aud] : aud
  if (!Array.isArray(values) || values.length === 0 || values.length > MAX_AUDIENCE_SIZE) return false
  if (!values.every(isResourceIdentifier)) return false
  return Object.freeze([...new Set(values)])
}

// RFC 7800 confirmation: a key thumbprint (RFC 9449 §6.1) makes the token DPoP-bound. Any other
// confirmation method (an mTLS certificate, RFC 8705) cannot be checked here, and dropping it would
// turn a bound token into a bearer token: such a token is refused.
function dpopJktOf(cnf: unknown): string | undefined | false {
  if (cnf === undefined) return undefined
  if (typeof cnf !== 'object' || cnf === null) return false
  const jkt = (cnf as { jkt?: unknown }).jkt
  return typeof jkt === 'string' && JWK_THUMBPRINT_PATTERN.test(jkt) ? jkt : false
}

function clientIdOf(claims: JwtClaims): string | undefined {
  const clientId = claims.client_id ?? claims.azp
  return typeof clientId === 'string' && CLIENT_ID_PATTERN.test(clientId) ? clientId : undefined
}

/**
 * The record of a verified token whose value hashes to `hash`, or `undefined` when its claims
 * cannot make one: no usable `sub`, an audience that is not resource identifiers (without the
 * store's own check), or a confirmation other than a DPoP key thumbprint. Internal to the package.
 *
 * @throws {TokenStoreError} when the host's scope hook fails.
 */
export function recordOfClaims(
  claims: JwtClaims,
  hash: string,
  now: number,
  mapping: ClaimsMapping,
): TokenRecord | undefined {
  const { sub, exp, iat, jti } = claims
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > MAX_USER_ID_LENGTH) return undefined
  // jwtVerify was asked to require `exp`, a number; a fraction is floored to whole milliseconds.
  const expiresAt = Math.floor((exp as number) * 1000) + mapping.toleranceMs
  const audience = audienceOf(claims.aud, mapping)
  const dpopJkt = dpopJktOf(claims.cnf)
  if (audience === false || dpopJkt === false) return undefined
  if (mapping.clientIds !== undefined && !mapping.clientIds.has(claims.client_id as string)) return undefined
  const clientId = clientIdOf(claims)
  return Object.freeze({
    id: typeof jti === 'string' && TOKEN_ID_PATTERN.test(jti) ? jti : `jwt_${hash.slice(0, 16)}`,
    kind: 'oauth',
    userId: sub,
    name: NAME,
    scopes: scopesOfClaims(claims, mapping),
    hash,
    // A reminder built from the hash: the value's own characters may be outside the hint's alphabet.
    hint: `dao_…${hash.slice(-4)}`,
    createdAt: typeof iat === 'number' && iat >= 0 && iat * 1000 <= now ? Math.floor(iat * 1000) : now,
    expiresAt,
    ...(clientId !== undefined && { clientId }),
    ...(audience !== undefined && { audience }),
    ...(dpopJkt !== undefined && { dpopJkt }),
  })
}
