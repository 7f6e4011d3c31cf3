/**
 * Shared stores on Redis for a service that runs on several instances (docs/deployment.md): the token store
 * with its invalidated per-instance cache, the OAuth state store and the DPoP replay cache. Needs the optional peer
 * dependency `ioredis` (5.x). The connection helpers open a connection with the stores' fail-closed
 * settings (no offline queue, bounded command timeouts, cluster slot refresh), for a host's own
 * data on the same Redis — the reference server keeps its settings sessions that way.
 *
 * @packageDocumentation
 * @module data-access-policy/redis
 */
export { type ClusterSeed, parseClusterUrl as parseRedisClusterUrl } from './cluster-url.js'
export {
  closeConnection as closeRedisConnection,
  openConnection as openRedisConnection,
  type RedisClusterTarget,
  type RedisConnection,
  type RedisTarget,
  whenReady as redisReady,
} from './connection.js'
export { RedisDpopReplayCache, type RedisDpopReplayCacheOptions } from './redis-dpop-replay-cache.js'
export { RedisOAuthStateStore, type RedisOAuthStateStoreOptions } from './redis-oauth-state-store.js'
export { RedisTokenStore, type RedisTokenStoreOptions } from './redis-token-store.js'
