//! The Lua scripts that make each check-and-write atomic in Redis. They live
//! apart from the adapter so their argument order sits next to the code
//! that reads it. Versions and epochs travel as decimal strings computed in
//! Rust and are compared as strings or small numbers, so Lua's doubles never
//! round a stored value.

use redis::Script;

/// KEYS: game, events, deadlines, outbox, games in play (all of the game's
/// bucket, so one hash slot on a cluster).
/// ARGV: expected version, epoch, new version, record, due ms or "",
/// finished "1"/"0", expire ms or "", history cap, game id, the game's entry
/// in the games in play or "" for none, events...
///
/// The epoch is checked before the version so that a stale owner learns at
/// once to let go of the game instead of reloading and retrying.
const COMMIT: &str = r#"
local stored = redis.call('HMGET', KEYS[1], 'version', 'epoch')
local version, epoch = stored[1], stored[2]
if version then
  if tonumber(ARGV[2]) < tonumber(epoch) then
    return {'epoch', epoch}
  end
  if version ~= ARGV[1] then
    return {'version', version}
  end
elseif ARGV[1] ~= '0' then
  return {'version', '0'}
end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'epoch', ARGV[2], 'record', ARGV[4])
for i = 11, #ARGV do
  redis.call('RPUSH', KEYS[2], ARGV[i])
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[8]), -1)
if ARGV[5] == '' then
  redis.call('ZREM', KEYS[3], ARGV[9])
else
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[9])
end
if ARGV[10] == '' then
  redis.call('HDEL', KEYS[5], ARGV[9])
else
  redis.call('HSET', KEYS[5], ARGV[9], ARGV[10])
end
if ARGV[6] == '1' then
  local now = redis.call('TIME')
  redis.call('ZADD', KEYS[4], 'NX', now[1] * 1000 + math.floor(now[2] / 1000), ARGV[9])
end
-- A finished game waiting in the outbox never expires: it keeps its time
-- to live in the hash, and publishing starts the countdown.
if ARGV[7] == '' then
  redis.call('HDEL', KEYS[1], 'ttl_ms')
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
elseif redis.call('ZSCORE', KEYS[4], ARGV[9]) then
  redis.call('HSET', KEYS[1], 'ttl_ms', ARGV[7])
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
return {'ok'}
"#;

/// KEYS: outbox, game, events. ARGV: game id.
///
/// Takes the game out of the outbox and starts the time to live its last
/// commit asked for.
const MARK_PUBLISHED: &str = r#"
redis.call('ZREM', KEYS[1], ARGV[1])
local ttl = redis.call('HGET', KEYS[2], 'ttl_ms')
if ttl then
  redis.call('HDEL', KEYS[2], 'ttl_ms')
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
return 1
"#;

/// KEYS: game, events. ARGV: the version the caller has.
///
/// The list holds the last `LLEN` events, so the first one held is at
/// version `current - LLEN + 1`.
const EVENTS_AFTER: &str = r#"
local current = redis.call('HGET', KEYS[1], 'version')
if not current then
  return {'missing'}
end
local version, after = tonumber(current), tonumber(ARGV[1])
if after >= version then
  return {'events', current, {}}
end
local first = version - redis.call('LLEN', KEYS[2]) + 1
if after + 1 < first then
  return {'gap', current}
end
return {'events', current, redis.call('LRANGE', KEYS[2], after + 1 - first, -1)}
"#;

/// The store's clock inside a script, unix ms, and a whole number of ms as
/// a decimal string (Lua's `tostring` may write a large one with an
/// exponent).
const CLOCK: &str = r#"
local function now_ms()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
local function decimal(n)
  return string.format('%.0f', n)
end
-- A lease field holds '<epoch> <expires ms> <addr>'.
local function lease(raw)
  if not raw then
    return nil
  end
  local epoch, expires, addr = string.match(raw, '^(%d+) (%d+) (.*)$')
  if not epoch then
    return nil
  end
  return {epoch = epoch, expires = tonumber(expires), addr = addr}
end
"#;

