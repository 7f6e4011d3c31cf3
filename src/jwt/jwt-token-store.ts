import { errors, type JWTVerifyOptions, jwtVerify } from 'jose'
import { TokenStoreError } from '../errors.js'
import { IssuerManagedStore } from '../tokens/issuer-managed-store.js'
import { hashTokenValue } from '../tokens/token-hash.js'
import type { TokenRecord } from '../tokens/token-record.js'
import type { TokenStore } from '../tokens/token-store.js'
import { JwksSource } from './jwks-source.js'
import type { JwtAlgorithm } from './jwt-algorithms.js'
import { type ClaimsMapping, type JwtClaims, recordOfClaims } from './jwt-claims.js'
import { isCompactJws } from './jwt-format.js'
import { parseJwtTokenStoreOptions } from './jwt-options.js'

/** Options of {@link JwtTokenStore}. */
export interface JwtTokenStoreOptions {
  /**
   * The issuer, compared exactly with each token's `iss` (a trailing slash counts: Auth0's issuer
   * ends with one), and where discovery starts when `jwksUri` is absent.
   */
  readonly issuer: string
  /**
   * The issuer's JWKS URL: an absolute `https` URL (`http` only on a loopback host). Absent (and
   * without `secret`): read from the issuer's OpenID Connect discovery document
   * (`<issuer>/.well-known/openid-configuration`), else its RFC 8414 metadata.
   */
  readonly jwksUri?: string
  /**
   * A shared secret, for an issuer that signs with HMAC (`HS256`…): at least 32 bytes. Only with
   * HMAC `algorithms` and never with `jwksUri`: one store never verifies both ways, so a token
   * cannot pass an RSA public key off as an HMAC secret.
   */
  readonly secret?: string | Uint8Array
  /**
   * The algorithms a token may be signed with, e.g. `['RS256']`: all asymmetric (verified with the
   * JWKS), or all HMAC (with `secret`). A token with another `alg`, `none` included, is refused.
   */
  readonly algorithms: readonly JwtAlgorithm[]
  /**
   * The audiences this API answers to, checked here: a token's `aud` must name one of them. Set it
   * when the issuer names the API otherwise than by the policy's `resource` URL (Microsoft Entra's
   * `api://…` or a client id, Keycloak's client id); the record then carries no audience for the
   * policy to check. Absent: the token's `aud` must be one or more RFC 8707 resource identifiers,
   * which become its record's `audience`, checked against the policy's `resource` (a policy
   * without `resource` then refuses it).
   */
  readonly audience?: string | readonly string[]
  /**
   * Which claim `audience` is compared with: `aud` (the default), or `client_id` for an issuer
   * whose access tokens carry no `aud` (Amazon Cognito): `audience` then names the app clients
   * whose tokens this API accepts.
   */
  readonly audienceClaim?: 'aud' | 'client_id'
  /** Require the RFC 9068 `typ` header `at+jwt` (or `application/at+jwt`). Default false. */
  readonly requireTyp?: boolean
  /** How far `exp` and `nbf` may be off this clock, in seconds, 0–300. Default 5. */
  readonly clockToleranceSeconds?: number
  /**
   * More scope names from the token's custom claims, added to those of `scope` (space-separated)
   * and `scp` (an array, or a space-separated string). Only the contract's nine scopes count;
   * every other name is ignored. Throwing (or answering something else than an array of strings)
   * answers 503, reported to the policy's `onError`.
   */
  readonly claimsToScopes?: (claims: JwtClaims) => readonly string[]
  /**
   * The least time between two JWKS fetches, in ms, 1000–3600000: a token with an unknown `kid`
   * makes the store fetch the JWKS again at most this often, however many requests carry one.
   * Default 30000.
   */
  readonly cooldownMs?: number
  /** How old fetched keys may be before they are fetched again (in the background), in ms. Default 600000. */
  readonly refreshIntervalMs?: number
  /**
   * How long fetched keys stay trusted while the JWKS cannot be fetched again, in ms: past it,
   * every token is answered 503 until a fetch succeeds. At least `refreshIntervalMs`, at most 7
   * days. Default 3600000 (an hour).
   */
  readonly keysMaxAgeMs?: number
  /** How long one JWKS or discovery request may take before it fails, in ms. Default 1500. */
  readonly timeoutMs?: number
  /**
   * How long a verified token's record is reused, in ms, never past its `exp`: the same token is
   * not verified again on every request. Default 60000; 0 verifies every time; at most 300000.
   */
  readonly cacheTtlMs?: number
  /** How many verified tokens are remembered at most; the oldest go first. Default 10000. */
  readonly maxEntries?: number
  /** The longest token accepted, in characters, 1024–65536. Default 8192. */
  readonly maxTokenLength?: number
  /** The fetch implementation; the global one by default (Node ≥ 20, Bun, Deno, Workers). */
  readonly fetch?: typeof fetch
  /** The clock, epoch ms; `Date.now` by default. */
  readonly now?: () => number
}

