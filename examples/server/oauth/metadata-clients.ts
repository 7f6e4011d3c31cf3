/**
 * Clients identified by a client ID metadata document (oauth/client-metadata-fetch.ts), resolved
 * through bounded caches: a valid document is kept as long as its `Cache-Control` asks, within the
 * library's bounds, in a cache of its own ({@link MAX_CACHED_DOCUMENTS}); a refusal (unreachable,
 * invalid, not public) is kept {@link NEGATIVE_TTL_MS} in another ({@link MAX_CACHED_REFUSALS}), so
 * that nobody makes the server fetch one URL over and over, and a flood of made-up URLs only ever
 * pushes out other refusals, never a good document. A lookup that must fetch is first admitted by
 * the caller (the `clientMetadata` limit, per network); one fetch per URL at a time, at most
 * {@link MAX_FETCHES_PER_HOST} per host and {@link MAX_CONCURRENT_FETCHES} in all, beyond which the
 * lookup is refused for now ({@link MetadataLookupRefused}) rather than the client called unknown.
 */
import {
  type CacheLifetimeBounds,
  checkClientIdUrl,
  DEFAULT_DOCUMENT_CACHE_BOUNDS,
  documentCacheLifetimeMs,
  metadataDocumentClient,
  type OAuthClient,
  parseClientMetadataDocument,
} from 'data-access-policy/oauth'
import {
  DOCUMENT_FETCH_DEADLINE_MS,
  type FetchDocumentOptions,
  fetchClientMetadataDocument,
} from './client-metadata-fetch.js'

/** How long a refused document URL is answered from the refusals' cache. */
export const NEGATIVE_TTL_MS = 60_000

/** Valid documents kept at most; the least recently used goes first. */
export const MAX_CACHED_DOCUMENTS = 1000

/** Refusals kept at most, apart from the documents; the oldest goes first. */
export const MAX_CACHED_REFUSALS = 1000

/** Fetches in flight at most, over all URLs. */
export const MAX_CONCURRENT_FETCHES = 16

/**
 * Fetches in flight at most to one host: a host that never answers (a tarpit) holds this many of
 * the {@link MAX_CONCURRENT_FETCHES}, and every other host's documents are still fetched.
 */
export const MAX_FETCHES_PER_HOST = 2

/** A client of a metadata document, with the host its document is on (named on the consent page). */
export interface MetadataClient {
  readonly client: OAuthClient
  readonly host: string
}

/**
 * Whether a lookup that must fetch may go ahead: the caller's count of the requesting network's
 * fetches (the abuse limits' `LimitCheck` has this shape), or how many seconds to wait.
 */
export type FetchAdmission = () => Promise<
  { readonly ok: true } | { readonly ok: false; readonly retryAfter: number }
>

/**
 * A lookup that could not be answered now: `rate-limited`, the requesting network fetched too many
 * documents lately; `busy`, as many fetches as allowed are in flight (to the document's host, or in
 * all). Thrown through the core's client lookup, so that the endpoint answers 429 or 503 with
 * `Retry-After` rather than calling a client unknown that may well exist.
 *
 * @example
 * if (error instanceof MetadataLookupRefused) return tooManyRequests('clientMetadata', error.retryAfter)
 */
export class MetadataLookupRefused extends Error {
  readonly reason: 'rate-limited' | 'busy'
  /** Seconds to wait before trying again. */
  readonly retryAfter: number

  constructor(reason: 'rate-limited' | 'busy', retryAfter: number) {
    super(
      reason === 'busy'
        ? 'too many client metadata documents are being fetched; try again later'
        : 'too many client metadata documents were fetched for this network; try again later',
    )
    this.name = 'MetadataLookupRefused'
    this.reason = reason
    this.retryAfter = retryAfter
  }
}

interface Cached<T> {
  readonly answer: T
  readonly until: number
}

/** Options of {@link MetadataDocumentClients}. */
export interface MetadataDocumentClientsOptions extends FetchDocumentOptions {
  readonly now?: () => number
  readonly bounds?: CacheLifetimeBounds
  /** Valid documents kept at most ({@link MAX_CACHED_DOCUMENTS}). */
  readonly maxEntries?: number
  /** Refusals kept at most ({@link MAX_CACHED_REFUSALS}). */
  readonly maxRefusals?: number
  /** Fetches in flight at most ({@link MAX_CONCURRENT_FETCHES}). */
  readonly maxFetches?: number
  /** Fetches in flight to one host at most ({@link MAX_FETCHES_PER_HOST}). */
  readonly maxFetchesPerHost?: number
  /** Where a refused document's reason goes; `console.warn` by default. */
  readonly warn?: (line: string) => void
}

// A cached answer's stand-in for "none": the lookup must fetch.
const MISS: unique symbol = Symbol('miss')
/**
 * Resolves metadata-document client ids, cached.
 *
 * @example
 * const documents = new MetadataDocumentClients({ allowHttpLoopback: false })
 * const found = await documents.lookup('https://app.example.com/client.json', () => guard.hitNetwork('clientMetadata', network))
 */
