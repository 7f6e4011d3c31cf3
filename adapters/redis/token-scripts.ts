import { defineScript, type LuaScript, type RedisConnection } from './connection.js'

/**
 * The token store's Lua scripts. Each runs atomically on the server, and each publishes the changed
 * hash in the same step as the write: no instance can see the new value without the invalidation
 * being on its way. The message is `HASH WRITER`: the writing instance has already dropped its own
 * entry when the write returned, so it skips its own messages (which would otherwise arrive late and
 * evict a record it had just read again).
 */

/*
 * Every script touches one key, so it runs on a Redis Cluster as on one server: a token's record,
 * its id index and its owner's index may sit in three slots (a save writes them in turn, see
 * RedisTokenStore.save).
 *
 * Every key ends (`tokenRetainUntil`): a script that writes a key gives it the time to live its
 * caller computed from the record's end (ARGV `ttl`, ms; `0`: a live token without expiry, which
 * keeps no expiry), in the same step as the write, so no key is ever left without its end.
 */

// SET with the key's time to live, or without one (which also clears an earlier one).
const SET_WITH_TTL = `
local function setWithTtl(key, value, ttl)
  if tonumber(ttl) > 0 then
    redis.call('SET', key, value, 'PX', ttl)
  else
    redis.call('SET', key, value)
  end
end
`

/**
 * Claims a token id for a hash. KEYS: id index. ARGV: hash, ttl. Answers 1 when claimed now, 2 when
 * it already pointed to this hash (a save that stopped half way, or the record exists), 0 when
 * another hash holds it.
 */
export const CLAIM_ID = `${SET_WITH_TTL}
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return 2 end
if holder then return 0 end
setWithTtl(KEYS[1], ARGV[1], ARGV[2])
return 1
`

/**
 * Gives an index entry (an id's hash) the time to live of its record's new end, only if it still
 * holds this value. KEYS: the index key. ARGV: value, ttl. Answers 1, or 0 when it holds another.
 */
export const EXPIRE_IF = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('PERSIST', KEYS[1])
end
return 1
`

/**
 * Files a hash in its owner's index, a sorted set scored by the record's end (`+inf`: none), and
 * gives the index the time to live of its latest end. KEYS: owner index. ARGV: hash, end, now,
 * grace (ms), a hash to take out (a rotation's replaced one) or ''; an empty hash files nothing.
 * Answers whether the hash was added (1 or 0), then up to 8 hashes whose end is at or before now:
 * records to remove (`UNINDEX_IF_ENDED` takes them out afterwards).
 */
export const INDEX_TOKEN = `
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[1], ARGV[5]) end
local added = 0
if ARGV[1] ~= '' then added = redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if latest[2] == nil then return {added} end
if latest[2] == 'inf' then
  redis.call('PERSIST', KEYS[1])
else
  local ttl = tonumber(latest[2]) - tonumber(ARGV[3]) + tonumber(ARGV[4])
  if ttl < 1 then ttl = 1 end
  redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl))
end
local ended = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[3], 'LIMIT', 0, 8)
table.insert(ended, 1, added)
return ended
`

/**
 * Takes a hash out of its owner's index if its end is still at or before now (a change since may
 * have moved it). KEYS: owner index. ARGV: hash, now. Answers 1 when taken out.
 */
export const UNINDEX_IF_ENDED = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or score == 'inf' or tonumber(score) > tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
`

/** Gives a claimed id back, only if it still points to this hash. KEYS: id index. ARGV: hash. */
export const RELEASE_ID = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`

/**
 * Adds a record. KEYS: record (by hash). ARGV: JSON, channel, message, ttl. Answers `hash` when
 * that key is taken, else `ok`.
 */
export const SAVE_TOKEN = `${SET_WITH_TTL}
if redis.call('EXISTS', KEYS[1]) == 1 then return 'hash' end
setWithTtl(KEYS[1], ARGV[1], ARGV[4])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 'ok'
`

/**
 * Replaces a record only if it is still exactly the text the caller read and checked (compare-and-
 * set), so a rule checked against that text (a revocation is permanent) holds for the write.
 * KEYS: record. ARGV: expected JSON, new JSON, channel, message, ttl (of the new record's end, so
 * that a touch keeps it and a revocation sets it). Answers 1, or 0 when it changed.
 */
export const REPLACE_TOKEN = `${SET_WITH_TTL}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
setWithTtl(KEYS[1], ARGV[2], ARGV[5])
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
 * index. ARGV: replaced hash, new hash, ttl. Answers 1, or 0 when it points elsewhere.
 */
export const REPOINT_ID = `${SET_WITH_TTL}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
setWithTtl(KEYS[1], ARGV[2], ARGV[3])
return 1
`

/**
 * Deletes a key only if it holds exactly this text (an old alias, a record past its end, an index
 * entry of one). KEYS: key. ARGV: text.
 */
export const DELETE_IF = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`

/** The scripts that keep a record's id, aliases and leftovers, by the store's name for each. */
export const INDEX_SCRIPTS = {
  claimId: CLAIM_ID,
  releaseId: RELEASE_ID,
  alias: ALIAS_TOKEN,
  repointId: REPOINT_ID,
  deleteIf: DELETE_IF,
  expireIf: EXPIRE_IF,
} as const

/**
 * Defines each script on the connection, as a command named after it.
 *
 * @example
 * const scripts = defineScripts(client, INDEX_SCRIPTS)
 * await scripts.deleteIf([key], [text])
 */
export function defineScripts<T extends Record<string, string>>(
  client: RedisConnection,
  scripts: T,
): Record<keyof T, LuaScript> {
  const defined: Partial<Record<keyof T, LuaScript>> = {}
  for (const [name, lua] of Object.entries(scripts) as [keyof T & string, string][]) {
    defined[name] = defineScript(client, `dapToken_${name}`, lua)
  }
  return defined as Record<keyof T, LuaScript>
}
