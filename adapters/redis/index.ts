/**
 * Shared stores on Redis for a service that runs on several instances (design §6): the token store
 * with its invalidated per-instance cache, and the OAuth state store. Needs the optional peer
 * dependency `ioredis` (5.x).
 *
 * @packageDocumentation
 * @module data-access-policy/redis
 */
export type { RedisClusterTarget, RedisTarget } from './connection.js'
export { RedisOAuthStateStore, type RedisOAuthStateStoreOptions } from './redis-oauth-state-store.js'
export { RedisTokenStore, type RedisTokenStoreOptions } from './redis-token-store.js'
