/**
 * Clients identified by a client ID metadata document (oauth/client-metadata-fetch.ts), resolved
 * through a bounded cache: a document is kept as long as its `Cache-Control` asks, within the
 * library's bounds; a refusal (unreachable, invalid, not public) is kept {@link NEGATIVE_TTL_MS}, so
 * that nobody makes the server fetch one URL over and over. One fetch per URL at a time; at most
 * {@link MAX_CONCURRENT_FETCHES} at once, beyond which a new URL is refused for now.
 */
import {
  type CacheLifetimeBounds,
  DEFAULT_DOCUMENT_CACHE_BOUNDS,
  documentCacheLifetimeMs,
  metadataDocumentClient,
  type OAuthClient,
  parseClientMetadataDocument,
} from 'data-access-policy/oauth'
import { type FetchDocumentOptions, fetchClientMetadataDocument } from './client-metadata-fetch.js'

/** How long a refused document URL is answered from the cache. */
export const NEGATIVE_TTL_MS = 60_000

/** Documents (and refusals) kept at most; the least recently used goes first. */
export const MAX_CACHED_DOCUMENTS = 1000

/** Fetches in flight at most, over all URLs. */
export const MAX_CONCURRENT_FETCHES = 16

/** A client of a metadata document, with the host its document is on (named on the consent page). */
export interface MetadataClient {
  readonly client: OAuthClient
  readonly host: string
}

interface Cached {
  readonly answer: MetadataClient | undefined
  readonly until: number
}

/** Options of {@link MetadataDocumentClients}. */
export interface MetadataDocumentClientsOptions extends FetchDocumentOptions {
  readonly now?: () => number
  readonly bounds?: CacheLifetimeBounds
  readonly maxEntries?: number
  /** Where a refused document's reason goes; `console.warn` by default. */
  readonly warn?: (line: string) => void
}

/**
 * Resolves metadata-document client ids, cached.
 *
 * @example
 * const documents = new MetadataDocumentClients({ allowHttpLoopback: false })
 * const found = await documents.lookup('https://app.example.com/client.json')
 */
export class MetadataDocumentClients {
  readonly #cache = new Map<string, Cached>()
  readonly #inFlight = new Map<string, Promise<MetadataClient | undefined>>()
  readonly #options: MetadataDocumentClientsOptions
  readonly #now: () => number

  constructor(options: MetadataDocumentClientsOptions = {}) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** The client `id` names, when its document is valid; never throws. */
  lookup(id: string): Promise<MetadataClient | undefined> {
    const cached = this.#cache.get(id)
    if (cached !== undefined && this.#now() < cached.until) {
      // Most recently used goes last.
      this.#cache.delete(id)
      this.#cache.set(id, cached)
      return Promise.resolve(cached.answer)
    }
    const running = this.#inFlight.get(id)
    if (running !== undefined) return running
    if (this.#inFlight.size >= MAX_CONCURRENT_FETCHES) return Promise.resolve(undefined)
    const fetching = this.#fetch(id).finally(() => this.#inFlight.delete(id))
    this.#inFlight.set(id, fetching)
    return fetching
  }

  async #fetch(id: string): Promise<MetadataClient | undefined> {
    const fetched = await fetchClientMetadataDocument(id, this.#options)
    const parsed = fetched.ok ? parseClientMetadataDocument(id, fetched.document) : fetched
    if (!parsed.ok) {
      ;(this.#options.warn ?? console.warn)(
        `client metadata document ${JSON.stringify(id)} refused: ${parsed.reason}`,
      )
      this.#remember(id, undefined, NEGATIVE_TTL_MS)
      return undefined
    }
    const answer = { client: metadataDocumentClient(parsed.metadata), host: new URL(id).host }
    const bounds = this.#options.bounds ?? DEFAULT_DOCUMENT_CACHE_BOUNDS
    this.#remember(id, answer, documentCacheLifetimeMs(fetched.ok ? fetched.cacheControl : undefined, bounds))
    return answer
  }

  #remember(id: string, answer: MetadataClient | undefined, ttlMs: number): void {
    this.#cache.delete(id)
    const max = this.#options.maxEntries ?? MAX_CACHED_DOCUMENTS
    while (this.#cache.size >= max) this.#cache.delete(this.#cache.keys().next().value as string)
    this.#cache.set(id, { answer, until: this.#now() + ttlMs })
  }
}
