/**
 * The token store's Lua scripts. Each runs atomically on the server, and each publishes the changed
 * hash in the same step as the write: no instance can see the new value without the invalidation
 * being on its way. The message is `HASH WRITER`: the writing instance has already dropped its own
 * entry when the write returned, so it skips its own messages (which would otherwise arrive late and
 * evict a record it had just read again).
 */

/**
 * Adds a record. KEYS: record (by hash), id index, owner set. ARGV: JSON, hash, channel, message.
 * Answers `id` or `hash` when that key is taken, else `ok`.
 */
export const SAVE_TOKEN = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 'id' end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'hash' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 'ok'
`

/**
 * Replaces a record only if it is still exactly the text the caller read and checked (compare-and-
 * set), so a rule checked against that text (a revocation is permanent) holds for the write.
 * KEYS: record. ARGV: expected JSON, new JSON, channel, message. Answers 1, or 0 when it changed.
 */
export const REPLACE_TOKEN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`
