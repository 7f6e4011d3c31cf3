import { z } from 'zod'
import { configErrorFromZod } from '../config-error.js'
import { functionShape, isSecureEndpointUrl } from '../config-shapes.js'
import { TokenLookupLimitError, TokenStoreError } from '../errors.js'
import { DEFAULT_IPV6_NETWORK_PREFIX, networkOfAddress } from '../restrictions/client-network.js'
import { IssuerManagedStore } from '../tokens/issuer-managed-store.js'
import { hashTokenValue } from '../tokens/token-hash.js'
import type { TokenRecord } from '../tokens/token-record.js'
import type { TokenLookupContext, TokenStore } from '../tokens/token-store.js'
import { recordOfAnswer } from './introspection-answer.js'
import { MissBudget } from './miss-budget.js'
import { missSourceOf } from './miss-source.js'

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
   * How long an active answer is reused, in ms: a token revoked at the issuer is refused here
   * within this bound. Default 5000; 0 asks the issuer on every request; at most 60000.
   */
  readonly cacheTtlMs?: number
  /**
   * How many active answers the cache holds at most; the least recently used go first. Default
   * 10000, at most 1000000. A token seen active stays known (asked again when its answer is older
   * than `cacheTtlMs`, without spending a miss budget) until it is pushed out or found inactive.
   */
  readonly maxEntries?: number
  /**
   * How long an inactive answer is remembered, in ms, so that the same made-up or revoked token is
   * not asked again. Default 60000; 0 remembers none; at most 600000. A token value is random: it
   * does not become active after an inactive answer, unless an issuer answers before its own write
   * of a new token is visible to it (a lagging replica), which would refuse that token here for as
   * long.
   */
  readonly inactiveTtlMs?: number
  /**
   * How many inactive answers are remembered at most; the least recently used go first. Kept apart
   * from the active answers, so that made-up tokens never push a real user's answer out. Default
   * 10000, at most 1000000.
   */
  readonly maxInactiveEntries?: number
  /**
   * How many tokens not seen active (cache misses, each an introspection call) one client network
   * may have asked about per `missWindowMs`: an IPv4 address, or an IPv6 prefix of `ipv6Prefix`
   * bits (`networkOfAddress`); requests whose address is unknown share one network. Each block of
   * networks (an IPv4 /24, an IPv6 /48 when `ipv6Prefix` is longer) may have asked about 4 times as
   * many (at most `missesTotal`), so that one allocation cannot act as thousands of networks. Past a
   * budget, that network's requests with new tokens are refused (429 `rate_limited` with
   * `Retry-After`) without asking the issuer. Default 30, 1–100000.
   */
  readonly missesPerNetwork?: number
  /**
   * How many misses every network together may cost per `missWindowMs`: the bound on the calls
   * unauthenticated traffic can make this store send. Its last tenth is kept for networks that have
   * shown an active token within the window and have spent less than half their own budget (a
   * stranger cannot make an active token). Default 300; at least `missesPerNetwork`, at most 1000000.
   */
  readonly missesTotal?: number
  /**
   * The prefix length of an IPv6 client network, 1–128: set it to the policy's `ipv6Prefix`, so
   * that both count the same networks. Default 64 (one subscriber's prefix).
   */
  readonly ipv6Prefix?: number
  /** The window the miss budgets refill over, in ms (continuously). Default 60000, 1000–3600000. */
  readonly missWindowMs?: number
  /**
   * How many client networks' budgets are tracked at most; the least recently seen is forgotten
   * (and starts afresh: `missesTotal` still bounds them all). Default 10000, 1–1000000.
   */
  readonly maxNetworks?: number
  /** How long one introspection request may take before it fails (503), in ms. Default 1500. */
  readonly timeoutMs?: number
  /** The fetch implementation; the global one by default (Node ≥ 20, Bun, Deno, Workers). */
  readonly fetch?: typeof fetch
  /** The clock of the cache, epoch ms; `Date.now` by default. */
  readonly now?: () => number
}

