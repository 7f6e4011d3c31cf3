import { z } from 'zod'
import { configErrorFromZod } from '../config-error.js'
import { functionShape, isSecureEndpointUrl } from '../config-shapes.js'
import { parseScopes } from '../decisions/scopes.js'
import { TokenStoreError } from '../errors.js'
import { tokenKindOf, tokenValueHint } from '../tokens/token-format.js'
import { hashTokenValue } from '../tokens/token-hash.js'
import { type TokenRecord, tokenRecordSchema } from '../tokens/token-record.js'
import type { TokenStore } from '../tokens/token-store.js'

/** Options of {@link IntrospectionTokenStore}. */
export interface IntrospectionTokenStoreOptions {
  /**
   * The issuer's RFC 7662 endpoint, e.g. `https://data.example.org/oauth/introspect`: an absolute
   * `https` URL (`http` only on a loopback host), since the request carries tokens and a secret.
   */
  readonly endpoint: string
  /** This resource server's client id at the issuer (a client allowed to introspect). */
  readonly clientId: string
  /** Its client secret, sent with `client_secret_basic` (RFC 6749 §2.3.1). */
  readonly clientSecret: string
  /**
   * How long an answer, active or not, is reused, in ms: a token revoked at the issuer is refused
   * here within this bound. Default 5000; 0 asks the issuer on every request; at most 60000.
   */
  readonly cacheTtlMs?: number
  /** How many answers the cache holds at most; the oldest go first. Default 10000. */
  readonly maxEntries?: number
  /** How long one introspection request may take before it fails (503), in ms. Default 1500. */
  readonly timeoutMs?: number
  /** The fetch implementation; the global one by default (Node ≥ 20, Bun, Deno, Workers). */
  readonly fetch?: typeof fetch
  /** The clock of the cache, epoch ms; `Date.now` by default. */
  readonly now?: () => number
}

const optionsSchema = z.strictObject({
  endpoint: z.string().refine(isSecureEndpointUrl, {
    message: 'must be an absolute https URL (http only on a loopback host) without user info or fragment',
  }),
  clientId: z.string().regex(/^[\x21-\x7e]{1,80}$/, 'must be 1-80 visible ASCII characters'),
  clientSecret: z.string().min(1, 'must not be empty'),
  cacheTtlMs: z.number().int().min(0).max(60_000).default(5000),
  maxEntries: z.number().int().min(1).max(1_000_000).default(10_000),
  timeoutMs: z.number().int().positive().max(60_000).default(1500),
  fetch: functionShape<typeof fetch>().optional(),
  now: functionShape<() => number>().default(() => Date.now),
})

// RFC 7662 §2.2, as far as a guard needs it. An active answer must say what the token is for
// (`scope`, `sub`) and that it is a bearer access token; anything else is garbage, never an allow.
const secondsSchema = z
  .number()
  .int()
  .nonnegative()
  .max(Number.MAX_SAFE_INTEGER / 1000)
const activeSchema = z.object({
  active: z.literal(true),
  scope: z.string(),
  sub: z.string().min(1).max(256),
  token_type: z.string().regex(/^bearer$/i),
  client_id: z.string().optional(),
  exp: secondsSchema.optional(),
  iat: secondsSchema.optional(),
  jti: z.string().optional(),
  // RFC 7662 §2.2 / RFC 7519 §4.1.3: one resource as a string, several as an array.
  aud: z.union([z.string(), z.array(z.string())]).optional(),
})
const answerSchema = z.union([z.object({ active: z.literal(false) }), activeSchema])

const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/
const REMOTE_NAME = 'Introspected token'

type Entry = { readonly record: TokenRecord | undefined; readonly until: number }

function formEncode(text: string): string {
  return encodeURIComponent(text).replaceAll('%20', '+')
}

/**
 * A read-only {@link TokenStore} that asks the issuing authorization server's RFC 7662
 * introspection endpoint about each token, so that a resource server on another host (another
 * process, framework, language runtime or machine) guards its routes with the same adapters and the
 * same decisions, without sharing the token store.
 *
 * - Each answer, active or not, is cached by the token's SHA-256 (never its value) for
 *   `cacheTtlMs` (5 s by default): a token revoked at the issuer is refused here within that bound.
 *   The cache holds at most `maxEntries` answers; concurrent requests for one token share one call.
 * - Fails closed: a timeout, a network error, a status other than 200, or an answer that is not
 *   RFC 7662 JSON for a bearer token rejects with a `TokenStoreError`, which the policy answers
 *   with 503 (reported to its `onError`); a failure is never cached, and never an allow.
 * - Writes (`save`, `update`) and listings are the issuer's: they reject. `touch` does nothing (the
 *   issuer does not learn of uses here).
 *
 * @example
 * const tokens = new IntrospectionTokenStore({
 *   endpoint: 'https://data.example.org/oauth/introspect',
 *   clientId: 'reports-api',
 *   clientSecret: process.env.INTROSPECTION_SECRET!,
 * })
 * const policy = createAccessPolicy({ tokens })
 * @see https://www.rfc-editor.org/rfc/rfc7662
 */
