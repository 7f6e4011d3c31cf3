/**
 * The framework-neutral application: the data model, the token store and the access policy built
 * from a seed, the pages' sessions, and the route sets every binding mounts.
 */
import {
  type AccessPolicy,
  ConfigError,
  createAccessPolicy,
  MemoryTokenStore,
  type TokenStore,
} from 'data-access-policy'
import { type DpopReplayCache, MemoryDpopReplayCache } from 'data-access-policy/dpop'
import { createMcpGate } from 'data-access-policy/mcp'
import type { OAuthStateStore } from 'data-access-policy/oauth'
import { apiRoutes } from './api/api-routes.js'
import { DataModel } from './api/data.js'
import { leakReportRoutes } from './leaks/leak-reports.js'
import { MemoryReportReplayStore, type ReportReplayStore } from './leaks/report-replays.js'
import type { SecretScanningKeys } from './leaks/secret-scanning-keys.js'
import { AbuseGuard, type AbuseLimits } from './limits/abuse-limits.js'
import { MemoryRateLimitStore, type RateLimitStore } from './limits/rate-limits.js'
import { MCP_PATH, type McpEndpoint } from './mcp/mcp-endpoint.js'
import { PROTECTED_RESOURCE, perOrigin, resourceMetadataUrl } from './oauth/discovery.js'
import type { ClientMetadataOptions, OAuthContextOptions } from './oauth/oauth-context.js'
import { oauthRoutes } from './oauth/oauth-routes.js'
import type { PendingConsentStore } from './oauth/pending-consents.js'
import { MemoryRegistrationStore, type RegistrationStore } from './oauth/registrations.js'
import { apiResource, mcpResource } from './oauth/resources.js'
import { referenceRoutes } from './openapi/reference-routes.js'
import { PublicOrigin } from './public-origin.js'
import { LARGE_BODY_PACE, type LargeBodyPace } from './request/large-body.js'
import type { RouteSet } from './routes/route-set.js'
import type { Seed } from './seed/load.js'
import { quote } from './seed/messages.js'
import { loadSeedTokens } from './seed/tokens.js'
import type { SessionStore } from './web/sessions.js'
import { signInRoutes } from './web/signin.js'
import { tokenSettingsRoutes } from './web/token-settings.js'
import { createWebContext, type WebContext } from './web/web-context.js'

/** The realm named in `WWW-Authenticate` challenges. */
export const REALM = 'data-api'

/** Everything a binding needs to serve the API and the pages. */
export interface App {
  readonly policy: AccessPolicy
  readonly model: DataModel
  readonly tokens: TokenStore
  /** The pages' sessions, sign-in and CSRF checks (web/README.md). */
  readonly web: WebContext
  /** The clock the policy, the sessions and the token pages share, epoch ms. */
  readonly now: () => number
  /** Mounted in order: the API first, then the pages, then the API reference over them. */
  readonly routeSets: readonly RouteSet[]
  /** The limits of the unauthenticated endpoints (limits/abuse-limits.ts). */
  readonly guard: AbuseGuard
  /** The origin the server hands out in absolute URLs; set once it listens (public-origin.ts). */
  readonly origin: PublicOrigin
  /** Where every failure behind a 503 (or a 500) is reported: {@link reportError}. */
  readonly reportError: (error: unknown, where: string) => void
  /** `/mcp`: its guard (a policy of its own, for the resource `{public-url}/mcp`) and the tools' data. */
  readonly mcp: McpEndpoint
  /** The pace a read past 64 KiB keeps to hold its large-body slot (request/large-body.ts). */
  readonly largeBodyPace: LargeBodyPace
  /** Where used DPoP proofs are remembered: the policy's, and the token endpoint's to share. */
  readonly dpopReplayCache: DpopReplayCache
}

/**
 * The server's one error hook: the policy's `onError`, the token store's, and the routes' store
 * failures all report here, to stderr. Every 503 has a cause the operator must be able to see;
 * never a token value (neither the library nor the routes hand one over).
 *
 * @example
 * reportError(new Error('Redis is away'), 'GET /settings/tokens')
 */
export function reportError(error: unknown, where: string): void {
  console.error(`${where}:`, error)
}