const optionsSchema = z
  .strictObject({
    endpoint: z.string().refine(isSecureEndpointUrl, {
      message: 'must be an absolute https URL (http only on a loopback host) without user info or fragment',
    }),
    clientId: z.string().regex(/^[\x21-\x7e]{1,80}$/, 'must be 1-80 visible ASCII characters'),
    clientSecret: z.string().min(1, 'must not be empty'),
    cacheTtlMs: z.number().int().min(0).max(60_000).default(5000),
    maxEntries: z.number().int().min(1).max(1_000_000).default(10_000),
    inactiveTtlMs: z.number().int().min(0).max(600_000).default(60_000),
    maxInactiveEntries: z.number().int().min(1).max(1_000_000).default(10_000),
    missesPerNetwork: z.number().int().min(1).max(100_000).default(30),
    missesTotal: z.number().int().min(1).max(1_000_000).default(300),
    missWindowMs: z.number().int().min(1000).max(3_600_000).default(60_000),
    maxNetworks: z.number().int().min(1).max(1_000_000).default(10_000),
    ipv6Prefix: z.number().int().min(1).max(128).default(DEFAULT_IPV6_NETWORK_PREFIX),
    timeoutMs: z.number().int().positive().max(60_000).default(1500),
    fetch: functionShape<typeof fetch>().optional(),
    now: functionShape<() => number>().default(() => Date.now),
  })
  .refine((options) => options.missesTotal >= options.missesPerNetwork, {
    path: ['missesTotal'],
    message: 'must be at least missesPerNetwork',
  })

type Entry = { readonly record: TokenRecord | undefined; readonly until: number }

// A block of networks may spend this many times a network's budget (at most the total): enough
// for a few busy networks behind one allocation, few enough that one allocation cannot spend the
// total alone.
const BLOCK_SHARE = 4

function formEncode(text: string): string {
  return encodeURIComponent(text).replaceAll('%20', '+')
}

// Least recently used first: a Map iterates in insertion order, and a use moves a key to the end.
function remember(cache: Map<string, Entry>, hash: string, entry: Entry, maxEntries: number): void {
  cache.delete(hash)
  cache.set(hash, entry)
  if (cache.size > maxEntries) cache.delete(cache.keys().next().value!)
}

/**
 * A read-only {@link TokenStore} that asks the issuing authorization server's RFC 7662
 * introspection endpoint about each token, so that a resource server on another host (another
 * process, framework, language runtime or machine) guards its routes with the same adapters and the
 * same decisions, without sharing the token store.
 *
 * - An active answer is cached by the token's SHA-256 (never its value) for `cacheTtlMs` (5 s by
 *   default): a token revoked at the issuer is refused here within that bound. An inactive answer
 *   is remembered for `inactiveTtlMs` (60 s), in a cache of its own. Both caches are bounded
 *   (`maxEntries`, `maxInactiveEntries`); concurrent requests for one token share one call.
 * - The answer's `aud` (RFC 7662 §2.2) becomes the record's `audience`: a policy with a `resource`
 *   refuses a token meant for another resource (401 `invalid_token`).
 * - Unauthenticated traffic cannot make it flood the issuer: a token it has not seen active costs a
 *   miss, and misses are budgeted per client network (`missesPerNetwork`, 30 a minute), per block
 *   of networks (an IPv4 /24, an IPv6 /48: 120 a minute) and in total (`missesTotal`, 300 a minute,
 *   the last tenth kept for networks that have shown an active token). Past a budget the request is
 *   refused with 429 `rate_limited` and `Retry-After`, without a call; tokens already seen active
 *   keep working whatever the budgets.
 * - Fails closed: a timeout, a network error, a status other than 200, or an answer that is not
 *   RFC 7662 JSON for a bearer token (a malformed `aud` included) rejects with a `TokenStoreError`,
 *   which the policy answers with 503 (reported to its `onError`); a failure is never cached, and
 *   never an allow.
 * - Writes (`save`, `update`) and listings are the issuer's: they reject. `touch` does nothing (the
 *   issuer does not learn of uses here).
 *
 * @example
 * const tokens = new IntrospectionTokenStore({
 *   endpoint: 'https://data.example.org/oauth/introspect',
 *   clientId: 'reports-api',
 *   clientSecret: process.env.INTROSPECTION_SECRET!,
 * })
 * const policy = createAccessPolicy({ tokens, resource: 'https://reports.example.org/api' })
 * @see https://www.rfc-editor.org/rfc/rfc7662
 */
export class IntrospectionTokenStore extends IssuerManagedStore implements TokenStore {
  readonly #endpoint: string
  readonly #authorization: string
  readonly #ttlMs: number
  readonly #maxEntries: number
  readonly #inactiveTtlMs: number
  readonly #maxInactiveEntries: number
  readonly #timeoutMs: number
  readonly #fetch: typeof fetch | undefined
  readonly #now: () => number
  readonly #budget: MissBudget
  readonly #ipv6Prefix: number
  // Active answers, kept past their TTL as "seen active" until pushed out or found inactive.
  readonly #active = new Map<string, Entry>()
  readonly #inactive = new Map<string, Entry>()
  readonly #pending = new Map<string, Promise<TokenRecord | undefined>>()

