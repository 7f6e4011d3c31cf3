/**
 * Where the server keeps tokens and OAuth state (`--store`): in process memory (one instance), or
 * on a Redis server or Redis Cluster that several instances share (design §6, §9;
 * docs/deployment.md).
 */
import type { TokenStore } from '../../src/index.js'
import type { OAuthStateStore } from '../../src/oauth/index.js'
import type { StoreOption } from './flags.js'
import type { ReportReplayStore } from './leaks/report-replays.js'
import type { RateLimitStore } from './limits/rate-limits.js'
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
  /** Leak reports already acted on, so that a replay to any instance is refused. */
  readonly reportReplays: ReportReplayStore
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
): Promise<SharedStores | undefined> {
  if (option.kind === 'memory') return undefined
  // Loaded only here: a memory-store server never loads the Redis client.
  const [
    { RedisOAuthStateStore, RedisTokenStore },
    { RedisSessionStore },
    { RedisRateLimitStore },
    { RedisReportReplayStore },
  ] = await Promise.all([
    import('../../adapters/redis/index.js'),
    import('./web/redis-sessions.js'),
    import('./limits/redis-rate-limits.js'),
    import('./leaks/redis-report-replays.js'),
  ])
  const tokens = new RedisTokenStore({ redis: option.url })
  const oauthState = new RedisOAuthStateStore({ redis: option.url })
  const sessions = new RedisSessionStore(option.url, now)
  const rateLimits = new RedisRateLimitStore(option.url)
  const reportReplays = new RedisReportReplayStore(option.url)
  const close = async () => {
    await Promise.all([
      tokens.close(),
      oauthState.close(),
      sessions.close(),
      rateLimits.close(),
      reportReplays.close(),
    ])
  }
  try {
    await Promise.all([
      tokens.ready(CONNECT_TIMEOUT_MS),
      oauthState.ready(CONNECT_TIMEOUT_MS),
      sessions.ready(CONNECT_TIMEOUT_MS),
      rateLimits.ready(CONNECT_TIMEOUT_MS),
      reportReplays.ready(CONNECT_TIMEOUT_MS),
    ])
    return {
      tokens,
      oauthState,
      sessions,
      signInKey: await sessions.signInKey(),
      rateLimits,
      reportReplays,
      close,
    }
  } catch (error) {
    await close()
    throw new Error(`cannot reach Redis at ${option.url}`, { cause: error })
  }
}