/** Options of {@link createApp}. */
export interface CreateAppOptions {
  /** The clock, epoch ms; `Date.now` by default. Tests move it to expire tokens and sessions. */
  readonly now?: () => number
  /** Where tokens live; a fresh `MemoryTokenStore` by default. The seed's tokens are added to it. */
  readonly tokens?: TokenStore
  /** Where codes, device grants and refresh tokens live (the OAuth routes' `state`); in memory by default. */
  readonly oauthState?: OAuthStateStore
  /** Where the pages' sign-in sessions live; in memory by default. */
  readonly sessions?: SessionStore
  /** The sign-in form's CSRF key, shared by every instance of a shared store; fresh by default. */
  readonly signInKey?: Uint8Array
  /** Where the abuse limits count; in memory by default. */
  readonly rateLimits?: RateLimitStore
  /** Limits other than the defaults (limits/abuse-limits.ts); tests lower them. */
  readonly limits?: Partial<AbuseLimits>
  /** `--ipv6-prefix`: the length of the IPv6 networks the limits count together; 64 by default. */
  readonly ipv6Prefix?: number
  /** Where the OAuth consent pages wait for an answer; in memory by default. */
  readonly consents?: PendingConsentStore
  /** `--public-url`; absent: the listening address, recorded by the binding's caller. */
  readonly publicUrl?: string | undefined
  /** `--max-token-lifetime`, in days; absent: no cap. */
  readonly maxTokenLifetimeDays?: number | undefined
  /** `--max-live-tokens`: live API tokens one user may hold; absent: the default, 100. */
  readonly maxLiveTokens?: number | undefined
  /** `--secret-scanning-keys`, read; absent: no leak endpoint. */
  readonly secretScanningKeys?: SecretScanningKeys | undefined
  /** Where seen leak reports are remembered; in memory by default. */
  readonly reportReplays?: ReportReplayStore
  /** The pace of large-body slot holders; `LARGE_BODY_PACE` by default (tests hold slots longer). */
  readonly largeBodyPace?: LargeBodyPace
  /** How client ID metadata documents are fetched (`--client-metadata-allow-http-loopback`). */
  readonly clientMetadata?: ClientMetadataOptions
  /** Where dynamically registered clients live; in memory by default. */
  readonly registrations?: RegistrationStore
  /** `--max-registered-clients`, for the memory store; 10,000 by default. */
  readonly maxRegisteredClients?: number
  /** Where used DPoP proofs are remembered, shared by every instance of a shared store; in memory by default. */
  readonly dpopReplayCache?: DpopReplayCache
}

/**
 * Builds an application from a loaded seed: a fresh token store filled with the seed's records, a
 * policy with the library's defaults (HTTPS required except from loopback), a private copy of the
 * data and an empty session store, so that several apps built from one seed never share state.
 *
 * @example
 * const app = await createApp(await loadSeed(DEMO_SEED))
 */
export async function createApp(seed: Seed, options: CreateAppOptions = {}): Promise<App> {
  const now = options.now ?? Date.now
  const tokens = options.tokens ?? new MemoryTokenStore({ now })
  await loadSeedTokens(tokens, seed.tokens)
  const origin = new PublicOrigin(options.publicUrl)
  const dpopReplayCache = options.dpopReplayCache ?? new MemoryDpopReplayCache()
  const policy = createAccessPolicy({
    tokens,
    realm: REALM,
    now,
    // The network beside a token's last use is the one the limits count the client in.
    ...(options.ipv6Prefix === undefined ? {} : { ipv6Prefix: options.ipv6Prefix }),
    // RFC 9728: every 401 points a client to the API's metadata, and from there to the issuer. The
    // origin may be known only once the server listens, which is before any request is answered:
    // the URL is made on the first 401, not parsed again on each.
    resourceMetadata: perOrigin(origin, () => resourceMetadataUrl(origin)),
    // RFC 8707: the API accepts only tokens for itself (or without audience, from the settings
    // pages); a token the issuer gave for a seed resource is refused here.
    resource: perOrigin(origin, () => apiResource(origin)),
    onError: (error, { stage }) => reportError(error, `access policy (${stage})`),
    // RFC 9449: a proof used on one instance is refused on every other one sharing the store; its
    // htu is the public URL (with the path prefix the front door strips) and the request's path.
    dpop: { replayCache: dpopReplayCache, publicUrl: () => origin.url },
  })
  const model = new DataModel(seed)
  const mcp = mcpEndpoint({
    tokens,
    now,
    origin,
    ipv6Prefix: options.ipv6Prefix,
    dpopReplayCache,
    context: { model, policy },
  })
  const web = await createWebContext({
    users: seed.users,
    now,
    paths: origin.pages,
    ...(options.sessions === undefined ? {} : { sessions: options.sessions }),
    ...(options.signInKey === undefined ? {} : { signInKey: options.signInKey }),
  })
  const guard = new AbuseGuard(
    options.rateLimits ?? new MemoryRateLimitStore(),
    options.limits,
    now,
    options.ipv6Prefix,
  )
  const described: RouteSet[] = [
    apiRoutes({ model, policy }),
    signInRoutes(web, guard),
    tokenSettingsRoutes({
      web,
      tokens,
      guard,
      maxLifetimeDays: options.maxTokenLifetimeDays,
      maxLiveTokens: options.maxLiveTokens,
    }),
    issuerRoutes(seed, options, { tokens, web, now, guard, origin, dpopReplayCache }),
    ...(options.secretScanningKeys === undefined
      ? []
      : [
          leakReportRoutes({
            tokens,
            keys: options.secretScanningKeys,
            replays: options.reportReplays ?? new MemoryReportReplayStore(),
            now,
            log: (line) => console.error(line),
          }),
        ]),
  ]
  const routeSets = [
    ...described,
    referenceRoutes(
      () => described,
      () => origin.url,
    ),
  ]
  refuseAmbiguousPrefix(origin, routeSets)
  return {
    policy,
    model,
    tokens,
    web,
    now,
    guard,
    origin,
    reportError,
    routeSets,
    mcp,
    largeBodyPace: options.largeBodyPace ?? LARGE_BODY_PACE,
    dpopReplayCache,
  }
}