/// KEYS: membership hash. ARGV: shard id, addr, ttl ms.
///
/// The hash holds the epoch counter (`epoch`) and each shard's lease
/// (`lease:<id>`) with its expiry on the store's clock, so membership is
/// one key: one slot on a cluster, and no key named inside a script.
const REGISTER: &str = r#"
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
local expires = now_ms() + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'lease:' .. ARGV[1], epoch .. ' ' .. decimal(expires) .. ' ' .. ARGV[2])
return epoch
"#;

/// KEYS: membership hash. ARGV: shard id, epoch, ttl ms.
const RENEW: &str = r#"
local field = 'lease:' .. ARGV[1]
local held = lease(redis.call('HGET', KEYS[1], field))
if not held or held.epoch ~= ARGV[2] then
  return 0
end
local now = now_ms()
if held.expires <= now then
  redis.call('HDEL', KEYS[1], field)
  return 0
end
redis.call('HSET', KEYS[1], field, held.epoch .. ' ' .. decimal(now + tonumber(ARGV[3])) .. ' ' .. held.addr)
return 1
"#;

/// KEYS: membership hash. ARGV: shard id, epoch.
const DEREGISTER: &str = r#"
local field = 'lease:' .. ARGV[1]
local held = lease(redis.call('HGET', KEYS[1], field))
if held and held.epoch == ARGV[2] then
  redis.call('HDEL', KEYS[1], field)
end
return 0
"#;

/// KEYS: membership hash.
///
/// Reads and prunes in one step, so a shard that registers while another
/// process lists members is never pruned by mistake.
const MEMBERS: &str = r#"
local live = {}
local now = now_ms()
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local shard = string.match(fields[i], '^lease:(.*)$')
  if shard then
    local held = lease(fields[i + 1])
    if held and held.expires > now then
      table.insert(live, {shard, held.addr, held.epoch})
    else
      redis.call('HDEL', KEYS[1], fields[i])
    end
  end
end
return live
"#;

/// KEYS: deadlines. ARGV: game id, the deadline it must still have, the new
/// one. Returns 1 when moved.
const POSTPONE: &str = r#"
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if current and tonumber(current) == tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
"#;

/// KEYS: the player's seats.
/// ARGV: game id, ttl ms.
///
/// Each seat is scored by its expiry in Redis's time; the key lives as long
/// as its latest seat.
const NOTE_SEAT: &str = r#"
local now = now_ms()
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', decimal(now))
redis.call('ZADD', KEYS[1], decimal(now + ttl), ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
"#;

/// KEYS: the player's seats.
/// ARGV: the most to list.
const SEATS_OF: &str = r#"
local now = now_ms()
return redis.call('ZRANGE', KEYS[1], '+inf', '(' .. decimal(now), 'BYSCORE', 'REV', 'LIMIT', 0, ARGV[1])
"#;

/// The scripts, hashed once; redis-rs sends `EVALSHA` and falls back to
/// loading the script when Redis has forgotten it.
#[derive(Clone, Debug)]
pub(super) struct Scripts {
    pub commit: Script,
    pub events_after: Script,
    pub register: Script,
    pub renew: Script,
    pub deregister: Script,
    pub members: Script,
    pub postpone: Script,
    pub mark_published: Script,
    pub note_seat: Script,
    pub seats_of: Script,
}

impl Scripts {
    pub fn new() -> Scripts {
        Scripts {
            commit: Script::new(COMMIT),
            events_after: Script::new(EVENTS_AFTER),
            register: Script::new(&format!("{CLOCK}{REGISTER}")),
            renew: Script::new(&format!("{CLOCK}{RENEW}")),
            deregister: Script::new(&format!("{CLOCK}{DEREGISTER}")),
            members: Script::new(&format!("{CLOCK}{MEMBERS}")),
            postpone: Script::new(POSTPONE),
            mark_published: Script::new(MARK_PUBLISHED),
            note_seat: Script::new(&format!("{CLOCK}{NOTE_SEAT}")),
            seats_of: Script::new(&format!("{CLOCK}{SEATS_OF}")),
        }
    }
}