export class IntrospectionTokenStore implements TokenStore {
  readonly #endpoint: string
  readonly #authorization: string
  readonly #ttlMs: number
  readonly #maxEntries: number
  readonly #timeoutMs: number
  readonly #fetch: typeof fetch | undefined
  readonly #now: () => number
  readonly #cache = new Map<string, Entry>()
  readonly #pending = new Map<string, Promise<TokenRecord | undefined>>()

  /** @throws {ConfigError} naming the offending option. */
  constructor(options: IntrospectionTokenStoreOptions) {
    const parsed = optionsSchema.safeParse(options)
    if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
    const { endpoint, clientId, clientSecret, cacheTtlMs, maxEntries, timeoutMs, fetch, now } = parsed.data
    this.#endpoint = endpoint
    this.#authorization = `Basic ${btoa(`${formEncode(clientId)}:${formEncode(clientSecret)}`)}`
    this.#ttlMs = cacheTtlMs
    this.#maxEntries = maxEntries
    this.#timeoutMs = timeoutMs
    this.#fetch = fetch
    this.#now = now
  }

  /** The issuer's answer about `value`, from the cache while it is fresh. */
  findByValue(value: string): TokenRecord | undefined | Promise<TokenRecord | undefined> {
    const hash = hashTokenValue(value)
    const cached = this.#fresh(hash)
    if (cached !== undefined) return cached.record
    let pending = this.#pending.get(hash)
    if (pending === undefined) {
      pending = this.#introspect(value, hash).finally(() => this.#pending.delete(hash))
      this.#pending.set(hash, pending)
    }
    return pending
  }

  /** A cached answer only: without the value, the issuer cannot be asked. */
  findByHash(hash: string): TokenRecord | undefined {
    const cached = this.#fresh(hash)
    if (cached === undefined) throw new TokenStoreError('an introspection store looks tokens up by value')
    return cached.record
  }

  async findById(_id: string): Promise<TokenRecord | undefined> {
    throw readOnly()
  }

  async save(_record: TokenRecord): Promise<void> {
    throw readOnly()
  }

  async update(_record: TokenRecord): Promise<void> {
    throw readOnly()
  }

  async listByOwner(_userId: string): Promise<readonly TokenRecord[]> {
    throw readOnly()
  }

  async touch(_id: string, _now: number): Promise<void> {}

  #fresh(hash: string): Entry | undefined {
    const entry = this.#cache.get(hash)
    if (entry === undefined) return undefined
    // Written as "not before" so that a NaN clock counts as stale and asks again.
    if (this.#now() < entry.until) return entry
    this.#cache.delete(hash)
    return undefined
  }

  async #introspect(value: string, hash: string): Promise<TokenRecord | undefined> {
    const asked = this.#now()
    const record = recordOf(await this.#ask(value), value, hash, asked)
    if (this.#ttlMs > 0) {
      this.#cache.delete(hash)
      this.#cache.set(hash, { record, until: asked + this.#ttlMs })
      // A Map iterates in insertion order: the first key is the oldest answer.
      if (this.#cache.size > this.#maxEntries) this.#cache.delete(this.#cache.keys().next().value!)
    }
    return record
  }

  async #ask(value: string): Promise<unknown> {
    const send = this.#fetch ?? globalThis.fetch
    let response: Response
    try {
      response = await send(this.#endpoint, {
        method: 'POST',
        headers: {
          authorization: this.#authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: `token=${formEncode(value)}&token_type_hint=access_token`,
        redirect: 'error',
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
    } catch (cause) {
      throw new TokenStoreError('the introspection endpoint did not answer', { cause })
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {})
      throw new TokenStoreError(`the introspection endpoint answered ${response.status}`)
    }
    try {
      return await response.json()
    } catch (cause) {
      throw new TokenStoreError('the introspection endpoint answered something that is not JSON', { cause })
    }
  }
}

function readOnly(): TokenStoreError {
  return new TokenStoreError('an introspection store is read-only: tokens are managed by their issuer')
}

// The issuer's answer as the record the policy decides on; anything that does not make one is a
// TokenStoreError (503), never an allow.
function recordOf(answer: unknown, value: string, hash: string, now: number): TokenRecord | undefined {
  const parsed = answerSchema.safeParse(answer)
  if (!parsed.success) {
    throw new TokenStoreError('the introspection endpoint answered something that is not RFC 7662', {
      cause: parsed.error,
    })
  }
  const body = parsed.data
  if (!body.active) return undefined
  const kind = tokenKindOf(value)
  try {
    const scopes = parseScopes(body.scope).granted
    return tokenRecordSchema.parse({
      id: body.jti !== undefined && TOKEN_ID.test(body.jti) ? body.jti : `rt_${hash.slice(0, 16)}`,
      kind,
      userId: body.sub,
      name: REMOTE_NAME,
      scopes,
      hash,
      hint: tokenValueHint(value),
      createdAt: body.iat === undefined ? now : body.iat * 1000,
      ...(body.exp !== undefined && { expiresAt: body.exp * 1000 }),
      ...(kind === 'oauth' && body.client_id !== undefined && { clientId: body.client_id }),
      ...(body.aud !== undefined && { audience: typeof body.aud === 'string' ? [body.aud] : body.aud }),
    })
  } catch (cause) {
    throw new TokenStoreError('the introspection endpoint answered a token this library cannot use', {
      cause,
    })
  }
}
