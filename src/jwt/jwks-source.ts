/**
 * Where a JWT store's verification keys come from: a JWKS (RFC 7517 §5) fetched from the issuer,
 * found through discovery when not configured, cached and refreshed on this module's own terms.
 *
 * jose's `createRemoteJWKSet` is not used: past its `cacheMaxAge` every request awaits a reload and
 * fails with it, so keys are not kept through an outage; and during an outage each unknown `kid`
 * past the cooldown starts a fetch, since its cooldown counts from the last success only. Here the
 * cooldown counts from every attempt, and keys stay usable until `maxAgeMs` after their last fetch.
 */
import { createLocalJWKSet, errors, type FlattenedJWSInput, type JWSHeaderParameters } from 'jose'
import { isSecureEndpointUrl } from '../config-shapes.js'
import { TokenStoreError } from '../errors.js'

/** A verification key as jose's `jwtVerify` takes one. Internal to the package. */
export type VerificationKey = Awaited<ReturnType<ReturnType<typeof createLocalJWKSet>>>

type LocalKeys = ReturnType<typeof createLocalJWKSet>

/** Options of {@link JwksSource}. Internal to the package. */
export interface JwksSourceOptions {
  /** The issuer, for discovery and to check the discovered metadata names it. */
  readonly issuer: string
  /** The JWKS URL; discovered from the issuer when absent. */
  readonly jwksUri: string | undefined
  /** The key types (`kty`) the allowed algorithms verify with: a JWKS without one is unusable. */
  readonly keyTypes: ReadonlySet<string>
  readonly timeoutMs: number
  readonly cooldownMs: number
  readonly refreshMs: number
  readonly maxAgeMs: number
  readonly fetch: typeof fetch | undefined
  readonly now: () => number
}

const ACCEPT = 'application/jwk-set+json, application/json'

// OpenID Connect Discovery 1.0 §4 appends its path to the issuer; RFC 8414 §3.1 inserts its own
// between the origin and the issuer's path. The first that answers names the JWKS.
function discoveryUrls(issuer: string): readonly string[] {
  const url = new URL(issuer)
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')
  return [
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ]
}

function hasUsableKey(jwks: unknown, keyTypes: ReadonlySet<string>): boolean {
  const keys = (jwks as { keys?: unknown }).keys
  return (
    Array.isArray(keys) &&
    keys.some(
      (key: unknown) =>
        typeof key === 'object' &&
        key !== null &&
        keyTypes.has((key as { kty?: unknown }).kty as string) &&
        (key as { use?: unknown }).use !== 'enc',
    )
  )
}

/**
 * The issuer's verification keys. `keyFor` is jose's key lookup: it throws a `TokenStoreError`
 * when no key can be trusted (never fetched, or too long without a successful fetch), and jose's
 * `JWKSNoMatchingKey` for a `kid` the current keys lack. Internal to the package.
 */
export class JwksSource {
  readonly #options: JwksSourceOptions
  #jwksUri: string | undefined
  #keys: LocalKeys | undefined
  #fetchedAt = Number.NEGATIVE_INFINITY
  #attemptedAt = Number.NEGATIVE_INFINITY
  #failure: unknown
  #pending: Promise<void> | undefined

  constructor(options: JwksSourceOptions) {
    this.#options = options
    this.#jwksUri = options.jwksUri
  }

  /** jose's key lookup for `jwtVerify`. */
  readonly keyFor = async (
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): Promise<VerificationKey> => {
    const now = this.#options.now()
    if (now - this.#fetchedAt >= this.#options.refreshMs) {
      const refreshing = this.#refresh(now)
      // Keys still within their age serve while a refresh runs: no request waits on the issuer.
      if (!this.#usable(now)) await refreshing
    }
    try {
      return await this.#trusted(now)(header, token)
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
    }
    // A key the issuer may have just rotated in: one fetch per cooldown, shared by every request.
    await this.#refresh(now)
    if (this.#lastAttemptFailed()) {
      throw new TokenStoreError('the JWKS cannot be fetched to find the key of this token', {
        cause: this.#failure,
      })
    }
    return this.#trusted(now)(header, token)
  }

  #usable(now: number): boolean {
    return this.#keys !== undefined && now - this.#fetchedAt < this.#options.maxAgeMs
  }

  #lastAttemptFailed(): boolean {
    return this.#failure !== undefined
  }

  #trusted(now: number): LocalKeys {
    if (!this.#usable(now)) {
      const why = this.#failure instanceof Error ? ` (${this.#failure.message})` : ''
      throw new TokenStoreError(
        this.#keys === undefined
          ? `no key to verify tokens with: the JWKS has not been fetched${why}`
          : `the JWKS has not been fetched for longer than its maximum age${why}: its keys are no longer trusted`,
        { cause: this.#failure },
      )
    }
    return this.#keys!
  }

  #refresh(now: number): Promise<void> {
    if (this.#pending !== undefined) return this.#pending
    if (now - this.#attemptedAt < this.#options.cooldownMs) return Promise.resolve()
    this.#attemptedAt = now
    const pending = this.#load().then(
      (keys) => {
        this.#keys = keys
        this.#fetchedAt = this.#options.now()
        this.#failure = undefined
      },
      (error: unknown) => {
        this.#failure = error
      },
    )
    this.#pending = pending.finally(() => {
      this.#pending = undefined
    })
    return this.#pending
  }

  async #load(): Promise<LocalKeys> {
    this.#jwksUri ??= await this.#discover()
    const jwks = await this.#getJson(this.#jwksUri, 'the JWKS')
    let keys: LocalKeys
    try {
      keys = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0])
    } catch (cause) {
      throw new TokenStoreError('the JWKS is not a JSON Web Key Set', { cause })
    }
    if (!hasUsableKey(jwks, this.#options.keyTypes)) {
      throw new TokenStoreError('the JWKS holds no signing key for the allowed algorithms')
    }
    return keys
  }

  async #discover(): Promise<string> {
    const { issuer } = this.#options
    let lastError: unknown
    for (const url of discoveryUrls(issuer)) {
      let metadata: unknown
      try {
        metadata = await this.#getJson(url, 'the issuer metadata')
      } catch (error) {
        lastError = error
        continue
      }
      const { issuer: named, jwks_uri: jwksUri } = metadata as { issuer?: unknown; jwks_uri?: unknown }
      // OpenID Connect Discovery §4.3, RFC 8414 §3.3: metadata for another issuer is not this one's.
      if (named !== issuer || typeof jwksUri !== 'string' || !isSecureEndpointUrl(jwksUri)) {
        throw new TokenStoreError('the issuer metadata does not name this issuer and a jwks_uri')
      }
      return jwksUri
    }
    throw lastError
  }

  async #getJson(url: string, what: string): Promise<unknown> {
    const send = this.#options.fetch ?? globalThis.fetch
    let response: Response
    try {
      response = await send(url, {
        headers: { accept: ACCEPT },
        redirect: 'error',
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      })
    } catch (cause) {
      throw new TokenStoreError(`${what} did not answer`, { cause })
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {})
      throw new TokenStoreError(`${what} answered ${response.status}`)
    }
    try {
      const json: unknown = await response.json()
      if (typeof json !== 'object' || json === null) throw new TypeError('not a JSON object')
      return json
    } catch (cause) {
      throw new TokenStoreError(`${what} answered something that is not a JSON object`, { cause })
    }
  }
}