/**
 * The issuer's routes (oauth/): the seed's clients and resources, and the stores the app shares with
 * them: one DPoP replay cache for the token endpoint and the API, so that a proof is used once,
 * wherever it is sent.
 *
 * @example
 * issuerRoutes(seed, options, { tokens, web, now, guard, origin, dpopReplayCache })
 */
function issuerRoutes(
  seed: Seed,
  options: CreateAppOptions,
  shared: Pick<OAuthContextOptions, 'tokens' | 'web' | 'now' | 'guard' | 'origin'> & {
    readonly now: () => number
    readonly dpopReplayCache: DpopReplayCache
  },
): RouteSet {
  return oauthRoutes({
    ...shared,
    clients: seed.clients,
    resources: seed.resources,
    registrations:
      options.registrations ??
      new MemoryRegistrationStore({
        now: shared.now,
        ...(options.maxRegisteredClients === undefined ? {} : { maxClients: options.maxRegisteredClients }),
      }),
    ...(options.clientMetadata === undefined ? {} : { clientMetadata: options.clientMetadata }),
    ...(options.oauthState === undefined ? {} : { state: options.oauthState }),
    ...(options.consents === undefined ? {} : { consents: options.consents }),
  })
}

/**
 * The MCP endpoint, a resource of its own (RFC 8707): its policy accepts only tokens for
 * `{public-url}/mcp` (or without audience), and its 401s name that resource's metadata.
 *
 * @example
 * const mcp = mcpEndpoint({ tokens, now, origin, ipv6Prefix: undefined, dpopReplayCache, context })
 */
function mcpEndpoint(options: {
  readonly tokens: TokenStore
  readonly now: () => number
  readonly origin: PublicOrigin
  readonly ipv6Prefix: number | undefined
  readonly dpopReplayCache: DpopReplayCache
  readonly context: McpEndpoint['context']
}): McpEndpoint {
  const { origin } = options
  const policy = createAccessPolicy({
    tokens: options.tokens,
    realm: REALM,
    now: options.now,
    ...(options.ipv6Prefix === undefined ? {} : { ipv6Prefix: options.ipv6Prefix }),
    resourceMetadata: perOrigin(origin, () => origin.wellKnown(PROTECTED_RESOURCE, MCP_PATH)),
    resource: perOrigin(origin, () => mcpResource(origin)),
    onError: (error, { stage }) => reportError(error, `MCP access policy (${stage})`),
    dpop: { replayCache: options.dpopReplayCache, publicUrl: () => origin.url },
  })
  return { gate: createMcpGate({ policy }), context: options.context }
}

/**
 * Refuses a `--public-url` path that a route of the server begins with (`https://host/api`): the
 * front door routes a request under the prefix without it (http/front-door.ts), so such a route
 * would answer for two paths, and a proxy that strips the prefix would reach the wrong one.
 *
 * @throws {ConfigError} naming `--public-url`, the prefix and the route.
 * @example
 * refuseAmbiguousPrefix(new PublicOrigin('https://host/dap'), routeSets) // fine
 */
export function refuseAmbiguousPrefix(origin: PublicOrigin, routeSets: readonly RouteSet[]): void {
  const prefix = origin.pathPrefix
  if (prefix === '') return
  for (const set of routeSets) {
    for (const route of set.routes) {
      if (origin.pages.route(route.path) !== undefined) {
        throw new ConfigError(
          ['--public-url'],
          `path ${quote(prefix)} is also where the server's route ${route.method} ${route.path} begins: choose another path`,
        )
      }
    }
  }
}