export class MetadataDocumentClients {
  readonly #documents = new Map<string, Cached<MetadataClient>>()
  readonly #refusals = new Map<string, Cached<undefined>>()
  readonly #inFlight = new Map<string, Promise<MetadataClient | undefined>>()
  readonly #perHost = new Map<string, number>()
  readonly #options: MetadataDocumentClientsOptions
  readonly #now: () => number

  constructor(options: MetadataDocumentClientsOptions = {}) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /**
   * The client `id` names, when its document is valid. A cached answer (document or refusal) or a
   * fetch in flight costs nothing; a fetch is admitted by `admit` first.
   * Rejects with {@link MetadataLookupRefused} only; never otherwise.
   */
  async lookup(id: string, admit: FetchAdmission): Promise<MetadataClient | undefined> {
    const known = this.#known(id)
    if (known !== MISS) return known
    const check = checkClientIdUrl(id, { allowHttpLoopback: this.#options.allowHttpLoopback === true })
    // A URL that may name no document costs no fetch, so neither a count nor a cache entry.
    if (!check.ok) return undefined
    const host = check.url.hostname
    // Room is checked before the count, so that a busy server spends nobody's allowance.
    this.#requireRoom(host)
    const admitted = await admit()
    if (!admitted.ok) throw new MetadataLookupRefused('rate-limited', admitted.retryAfter)
    // Another request may have fetched or started this URL, or taken the room, meanwhile.
    const meanwhile = this.#known(id)
    if (meanwhile !== MISS) return meanwhile
    this.#requireRoom(host)
    this.#perHost.set(host, (this.#perHost.get(host) ?? 0) + 1)
    const fetching = this.#fetch(id).finally(() => {
      this.#inFlight.delete(id)
      const left = (this.#perHost.get(host) ?? 1) - 1
      if (left === 0) this.#perHost.delete(host)
      else this.#perHost.set(host, left)
    })
    this.#inFlight.set(id, fetching)
    return fetching
  }

  /** How many fetches are in flight to `hostname` (for tests of the per-host bound). */
  fetchesTo(hostname: string): number {
    return this.#perHost.get(hostname) ?? 0
  }

  // A cached document or refusal, or the fetch in flight; MISS when a fetch is needed.
  #known(id: string): MetadataClient | undefined | Promise<MetadataClient | undefined> | typeof MISS {
    const now = this.#now()
    const document = this.#documents.get(id)
    if (document !== undefined && now < document.until) {
      // Most recently used goes last.
      this.#documents.delete(id)
      this.#documents.set(id, document)
      return document.answer
    }
    const refusal = this.#refusals.get(id)
    if (refusal !== undefined && now < refusal.until) return undefined
    return this.#inFlight.get(id) ?? MISS
  }

  #requireRoom(host: string): void {
    const { maxFetches = MAX_CONCURRENT_FETCHES, maxFetchesPerHost = MAX_FETCHES_PER_HOST } = this.#options
    if (this.#inFlight.size >= maxFetches || this.fetchesTo(host) >= maxFetchesPerHost) {
      // Every fetch in flight ends within its deadline.
      const deadlineMs = this.#options.deadlineMs ?? DOCUMENT_FETCH_DEADLINE_MS
      throw new MetadataLookupRefused('busy', Math.max(1, Math.ceil(deadlineMs / 1000)))
    }
  }

  async #fetch(id: string): Promise<MetadataClient | undefined> {
    const fetched = await fetchClientMetadataDocument(id, this.#options)
    const parsed = fetched.ok ? parseClientMetadataDocument(id, fetched.document) : fetched
    if (!parsed.ok) {
      ;(this.#options.warn ?? console.warn)(
        `client metadata document ${JSON.stringify(id)} refused: ${parsed.reason}`,
      )
      const max = this.#options.maxRefusals ?? MAX_CACHED_REFUSALS
      remember(this.#refusals, max, id, { answer: undefined, until: this.#now() + NEGATIVE_TTL_MS })
      return undefined
    }
    const answer = { client: metadataDocumentClient(parsed.metadata), host: new URL(id).host }
    const bounds = this.#options.bounds ?? DEFAULT_DOCUMENT_CACHE_BOUNDS
    const ttlMs = documentCacheLifetimeMs(fetched.ok ? fetched.cacheControl : undefined, bounds)
    this.#refusals.delete(id)
    const max = this.#options.maxEntries ?? MAX_CACHED_DOCUMENTS
    remember(this.#documents, max, id, { answer, until: this.#now() + ttlMs })
    return answer
  }
}

// Keeps `entry` last in `cache`, pushing out the first (least recently used or oldest) at the bound.
function remember<T>(cache: Map<string, Cached<T>>, max: number, id: string, entry: Cached<T>): void {
  cache.delete(id)
  while (cache.size >= max) cache.delete(cache.keys().next().value as string)
  cache.set(id, entry)
}
