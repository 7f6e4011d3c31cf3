/**
 * What the OAuth routes share: the client registry, the OAuth state store (codes, device grants,
 * refresh tokens), the API's token store (so an issued token authenticates at once), the pages'
 * context (sessions, sign-in, CSRF), the pending consents and the clock.
 */
import type { TokenStore } from 'data-access-policy'
import { type DpopReplayCache, MemoryDpopReplayCache } from 'data-access-policy/dpop'
import { MemoryOAuthStateStore, type OAuthStateStore } from 'data-access-policy/oauth'
import type { AbuseGuard } from '../limits/abuse-limits.js'
import type { PublicOrigin } from '../public-origin.js'
import type { SeedOAuthClient } from '../seed/load.js'
import type { SeedResource } from '../seed/schema.js'
import type { WebContext } from '../web/web-context.js'
import type { ResolveAll } from './client-metadata-fetch.js'
import { ClientRegistry } from './client-registry.js'
import { MetadataDocumentClients } from './metadata-clients.js'
import { MemoryPendingConsents, type PendingConsentStore } from './pending-consents.js'
import { MemoryRegistrationStore, type RegistrationStore } from './registrations.js'
import { type ServerResources, serverResources } from './resources.js'

/** How client ID metadata documents are fetched. */
export interface ClientMetadataOptions {
  /** `--client-metadata-allow-http-loopback`: documents at `http://127.0.0.1…` and `http://[::1]…`. */
  readonly allowHttpLoopback?: boolean
  /** The resolver the fetch checks; the system's by default. Tests inject one. */
  readonly resolve?: ResolveAll
  /** The fetch's deadline; 5 s by default. */
  readonly deadlineMs?: number
  /**
   * The CAs (PEM) a document server's certificate must chain to, instead of the public roots: for
   * tests and private deployments, not a command-line flag (oauth/client-metadata-fetch.ts).
   */
  readonly ca?: string | readonly string[]
}

/** Options of {@link createOAuthContext}. */
export interface OAuthContextOptions {
  /** The seed's clients (seed/load.ts), secrets as scrypt hashes. */
  readonly clients: readonly SeedOAuthClient[]
  /** The API's token store. */
  readonly tokens: TokenStore
  readonly web: WebContext
  /** The clock, epoch ms; the pages' clock by default. */
  readonly now?: () => number
  /** Where codes, device grants and refresh tokens live; in memory by default. */
  readonly state?: OAuthStateStore
  /** Lifetime of issued access tokens; one hour by default (docs/tokens.md). */
  readonly accessTokenTtlMs?: number
  /** Where pending consents live; in memory by default, on Redis with `--store redis…`. */
  readonly consents?: PendingConsentStore
  /** The per-address limits of the unauthenticated endpoints (limits/abuse-limits.ts). */
  readonly guard: AbuseGuard
  /** The server's public origin, for the metadata and `verification_uri`. */
  readonly origin: PublicOrigin
  /** The seed's resource servers, which tokens may be issued for besides the API (RFC 8707). */
  readonly resources?: readonly SeedResource[]
  /** How metadata documents are fetched (client ids that are URLs). */
  readonly clientMetadata?: ClientMetadataOptions
  /** Where dynamically registered clients live; in memory (10,000 at most) by default. */
  readonly registrations?: RegistrationStore
  /** Where the token endpoint remembers used DPoP proofs; in memory (one instance) by default. */
  readonly dpopReplayCache?: DpopReplayCache
}

/** The shared state of the OAuth routes. */
export interface OAuthContext {
  readonly clients: ClientRegistry
  readonly state: OAuthStateStore
  readonly tokens: TokenStore
  readonly web: WebContext
  readonly now: () => number
  readonly consents: PendingConsentStore
  readonly accessTokenTtlMs: number | undefined
  readonly guard: AbuseGuard
  readonly origin: PublicOrigin
  /** The resources tokens may be for, for the current public URL (oauth/resources.ts). */
  readonly resources: () => ServerResources
  /** Dynamically registered clients (oauth/registration-endpoint.ts). */
  readonly registrations: RegistrationStore | undefined
  /** The token endpoint's DPoP replay cache (RFC 9449 §11.1). */
  readonly dpopReplayCache: DpopReplayCache
}

/**
 * Builds the OAuth routes' context.
 *
 * @example
 * const context = createOAuthContext({ clients: seed.clients, tokens, web, guard, origin })
 */
export function createOAuthContext(options: OAuthContextOptions): OAuthContext {
  const now = options.now ?? options.web.now
  const registrations = options.registrations ?? new MemoryRegistrationStore({ now })
  const documents = new MetadataDocumentClients({ ...options.clientMetadata, now })
  return {
    clients: new ClientRegistry(options.clients, now, {
      documents: {
        clients: documents,
        admit: (network) => options.guard.hitNetwork('clientMetadata', network),
      },
      registrations,
    }),
    registrations,
    state: options.state ?? new MemoryOAuthStateStore(),
    tokens: options.tokens,
    web: options.web,
    now,
    consents: options.consents ?? new MemoryPendingConsents(now),
    accessTokenTtlMs: options.accessTokenTtlMs,
    guard: options.guard,
    origin: options.origin,
    resources: serverResources(options.origin, options.resources ?? []),
    dpopReplayCache: options.dpopReplayCache ?? new MemoryDpopReplayCache(),
  }
}
