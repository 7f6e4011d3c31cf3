/**
 * The token store's Lua scripts. Each runs atomically on the server, and each publishes the changed
 * hash in the same step as the write: no instance can see the new value without the invalidation
 * being on its way. The message is `HASH WRITER`: the writing instance has already dropped its own
 * entry when the write returned, so it skips its own messages (which would otherwise arrive late and
 * evict a record it had just read again).
 */

/*
 * Every script touches one key, so it runs on a Redis Cluster as on one server: a token's record,
 * its id index and its owner's set may sit in three slots (a save writes them in turn, see
 * RedisTokenStore.save).
 */

/**
 * Claims a token id for a hash. KEYS: id index. ARGV: hash. Answers 1 when claimed now, 2 when it
 * already pointed to this hash (a save that stopped half way, or the record exists), 0 when
 * another hash holds it.
 */
export const CLAIM_ID = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return 2 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`

/** Gives a claimed id back, only if it still points to this hash. KEYS: id index. ARGV: hash. */
export const RELEASE_ID = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`

/**
 * Adds a record. KEYS: record (by hash). ARGV: JSON, channel, message. Answers `hash` when that
 * key is taken, else `ok`.
 */
export const SAVE_TOKEN = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'hash' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
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

/**
 * Rotation's second step: turns the record a rotation replaced into an alias of the new record's
 * hash (`alias:HASH`), only if it is still exactly the text the caller read (a revocation that came
 * first wins), and lets Redis drop it once the overlap is over. KEYS: the replaced record. ARGV:
 * expected JSON, alias, time to live (ms), channel, message. Answers 1, or 0 when it changed.
 */
export const ALIAS_TOKEN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`

/**
 * Points a token id at its rotated record, only if it still points to the replaced one. KEYS: id
 * index. ARGV: replaced hash, new hash. Answers 1, or 0 when it points elsewhere.
 */
export const REPOINT_ID = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`

/** Deletes a record key only if it holds exactly this text (an old alias). KEYS: key. ARGV: text. */
export const DELETE_IF = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`
