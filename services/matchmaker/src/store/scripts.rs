//! The Lua scripts that make each check-and-write of the matchmaker atomic
//! in Redis. Every script touches the keys of one hash tag only (one
//! pool's, or one player's), so each runs inside one Redis Cluster slot.
//! They live apart from the store so their argument order sits next to the
//! code that reads it; see `store.rs` for the key layout.

use redis::Script;

/// Store time in unix ms, as a decimal string (no float formatting).
const NOW_MS: &str = r#"
local function now_ms()
  local t = redis.call('TIME')
  return string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end
"#;

/// KEYS: player hash, player busy lock.
/// ARGV: new seek id, pool name, spec, force ("1": replace even an equal seek), ttl ms.
/// Returns `{'busy'}`, `{'same', seek, pool, colors}` or `{'new', old seek, old pool, colors}`.
const PLAYER_SEEK: &str = r#"
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'busy'}
end
local cur = redis.call('HMGET', KEYS[1], 'seek', 'pool', 'spec', 'colors')
local colors = cur[4] or ''
if cur[1] and cur[3] == ARGV[3] and ARGV[4] ~= '1' then
  return {'same', cur[1], cur[2] or '', colors}
end
redis.call('HSET', KEYS[1], 'seek', ARGV[1], 'pool', ARGV[2], 'spec', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {'new', cur[1] or '', cur[2] or '', colors}
"#;

/// KEYS: player hash, player busy lock. ARGV: the seek id to clear, or '' for any.
/// Returns `{'busy'}` while a pairing holds the player, else `{}` or
/// `{'cleared', seek, pool}`: the seek pointer that was cleared. A seek
/// whose pointer is cleared this way can no longer be paired.
const PLAYER_CLEAR: &str = r#"
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'busy'}
end
local cur = redis.call('HMGET', KEYS[1], 'seek', 'pool')
if not cur[1] then
  return {}
end
if ARGV[1] ~= '' and cur[1] ~= ARGV[1] then
  return {}
end
redis.call('HDEL', KEYS[1], 'seek', 'pool', 'spec')
return {'cleared', cur[1], cur[2] or ''}
"#;

/// KEYS: player hash, player busy lock. ARGV: seek id, pairing id, ttl ms.
/// Returns 'ok' (locked for this pairing), 'busy' (another pairing holds
/// the player) or 'stale' (the seek is no longer the player's).
const PLAYER_LOCK: &str = r#"
local holder = redis.call('GET', KEYS[2])
if holder == ARGV[2] then
  return 'ok'
end
if holder then
  return 'busy'
end
if redis.call('HGET', KEYS[1], 'seek') ~= ARGV[1] then
  return 'stale'
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 'ok'
"#;

/// KEYS: player hash, player busy lock. ARGV: pairing id, consumed seek id or ''.
/// Drops the lock if this pairing holds it; a consumed seek leaves the
/// player's pointer if it is still there.
const PLAYER_UNLOCK: &str = r#"
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'seek') == ARGV[2] then
  redis.call('HDEL', KEYS[1], 'seek', 'pool', 'spec')
end
return 1
"#;

/// KEYS: player hash. ARGV: 'w' or 'b', how many to keep, ttl ms.
const PLAYER_COLOR: &str = r#"
local old = redis.call('HGET', KEYS[1], 'colors') or ''
local new = string.sub(ARGV[1] .. old, 1, tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'colors', new)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return new
"#;

/// KEYS: pool seeks, pool meta. ARGV: seek id, record.
/// Stores `<created ms>|<joined wave>|<record>` and returns the created ms.
const POOL_ADD: &str = r#"
local ms = now_ms()
local wave = redis.call('HGET', KEYS[2], 'wave') or '0'
redis.call('HSET', KEYS[1], ARGV[1], ms .. '|' .. wave .. '|' .. ARGV[2])
return ms
"#;

/// KEYS: pool lease, pool fence counter. ARGV: replica id, ttl ms.
/// Returns the lease token `<replica>:<fence>`, or false when another
/// replica holds the lease. A replica asking again for its own lease
/// extends it and gets the same token.
const LEASE_ACQUIRE: &str = r#"
local holder = redis.call('GET', KEYS[1])
local mine = ARGV[1] .. ':'
if holder then
  if string.sub(holder, 1, #mine) == mine then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return holder
  end
  return false
end
local fence = redis.call('INCR', KEYS[2])
local token = mine .. fence
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return token
"#;

/// KEYS: pool lease. ARGV: token, ttl ms. Returns 1 if still held.
const LEASE_RENEW: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"#;

/// KEYS: pool lease. ARGV: token.
const LEASE_RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"#;

/// KEYS: pool lease, pool meta, pool seeks, pool pending. ARGV: token.
/// Starts a wave under the lease: `{'ok', wave, now ms, seeks (flat
/// id/value pairs), pending (flat id/value pairs)}`, or `{'fenced'}`.
const BEGIN_WAVE: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {'fenced'}
end
local wave = redis.call('HINCRBY', KEYS[2], 'wave', 1)
local ms = now_ms()
redis.call('HSET', KEYS[2], 'last_wave_ms', ms)
return {'ok', tostring(wave), ms, redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4])}
"#;