type Entry = { readonly record: TokenRecord | undefined; readonly until: number }

/**
 * A read-only {@link TokenStore} for JWT access tokens (RFC 9068, or an identity provider's plain
 * JWTs) that the host's identity provider signs: the same adapters and decisions guard routes with
 * Auth0, Okta, Keycloak, Microsoft Entra or Cognito tokens. Runs wherever `fetch` and Web Crypto do.
 *
 * - Checks the signature with an allowed algorithm (never `none`, never HMAC with a public key),
 *   `iss` exactly, the audience, `exp` and `nbf` (with `clockToleranceSeconds`), `typ` when asked.
 * - Claims: `sub` is the user, `scope`/`scp` (and `claimsToScopes`) the scopes, filtered to the
 *   contract's nine with `public` always, `client_id`/`azp` the client, `cnf.jkt` binds the
 *   token to a DPoP key.
 * - Keys come from the JWKS, cached: fetched again after `refreshIntervalMs` (in the background),
 *   or for an unknown `kid` at most once per `cooldownMs`, and kept through an outage up to
 *   `keysMaxAgeMs`.
 * - Fails closed: a token that fails a check is refused (401 `invalid_token`); when no key can be
 *   trusted (the JWKS never answered, answers garbage, hangs past `timeoutMs` or has been away
 *   longer than `keysMaxAgeMs`), lookups reject with a `TokenStoreError`, which the policy answers
 *   503 and reports to its `onError`.
 * - A token revoked at the issuer keeps working here until it expires: nothing is asked per token.
 *   Writes and listings reject (tokens are the issuer's); `touch` does nothing.
 *
 * @example
 * const tokens = new JwtTokenStore({
 *   issuer: 'https://example.eu.auth0.com/',
 *   algorithms: ['RS256'],
 * })
 * const policy = createAccessPolicy({ tokens, resource: 'https://data.example.org/api' })
 * @see https://www.rfc-editor.org/rfc/rfc9068
 */
export class JwtTokenStore extends IssuerManagedStore implements TokenStore {
  readonly #key: Uint8Array | JwksSource['keyFor']
  readonly #verifyOptions: JWTVerifyOptions
  readonly #mapping: ClaimsMapping
  readonly #ttlMs: number
  readonly #maxEntries: number
  readonly #maxTokenLength: number
  readonly #now: () => number
  readonly #verified = new Map<string, Entry>()

