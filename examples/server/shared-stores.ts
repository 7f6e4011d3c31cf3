/**
 * Where the server keeps tokens and OAuth state (`--store`): in process memory (one instance), or
 * on a Redis server or Redis Cluster that several instances share
 * (docs/deployment.md).
 */
import type { TokenStore } from 'data-access-policy'
import type { DpopReplayCache } from 'data-access-policy/dpop'
import type { OAuthStateStore } from 'data-access-policy/oauth'
import { reportError } from './app.js'
import type { StoreOption } from './flags.js'
import type { ReportReplayStore } from './leaks/report-replays.js'
import type { RateLimitStore } from './limits/rate-limits.js'
import type { PendingConsentStore } from './oauth/pending-consents.js'
import type { RegistrationStore } from './oauth/registrations.js'
import type { SessionStore } from './web/sessions.js'

/** The shared stores of a `--store redis://…` or `redis-cluster://…` server, and how to let go of them. */
export interface SharedStores {
  readonly tokens: TokenStore
  /** Codes, device grants and refresh tokens, for the OAuth routes. */
  readonly oauthState: OAuthStateStore
  /** The pages' sign-in sessions, valid on every instance. */
  readonly sessions: SessionStore
  /** The sign-in form's CSRF key, the same on every instance. */
  readonly signInKey: Uint8Array
  /** The abuse limits' counts, shared by every instance on the store. */
  readonly rateLimits: RateLimitStore
  /** The OAuth consent pages waiting for an answer, answerable on every instance. */
  readonly consents: PendingConsentStore
  /** Leak reports already acted on, so that a replay to any instance is refused. */
  readonly reportReplays: ReportReplayStore
  /** Dynamically registered OAuth clients, known to every instance. */
  readonly registrations: RegistrationStore
  /** Used DPoP proofs, so that a proof replayed to any instance is refused (RFC 9449 §11.1). */
  readonly dpopReplayCache: DpopReplayCache
  /** Closes the connections. */
  close(): Promise<void>
}

// How long the server waits for Redis at start before giving up (exit code 1).
const CONNECT_TIMEOUT_MS = 5000

/**
 * Opens the Redis stores for `--store redis://…` or `redis-cluster://…`, connected and
 * subscribed, or `undefined` for
 * `--store memory` (the app then builds its own memory stores).
 *
 * @throws {Error} when Redis does not answer within five seconds.
 * @example
 * const shared = await openSharedStores({ kind: 'redis', url: 'redis://127.0.0.1:6379' })
 */
export async function openSharedStores(
  option: StoreOption,
  now: () => number = Date.now,
  options: { readonly maxRegisteredClients?: number } = {},
): Promise<SharedStores | undefined> {
  if (option.kind === 'memory') return undefined
  // Loaded only here: a memory-store server never loads the Redis client.
  const [
    { RedisDpopReplayCache, RedisOAuthStateStore, RedisTokenStore },
    { RedisSessionStore },
    { RedisRateLimitStore },
    { RedisPendingConsents },
    { RedisReportReplayStore },
    { RedisRegistrationStore },
  ] = await Promise.all([
    import('data-access-policy/redis'),
    import('./web/redis-sessions.js'),
    import('./limits/redis-rate-limits.js'),
    import('./oauth/redis-pending-consents.js'),
    import('./leaks/redis-report-replays.js'),
    import('./oauth/redis-registrations.js'),
  ])
  // A write too few replicas confirmed (after a failover) succeeds; the shortfall is reported here.
  const tokens = new RedisTokenStore({
    redis: option.url,
    onError: (error) => reportError(error, 'token store'),
    now,
  })
  const oauthState = new RedisOAuthStateStore({ redis: option.url })
  const sessions = new RedisSessionStore(option.url, now)
  const rateLimits = new RedisRateLimitStore(option.url)
  const consents = new RedisPendingConsents(option.url, now)
  const reportReplays = new RedisReportReplayStore(option.url)
  const registrations = new RedisRegistrationStore(option.url, {
    now,
    ...(options.maxRegisteredClients === undefined ? {} : { maxClients: options.maxRegisteredClients }),
  })
  const dpopReplayCache = new RedisDpopReplayCache({ redis: option.url, now })
  const close = async () => {
    await Promise.all([
      dpopReplayCache.close(),
      tokens.close(),
      oauthState.close(),
      sessions.close(),
      rateLimits.close(),
      consents.close(),
      reportReplays.close(),
      registrations.close(),
    ])
  }
  try {
    await Promise.all([
      tokens.ready(CONNECT_TIMEOUT_MS),
      oauthState.ready(CONNECT_TIMEOUT_MS),
      sessions.ready(CONNECT_TIMEOUT_MS),
      rateLimits.ready(CONNECT_TIMEOUT_MS),
      consents.ready(CONNECT_TIMEOUT_MS),
      reportReplays.ready(CONNECT_TIMEOUT_MS),
      registrations.ready(CONNECT_TIMEOUT_MS),
      dpopReplayCache.ready(CONNECT_TIMEOUT_MS),
    ])
    const signInKey = await sessions.signInKey()
    return {
      tokens,
      oauthState,
      sessions,
      signInKey,
      rateLimits,
      consents,
      reportReplays,
      registrations,
      dpopReplayCache,
      close,
    }
  } catch (error) {
    await close()
    throw new Error(`cannot reach Redis at ${option.url}`, { cause: error })
  }
}