/// KEYS: pool lease, pool seeks, pool pending.
/// ARGV: token, seek a, seek b, pairing id, pairing record.
/// Takes both seeks out of the pool and records the pairing, only if the
/// lease is still this holder's and both seeks are still there. Returns
/// 'ok' (also when this pairing was already recorded), 'gone' or 'fenced'.
const COMMIT_PAIR: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'fenced'
end
if redis.call('HEXISTS', KEYS[3], ARGV[4]) == 1 then
  return 'ok'
end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 or redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then
  return 'gone'
end
redis.call('HDEL', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
return 'ok'
"#;

/// KEYS: pool lease, pool pending. ARGV: token, pairing id, new record or '' to delete.
/// Returns 'ok', 'missing' or 'fenced'.
const UPDATE_PENDING: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'fenced'
end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  return 'missing'
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], ARGV[2])
else
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
end
return 'ok'
"#;

/// KEYS: the pool registry. ARGV: pool name. Marks the pool as seen now.
const POOL_SEEN: &str = r#"
redis.call('ZADD', KEYS[1], now_ms(), ARGV[1])
return 1
"#;

/// KEYS: the pool registry. ARGV: pool name, idle ms.
/// Forgets the pool if no seek arrived in it for `idle ms`.
const POOL_FORGET: &str = r#"
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if seen and tonumber(seen) + tonumber(ARGV[2]) < tonumber(now_ms()) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
"#;

/// KEYS: the replica registry. ARGV: replica id, ttl ms.
/// Renews this replica and returns the live ones.
const REPLICA_HEARTBEAT: &str = r#"
local ms = tonumber(now_ms())
redis.call('ZADD', KEYS[1], string.format('%d', ms + tonumber(ARGV[2])), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', ms))
return redis.call('ZRANGE', KEYS[1], 0, -1)
"#;

/// KEYS: a lobby bucket. ARGV: game id, player id or '' for any.
/// Removes the board and returns its record, or false.
const BOARD_CLOSE: &str = r#"
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then
  return false
end
if ARGV[2] ~= '' then
  local ok, board = pcall(cjson.decode, record)
  if not ok or board['player'] ~= ARGV[2] then
    return false
  end
end
redis.call('HDEL', KEYS[1], ARGV[1])
return record
"#;

/// Every script, compiled once.
#[derive(Debug)]
pub struct Scripts {
    pub player_seek: Script,
    pub player_clear: Script,
    pub player_lock: Script,
    pub player_unlock: Script,
    pub player_color: Script,
    pub pool_add: Script,
    pub lease_acquire: Script,
    pub lease_renew: Script,
    pub lease_release: Script,
    pub begin_wave: Script,
    pub commit_pair: Script,
    pub update_pending: Script,
    pub pool_seen: Script,
    pub pool_forget: Script,
    pub replica_heartbeat: Script,
    pub board_close: Script,
}

fn with_clock(body: &str) -> Script {
    Script::new(&format!("{NOW_MS}\n{body}"))
}

impl Scripts {
    pub fn new() -> Scripts {
        Scripts {
            player_seek: Script::new(PLAYER_SEEK),
            player_clear: Script::new(PLAYER_CLEAR),
            player_lock: Script::new(PLAYER_LOCK),
            player_unlock: Script::new(PLAYER_UNLOCK),
            player_color: Script::new(PLAYER_COLOR),
            pool_add: with_clock(POOL_ADD),
            lease_acquire: Script::new(LEASE_ACQUIRE),
            lease_renew: Script::new(LEASE_RENEW),
            lease_release: Script::new(LEASE_RELEASE),
            begin_wave: with_clock(BEGIN_WAVE),
            commit_pair: Script::new(COMMIT_PAIR),
            update_pending: Script::new(UPDATE_PENDING),
            pool_seen: with_clock(POOL_SEEN),
            pool_forget: with_clock(POOL_FORGET),
            replica_heartbeat: with_clock(REPLICA_HEARTBEAT),
            board_close: Script::new(BOARD_CLOSE),
        }
    }
}

impl Default for Scripts {
    fn default() -> Scripts {
        Scripts::new()
    }
}