  /** @throws {ConfigError} naming the offending option. */
  constructor(options: JwtTokenStoreOptions) {
    super('a JWT store')
    const o = parseJwtTokenStoreOptions(options)
    this.#key =
      o.secret ??
      new JwksSource({
        issuer: o.issuer,
        jwksUri: o.jwksUri,
        keyTypes: o.keyTypes,
        timeoutMs: o.timeoutMs,
        cooldownMs: o.cooldownMs,
        refreshMs: o.refreshIntervalMs,
        maxAgeMs: o.keysMaxAgeMs,
        fetch: o.fetch,
        now: o.now,
      }).keyFor
    this.#verifyOptions = Object.freeze({
      issuer: o.issuer,
      algorithms: [...o.algorithms],
      clockTolerance: o.clockToleranceSeconds,
      requiredClaims: ['exp', 'sub'],
      ...(o.audience !== undefined && o.audienceClaim === 'aud' && { audience: [...o.audience] }),
      ...(o.requireTyp && { typ: 'at+jwt' }),
    })
    this.#mapping = {
      claimsToScopes: o.claimsToScopes,
      audienceChecked: o.audience !== undefined,
      clientIds: o.audienceClaim === 'client_id' ? new Set(o.audience) : undefined,
      toleranceMs: o.clockToleranceSeconds * 1000,
    }
    this.#ttlMs = o.cacheTtlMs
    this.#maxEntries = o.maxEntries
    this.#maxTokenLength = o.maxTokenLength
    this.#now = o.now
  }

  /** True for a compact JWS of at most `maxTokenLength` characters: the values this store verifies. */
  acceptsTokenValue(value: string): boolean {
    return isCompactJws(value, this.#maxTokenLength)
  }

  /**
   * The record of the token `value` when it verifies, `undefined` when it does not; a verified
   * token's record is reused for `cacheTtlMs`, never past its `exp`.
   */
  findByValue(value: string): TokenRecord | undefined | Promise<TokenRecord | undefined> {
    if (!isCompactJws(value, this.#maxTokenLength)) return undefined
    const hash = hashTokenValue(value)
    const now = this.#now()
    const known = this.#verified.get(hash)
    // Written as "before" so that a NaN clock counts as stale and verifies again.
    if (known !== undefined && now < known.until) return known.record
    return this.#verify(value, hash, now)
  }

  /** A cached record only: without the value, a token cannot be verified. */
  findByHash(hash: string): TokenRecord | undefined {
    const known = this.#verified.get(hash)
    if (known !== undefined && this.#now() < known.until) return known.record
    throw new TokenStoreError('a JWT store looks tokens up by value')
  }

  async #verify(value: string, hash: string, now: number): Promise<TokenRecord | undefined> {
    let claims: JwtClaims
    try {
      claims = await verifyWithAnyKey(value, this.#key, {
        ...this.#verifyOptions,
        currentDate: new Date(now),
      })
    } catch (error) {
      // Every check jose makes fails with a JOSEError: the token's fault, a 401. Anything else
      // (no trusted key, a runtime fault) is the store's, a 503.
      if (error instanceof errors.JOSEError) return undefined
      if (error instanceof TokenStoreError) throw error
      throw new TokenStoreError('verifying a JWT failed', { cause: error })
    }
    const record = recordOfClaims(claims, hash, now, this.#mapping)
    if (record !== undefined && this.#ttlMs > 0) {
      const until = Math.min(now + this.#ttlMs, (claims.exp as number) * 1000)
      this.#verified.delete(hash)
      this.#verified.set(hash, { record, until })
      if (this.#verified.size > this.#maxEntries) this.#verified.delete(this.#verified.keys().next().value!)
    }
    return record
  }
}

// A JWKS may hold several keys that fit a token without a `kid` (RFC 7517 §4.5): each is tried.
async function verifyWithAnyKey(
  value: string,
  key: Uint8Array | JwksSource['keyFor'],
  options: JWTVerifyOptions,
): Promise<JwtClaims> {
  try {
    return (await jwtVerify(value, key as Parameters<typeof jwtVerify>[1], options)).payload
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error
    for await (const candidate of error) {
      try {
        return (await jwtVerify(value, candidate, options)).payload
      } catch (failure) {
        if (!(failure instanceof errors.JWSSignatureVerificationFailed)) throw failure
      }
    }
    throw new errors.JWSSignatureVerificationFailed()
  }
}
