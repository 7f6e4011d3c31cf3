/**
 * The OAuth state store's Lua scripts. Records are Redis hashes: `v` (version), `r` (retainUntil),
 * `d` (the JSON record), plus `u` (user-code hash) on device grants and `t` (space-separated token
 * hashes) on refresh families, so that the scripts compare and index without parsing JSON.
 *
 * Every `replace` is a compare-and-set on `v`: it writes only over version `next - 1`, atomically,
 * which is what makes a code or device code redeem once across instances. Redis expiry (PX) follows
 * `retainUntil`: set from the record's retention on save, moved by the change of `retainUntil` on a
 * replace. Index keys expire with their record.
 */

// Moves a key's expiry by the change of its retainUntil (the store's clock may be injected, so
// expiry is kept relative to what Redis already holds, never computed from an absolute date).
const EXTEND = `
local function extend(key, oldRetain, newRetain)
  local ttl = redis.call('PTTL', key)
  if ttl > 0 then
    local next = ttl + tonumber(newRetain) - tonumber(oldRetain)
    if next < 1 then next = 1 end
    redis.call('PEXPIRE', key, string.format('%d', next))
  end
end
`

/** KEYS: code. ARGV: v, r, d, ttl. Answers 0 when the hash is taken. */
export const SAVE_CODE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'r', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`

/** KEYS: code. ARGV: v, r, d. Answers 1, or 0 when the stored version is not v - 1 (or it is gone). */
export const REPLACE_CODE = `${EXTEND}
local current = redis.call('HMGET', KEYS[1], 'v', 'r')
if not current[1] or tonumber(current[1]) ~= tonumber(ARGV[1]) - 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'r', ARGV[2], 'd', ARGV[3])
extend(KEYS[1], current[2], ARGV[2])
return 1
`

/**
 * KEYS: grant, user-code index. ARGV: v, r, u, d, ttl, createdAt, grant key prefix, device-code hash.
 * Answers -1 when the device-code hash is taken, 0 when a grant retained at createdAt holds the
 * user code, else 1.
 */
export const SAVE_GRANT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local holder = redis.call('GET', KEYS[2])
if holder then
  local retainUntil = redis.call('HGET', ARGV[7] .. holder, 'r')
  if retainUntil and tonumber(ARGV[6]) < tonumber(retainUntil) then return 0 end
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'r', ARGV[2], 'u', ARGV[3], 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('SET', KEYS[2], ARGV[8], 'PX', ARGV[5])
return 1
`

/** KEYS: an index key. ARGV: the prefix of the records it points to. Answers the record's JSON or nil. */
export const FIND_INDEXED = `
local target = redis.call('GET', KEYS[1])
if not target then return false end
return redis.call('HGET', ARGV[1] .. target, 'd')
`

/**
 * KEYS: grant, its user-code index. ARGV: v, r, u, d, device-code hash. Answers 1, 0 on a version
 * mismatch, -1 when the user code would change.
 */
export const REPLACE_GRANT = `${EXTEND}
local current = redis.call('HMGET', KEYS[1], 'v', 'r', 'u')
if not current[1] or tonumber(current[1]) ~= tonumber(ARGV[1]) - 1 then return 0 end
if current[3] ~= ARGV[3] then return -1 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'r', ARGV[2], 'd', ARGV[4])
extend(KEYS[1], current[2], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 and redis.call('GET', KEYS[2]) == ARGV[5] then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`

/**
 * KEYS: family. ARGV: v, r, t, d, ttl, id, token index prefix. Answers -1 when the id is taken,
 * -2 when a token hash belongs to another family, else 1.
 */
export const SAVE_FAMILY = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
for hash in string.gmatch(ARGV[3], '%S+') do
  local owner = redis.call('GET', ARGV[7] .. hash)
  if owner and owner ~= ARGV[6] then return -2 end
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'r', ARGV[2], 't', ARGV[3], 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
for hash in string.gmatch(ARGV[3], '%S+') do
  redis.call('SET', ARGV[7] .. hash, ARGV[6], 'PX', ARGV[5])
end
return 1
`

/**
 * KEYS: family. ARGV: v, r, t, d, id, token index prefix. Answers 1, 0 on a version mismatch, -2
 * when a new token hash belongs to another family. Re-indexes: hashes dropped from the list are
 * forgotten, new ones point here.
 */
export const REPLACE_FAMILY = `${EXTEND}
local current = redis.call('HMGET', KEYS[1], 'v', 'r', 't')
if not current[1] or tonumber(current[1]) ~= tonumber(ARGV[1]) - 1 then return 0 end
for hash in string.gmatch(ARGV[3], '%S+') do
  local owner = redis.call('GET', ARGV[6] .. hash)
  if owner and owner ~= ARGV[5] then return -2 end
end
extend(KEYS[1], current[2], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
for hash in string.gmatch(current[3] or '', '%S+') do
  if redis.call('GET', ARGV[6] .. hash) == ARGV[5] then redis.call('DEL', ARGV[6] .. hash) end
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'r', ARGV[2], 't', ARGV[3], 'd', ARGV[4])
for hash in string.gmatch(ARGV[3], '%S+') do
  if ttl > 0 then
    redis.call('SET', ARGV[6] .. hash, ARGV[5], 'PX', ttl)
  else
    redis.call('SET', ARGV[6] .. hash, ARGV[5])
  end
end
return 1
`

/**
 * KEYS: counter. ARGV: now, the reset instant of a new window, ttl. Counts one more failure in the
 * current window, or opens a new one; answers the count.
 */
export const RECORD_FAILURE = `
local current = redis.call('HMGET', KEYS[1], 'c', 'reset')
if current[1] and tonumber(ARGV[1]) < tonumber(current[2]) then
  return redis.call('HINCRBY', KEYS[1], 'c', 1)
end
redis.call('HSET', KEYS[1], 'c', 1, 'reset', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`