  /** @throws {ConfigError} naming the offending option. */
  constructor(options: IntrospectionTokenStoreOptions) {
    super('an introspection store')
    const parsed = optionsSchema.safeParse(options)
    if (!parsed.success) throw configErrorFromZod(parsed.error, ['options'])
    const o = parsed.data
    this.#endpoint = o.endpoint
    this.#authorization = `Basic ${btoa(`${formEncode(o.clientId)}:${formEncode(o.clientSecret)}`)}`
    this.#ttlMs = o.cacheTtlMs
    this.#maxEntries = o.maxEntries
    this.#inactiveTtlMs = o.inactiveTtlMs
    this.#maxInactiveEntries = o.maxInactiveEntries
    this.#timeoutMs = o.timeoutMs
    this.#fetch = o.fetch
    this.#now = o.now
    this.#ipv6Prefix = o.ipv6Prefix
    this.#budget = new MissBudget({
      perNetwork: o.missesPerNetwork,
      perBlock: Math.min(o.missesTotal, o.missesPerNetwork * BLOCK_SHARE),
      total: o.missesTotal,
      windowMs: o.missWindowMs,
      maxNetworks: o.maxNetworks,
    })
  }

  /**
   * The issuer's answer about `value`, from the caches while they are fresh. A token not seen
   * active costs a miss of the network of `context.clientAddress`; with that network's budget (or
   * the total) spent, it throws a `TokenLookupLimitError` instead of asking the issuer.
   */
  findByValue(
    value: string,
    context?: TokenLookupContext,
  ): TokenRecord | undefined | Promise<TokenRecord | undefined> {
    const hash = hashTokenValue(value)
    const now = this.#now()
    const known = this.#active.get(hash)
    if (known !== undefined && now < known.until) {
      remember(this.#active, hash, known, this.#maxEntries)
      this.#sawActive(context, now)
      return known.record
    }
    const refused = this.#inactive.get(hash)
    // Written as "not before" so that a NaN clock counts as stale and asks again.
    if (refused !== undefined && now < refused.until) return undefined
    let asked = this.#pending.get(hash)
    if (asked === undefined) {
      if (known === undefined) this.#spendMiss(context?.clientAddress, now)
      asked = this.#introspect(value, hash).finally(() => this.#pending.delete(hash))
      this.#pending.set(hash, asked)
    }
    return asked.then((record) => {
      if (record !== undefined) this.#sawActive(context, this.#now())
      return record
    })
  }

  /** A fresh cached answer only: without the value, the issuer cannot be asked. */
  findByHash(hash: string): TokenRecord | undefined {
    const now = this.#now()
    const known = this.#active.get(hash)
    if (known !== undefined && now < known.until) return known.record
    const refused = this.#inactive.get(hash)
    if (refused !== undefined && now < refused.until) return undefined
    throw new TokenStoreError('an introspection store looks tokens up by value')
  }

  // A network that showed an active token may take the reserve of the total for a window; requests
  // whose address is unknown never do.
  #sawActive(context: TokenLookupContext | undefined, now: number): void {
    const network = networkOfAddress(context?.clientAddress, this.#ipv6Prefix)
    if (network !== undefined) this.#budget.sawActive(network, now)
  }

  #spendMiss(clientAddress: string | undefined, now: number): void {
    const verdict = this.#budget.take(missSourceOf(clientAddress, this.#ipv6Prefix), now)
    if (!verdict.ok) {
      throw new TokenLookupLimitError(
        'the introspection miss budget of the client network is spent',
        Math.ceil(verdict.retryAfterMs / 1000),
      )
    }
  }

  async #introspect(value: string, hash: string): Promise<TokenRecord | undefined> {
    const asked = this.#now()
    const record = recordOfAnswer(await this.#ask(value), value, hash, asked)
    if (record === undefined) {
      this.#active.delete(hash)
      if (this.#inactiveTtlMs > 0) {
        const entry = { record, until: asked + this.#inactiveTtlMs }
        remember(this.#inactive, hash, entry, this.#maxInactiveEntries)
      }
    } else {
      // Even with a TTL of 0: the token is then asked about every time, but as one seen active.
      remember(this.#active, hash, { record, until: asked + this.#ttlMs }, this.#maxEntries)
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
