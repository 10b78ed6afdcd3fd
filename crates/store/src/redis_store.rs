//! The production store: Redis, reached through a connection manager that
//! reconnects on its own. Every check-and-write is one Lua script, so Redis
//! runs it atomically and a refused commit changes nothing.
//!
//! Key layout, every key starting with the configured prefix, where `<b>`
//! is the game's bucket (one of [`GAME_BUCKETS`], from its id):
//! - `game:{g<b>}:<gid>`: hash with `version`, `epoch`, `record`;
//! - `events:{g<b>}:<gid>`: list of the game's last events, oldest first;
//! - `deadlines:{g<b>}`: zset of the bucket's game ids scored by due time
//!   (store ms);
//! - `outbox:{g<b>}`: zset of the bucket's finished, unpublished game ids
//!   scored by finish time;
//! - `playing:{g<b>}`: hash of the bucket's games being played, each to
//!   its entry in the list of games in play (set and removed by commits);
//! - `code:<CODE>`: string holding a game id, with a TTL;
//! - `seats:<player>`: zset of the games a player was seated in, scored by
//!   when each note expires (store ms), with the TTL of the latest;
//! - `members`: hash with the membership epoch counter (`epoch`) and each
//!   shard's lease (`lease:<id>`: epoch, expiry in store ms, address).
//!
//! The braces give a game's keys and its bucket's sets one Redis Cluster
//! hash slot, so every script runs inside one slot and names every key it
//! touches; the same code runs on one Redis and on a cluster. The sweep
//! reads the buckets' sets side by side and merges them.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use fogblast_proto::ids::{GameId, PlayerId, ShardId};
use fogblast_redis::{bucket, PrefixedRedis};
use redis::Value;

use crate::memory::{new_version, ttl_ms, DEFAULT_HISTORY};
use crate::{
    Commit, CommitError, EventsAfter, GameStore, Member, Membership, StoreError, StoredGame, MAX_IN_PLAY_LISTED,
    MAX_SEATS_LISTED,
};

mod scripts;
mod value;

use value::{array, bytes, pairs, text, uint};

/// How many buckets the games are spread over: the most primaries of a
/// cluster the games can use. Fixed, since every process must agree.
pub const GAME_BUCKETS: u64 = 64;

/// The bucket of a game's keys.
pub fn game_bucket(game: &GameId) -> u64 {
    bucket(game.as_str(), GAME_BUCKETS)
}

/// The longest `WAIT`: below the connection's 500 ms answer deadline.
const MAX_WAIT: Duration = Duration::from_millis(400);

/// When a commit counts as written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Once the primary applied it in memory. A crash of the primary loses
    /// what its replicas and its disk had yet to get (with `appendfsync
    /// everysec`, about the last second).
    #[default]
    Applied,
    /// Once `replicas` replicas confirmed it (`WAIT`) within `timeout` (at
    /// most 400 ms); a
    /// commit they do not confirm in time is answered as a store failure,
    /// so nothing is acknowledged that a failover to a replica could lose.
    Replicated { replicas: u32, timeout: Duration },
}

/// Live games, membership and codes in Redis.
#[derive(Clone)]
pub struct RedisStore {
    redis: PrefixedRedis,
    history: usize,
    scripts: scripts::Scripts,
    durability: Durability,
    clock: Arc<SyncedClock>,
}

/// The store's clock as last read, carried forward on this machine's
/// monotonic clock, so a command need not ask Redis the time: Redis's
/// `TIME` is read again once the reading is older than `every` (zero: on
/// every call), and never passed by more than the time since the reading.
/// The readings it hands out never go backwards.
#[derive(Debug, Default)]
struct SyncedClock {
    every: Duration,
    state: std::sync::Mutex<ClockState>,
}

#[derive(Debug, Default)]
struct ClockState {
    /// The store's time at the moment (half way through the round trip)
    /// it was read.
    synced: Option<(u64, Instant)>,
    /// The latest reading handed out.
    last: u64,
}

impl SyncedClock {
    fn estimate(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (store_ms, at) = state.synced?;
        let elapsed = at.elapsed();
        if elapsed >= self.every {
            return None;
        }
        let now = (store_ms + elapsed.as_millis() as u64).max(state.last);
        state.last = now;
        Some(now)
    }

    fn record(&self, store_ms: u64, sent: Instant, answered: Instant) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.synced = Some((store_ms, sent + (answered - sent) / 2));
        let now = store_ms.max(state.last);
        state.last = now;
        now
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.redis.prefix())
            .field("history", &self.history)
            .field("durability", &self.durability)
            .field("clock_sync", &self.clock.every)
            .finish()
    }
}

fn redis_error(error: redis::RedisError) -> StoreError {
    StoreError::caused_by("redis", error)
}

impl RedisStore {
    /// Connects to the Redis at `url`, keeping every key under `key_prefix`.
    pub async fn connect(url: &str, key_prefix: &str) -> Result<RedisStore, StoreError> {
        let redis = PrefixedRedis::connect(url, key_prefix).await.map_err(redis_error)?;
        Ok(RedisStore {
            redis,
            history: DEFAULT_HISTORY,
            scripts: scripts::Scripts::new(),
            durability: Durability::Applied,
            clock: Arc::default(),
        })
    }

    /// Reads Redis's clock at most once per `every`, and carries the last
    /// reading forward in between (see [`GameStore::now_ms`]); zero reads
    /// it on every call.
    pub fn with_clock_sync(mut self, every: Duration) -> Self {
        self.clock = Arc::new(SyncedClock { every, ..SyncedClock::default() });
        self
    }

    /// Counts a commit as written only as `durability` says.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Waits until what this store wrote to `key`'s node reached the
    /// replicas its durability asks for. Every command to a node goes over
    /// one connection, so one `WAIT` covers every write before it; on a
    /// cluster it asks only the primary serving `key`, so a primary that
    /// lost its replica holds up its own slots' commits and no others.
    async fn replicated(&self, key: &str) -> Result<(), StoreError> {
        let Durability::Replicated { replicas, timeout } = self.durability else { return Ok(()) };
        // Within the client's own 500 ms answer deadline, so a slow replica
        // is told apart from a dead connection.
        let timeout = timeout.min(MAX_WAIT);
        let wait = redis::cmd("WAIT").arg(replicas).arg(ttl_ms(timeout)).clone();
        let reached = uint(&self.redis.query_at::<Value>(key, &wait).await.map_err(redis_error)?)?;
        if reached < u64::from(replicas) {
            return Err(StoreError::new(format!(
                "the write reached {reached} of {replicas} replicas within {} ms",
                timeout.as_millis()
            )));
        }
        Ok(())
    }

    /// Keeps the last `n` events of each game (at least one).
    pub fn with_history(mut self, n: usize) -> Self {
        self.history = n.max(1);
        self
    }

    fn bucket_key(&self, kind: &str, bucket: u64) -> String {
        self.redis.tagged(kind, &format!("g{bucket}"))
    }

    fn game_key(&self, game: &GameId) -> String {
        format!("{}:{game}", self.bucket_key("game", game_bucket(game)))
    }

    fn events_key(&self, game: &GameId) -> String {
        format!("{}:{game}", self.bucket_key("events", game_bucket(game)))
    }

    fn deadlines_key(&self, game: &GameId) -> String {
        self.bucket_key("deadlines", game_bucket(game))
    }

    fn outbox_key(&self, game: &GameId) -> String {
        self.bucket_key("outbox", game_bucket(game))
    }

    fn in_play_key(&self, game: &GameId) -> String {
        self.bucket_key("playing", game_bucket(game))
    }

    fn members_key(&self) -> String {
        self.redis.key("members")
    }

    /// Runs `read(key of bucket b)` on every bucket's `kind` set and merges
    /// the `(member, score)` pairs by score (then id), as one sorted set
    /// would list them.
    async fn merged(&self, kind: &str, read: impl Fn(String) -> redis::Cmd) -> Result<Vec<(GameId, u64)>, StoreError> {
        let cmds: Vec<redis::Cmd> = (0..GAME_BUCKETS).map(|b| read(self.bucket_key(kind, b))).collect();
        let replies = self.redis.query_each(&cmds).await.map_err(redis_error)?;
        let mut all = Vec::new();
        for reply in &replies {
            for (game, score) in pairs(reply)? {
                all.push((uint(score)?, game_id(game)?));
            }
        }
        all.sort();
        Ok(all.into_iter().map(|(score, game)| (game, score)).collect())
    }

    fn seats_key(&self, player: &PlayerId) -> String {
        self.redis.key(&format!("seats:{player}"))
    }

    fn code_key(&self, code: &str) -> String {
        self.redis.key(&format!("code:{code}"))
    }

    async fn query(&self, cmd: &redis::Cmd) -> Result<Value, StoreError> {
        self.redis.query(cmd).await.map_err(redis_error)
    }

    async fn run(&self, invocation: &redis::ScriptInvocation<'_>) -> Result<Value, StoreError> {
        self.redis.run(invocation).await.map_err(redis_error)
    }
}

fn game_id(raw: &Value) -> Result<GameId, StoreError> {
    let raw = text(raw)?;
    GameId::parse(&raw).map_err(|e| StoreError::caused_by(&format!("bad game id {raw:?} in redis"), e))
}

#[async_trait]
impl Membership for RedisStore {
    async fn register(&self, shard: &ShardId, addr: &str, ttl: Duration) -> Result<u64, StoreError> {
        let mut invocation = self.scripts.register.prepare_invoke();
        invocation.key(self.members_key()).arg(shard.as_str()).arg(addr).arg(ttl_ms(ttl));
        let epoch = uint(&self.run(&invocation).await?)?;
        // An epoch the replicas had not got could be handed out again
        // after a failover, to another shard: two owners at one epoch.
        self.replicated(&self.members_key()).await?;
        Ok(epoch)
    }

    async fn renew(&self, shard: &ShardId, epoch: u64, ttl: Duration) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.renew.prepare_invoke();
        invocation.key(self.members_key()).arg(shard.as_str()).arg(epoch).arg(ttl_ms(ttl));
        let reply = self.run(&invocation).await?;
        Ok(uint(&reply)? == 1)
    }

    async fn deregister(&self, shard: &ShardId, epoch: u64) -> Result<(), StoreError> {
        let mut invocation = self.scripts.deregister.prepare_invoke();
        invocation.key(self.members_key()).arg(shard.as_str()).arg(epoch);
        self.run(&invocation).await.map(drop)
    }

    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        let mut invocation = self.scripts.members.prepare_invoke();
        invocation.key(self.members_key());
        let reply = self.run(&invocation).await?;
        let mut members = Vec::new();
        for entry in array(&reply)? {
            let [shard, addr, epoch] = array(entry)? else {
                return Err(StoreError::new(format!("unexpected member entry {entry:?}")));
            };
            let shard = text(shard)?;
            let shard = ShardId::parse(&shard)
                .map_err(|e| StoreError::caused_by(&format!("bad shard id {shard:?} in redis"), e))?;
            members.push(Member { shard, addr: text(addr)?, epoch: uint(epoch)? });
        }
        Ok(members)
    }
}

#[async_trait]
impl GameStore for RedisStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        if let Some(now) = self.clock.estimate() {
            return Ok(now);
        }
        let sent = Instant::now();
        let reply = self.query(&redis::cmd("TIME")).await?;
        let answered = Instant::now();
        let [secs, micros] = array(&reply)? else {
            return Err(StoreError::new(format!("unexpected TIME reply {reply:?}")));
        };
        let micros = uint(micros)?;
        let store_ms = uint(secs)?
            .checked_mul(1000)
            .and_then(|ms| ms.checked_add(micros / 1000))
            .ok_or_else(|| StoreError::new("TIME out of range"))?;
        Ok(self.clock.record(store_ms, sent, answered))
    }

    async fn confirm_durable(&self, game: &GameId) -> Result<(), StoreError> {
        self.replicated(&self.game_key(game)).await
    }

    async fn load(&self, game: &GameId) -> Result<Option<StoredGame>, StoreError> {
        let reply =
            self.query(redis::cmd("HMGET").arg(self.game_key(game)).arg("version").arg("epoch").arg("record")).await?;
        let [version, epoch, record] = array(&reply)? else {
            return Err(StoreError::new(format!("unexpected HMGET reply {reply:?}")));
        };
        if *version == Value::Nil {
            return Ok(None);
        }
        Ok(Some(StoredGame { version: uint(version)?, epoch: uint(epoch)?, record: bytes(record)? }))
    }

    async fn commit(&self, commit: Commit) -> Result<u64, CommitError> {
        if commit.events.is_empty() && commit.expected_version == 0 {
            return Err(StoreError::new("a new game is committed with at least one event").into());
        }
        let version = new_version(commit.expected_version, commit.events.len())?;
        let mut invocation = self.scripts.commit.prepare_invoke();
        invocation
            .key(self.game_key(&commit.game))
            .key(self.events_key(&commit.game))
            .key(self.deadlines_key(&commit.game))
            .key(self.outbox_key(&commit.game))
            .key(self.in_play_key(&commit.game))
            .arg(commit.expected_version)
            .arg(commit.epoch)
            .arg(version)
            .arg(commit.record)
            .arg(commit.due_at_ms.map(|due| due.to_string()).unwrap_or_default())
            .arg(if commit.finished { "1" } else { "0" })
            .arg(commit.expire_after.map(|after| ttl_ms(after).to_string()).unwrap_or_default())
            .arg(self.history)
            .arg(commit.game.as_str())
            .arg(commit.in_play.unwrap_or_default());
        // Only the events the history will keep travel to Redis.
        let skip = commit.events.len().saturating_sub(self.history);
        for event in &commit.events[skip..] {
            invocation.arg(event.as_slice());
        }
        let reply = self.run(&invocation).await?;
        match array(&reply)? {
            [tag] if text(tag)? == "ok" => {
                self.replicated(&self.game_key(&commit.game)).await?;
                Ok(version)
            }
            [tag, current] if text(tag)? == "version" => Err(CommitError::VersionConflict { current: uint(current)? }),
            [tag, stored] if text(tag)? == "epoch" => Err(CommitError::StaleEpoch { stored: uint(stored)? }),
            _ => Err(StoreError::new(format!("unexpected commit reply {reply:?}")).into()),
        }
    }

    async fn events_after(&self, game: &GameId, after_version: u64) -> Result<EventsAfter, StoreError> {
        let mut invocation = self.scripts.events_after.prepare_invoke();
        invocation.key(self.game_key(game)).key(self.events_key(game)).arg(after_version);
        let reply = self.run(&invocation).await?;
        match array(&reply)? {
            [tag] if text(tag)? == "missing" => Ok(EventsAfter::NotFound),
            [tag, current] if text(tag)? == "gap" => Ok(EventsAfter::Gap { current: uint(current)? }),
            [tag, current, events] if text(tag)? == "events" => {
                let events = array(events)?
                    .iter()
                    .zip(after_version.saturating_add(1)..)
                    .map(|(event, version)| Ok((version, bytes(event)?)))
                    .collect::<Result<_, StoreError>>()?;
                Ok(EventsAfter::Events { current: uint(current)?, events })
            }
            _ => Err(StoreError::new(format!("unexpected events reply {reply:?}"))),
        }
    }

    async fn due_games(&self, now_ms: u64, offset: usize, limit: usize) -> Result<Vec<(GameId, u64)>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        // Each bucket gives its earliest `offset + limit`: enough for the
        // page of the merged order, wherever its entries lie.
        let depth = offset.saturating_add(limit);
        let due = self
            .merged("deadlines", |key| {
                redis::cmd("ZRANGEBYSCORE")
                    .arg(key)
                    .arg("-inf")
                    .arg(now_ms)
                    .arg("WITHSCORES")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(depth)
                    .to_owned()
            })
            .await?;
        Ok(due.into_iter().skip(offset).take(limit).collect())
    }

    async fn postpone(&self, game: &GameId, due_ms: u64, to_ms: u64) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.postpone.prepare_invoke();
        invocation.key(self.deadlines_key(game)).arg(game.as_str()).arg(due_ms).arg(to_ms);
        Ok(uint(&self.run(&invocation).await?)? == 1)
    }

    async fn unpublished(&self, offset: usize, limit: usize) -> Result<Vec<GameId>, StoreError> {
        if limit == 0 {
            // `ZRANGE 0 -1` would mean everything.
            return Ok(Vec::new());
        }
        let last = offset.saturating_add(limit) - 1;
        let waiting = self
            .merged("outbox", |key| redis::cmd("ZRANGE").arg(key).arg(0).arg(last).arg("WITHSCORES").to_owned())
            .await?;
        Ok(waiting.into_iter().skip(offset).take(limit).map(|(game, _)| game).collect())
    }

    async fn mark_published(&self, game: &GameId) -> Result<(), StoreError> {
        let mut invocation = self.scripts.mark_published.prepare_invoke();
        invocation.key(self.outbox_key(game)).key(self.game_key(game)).key(self.events_key(game)).arg(game.as_str());
        self.run(&invocation).await.map(drop)
    }

    async fn claim_code(&self, code: &str, game: &GameId, ttl: Duration) -> Result<bool, StoreError> {
        let cmd = redis::cmd("SET")
            .arg(self.code_key(code))
            .arg(game.as_str())
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms(ttl))
            .to_owned();
        Ok(self.query(&cmd).await? != Value::Nil)
    }

    async fn resolve_code(&self, code: &str) -> Result<Option<GameId>, StoreError> {
        match self.query(redis::cmd("GET").arg(self.code_key(code))).await? {
            Value::Nil => Ok(None),
            raw => game_id(&raw).map(Some),
        }
    }

    async fn release_code(&self, code: &str) -> Result<(), StoreError> {
        self.query(redis::cmd("DEL").arg(self.code_key(code))).await.map(drop)
    }

    async fn note_seat(&self, player: &PlayerId, game: &GameId, ttl: Duration) -> Result<(), StoreError> {
        let mut invocation = self.scripts.note_seat.prepare_invoke();
        invocation.key(self.seats_key(player)).arg(game.as_str()).arg(ttl_ms(ttl));
        self.run(&invocation).await.map(drop)
    }

    async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, StoreError> {
        let mut invocation = self.scripts.seats_of.prepare_invoke();
        invocation.key(self.seats_key(player)).arg(MAX_SEATS_LISTED);
        let reply = self.run(&invocation).await?;
        let Value::Array(games) = reply else {
            return Err(StoreError::new(format!("unexpected seats reply {reply:?}")));
        };
        games.iter().map(game_id).collect()
    }

    async fn forget_seat(&self, player: &PlayerId, game: &GameId) -> Result<(), StoreError> {
        self.query(redis::cmd("ZREM").arg(self.seats_key(player)).arg(game.as_str())).await.map(drop)
    }

    async fn games_in_play(&self) -> Result<Vec<(GameId, Vec<u8>)>, StoreError> {
        let cmds: Vec<redis::Cmd> =
            (0..GAME_BUCKETS).map(|b| redis::cmd("HGETALL").arg(self.bucket_key("playing", b)).to_owned()).collect();
        let replies = self.redis.query_each(&cmds).await.map_err(redis_error)?;
        let mut listed = Vec::new();
        for reply in &replies {
            let entries = match reply {
                Value::Map(entries) => entries.iter().map(|(k, v)| (k, v)).collect(),
                flat => pairs(flat)?,
            };
            for (game, entry) in entries {
                listed.push((game_id(game)?, bytes(entry)?));
            }
        }
        listed.truncate(MAX_IN_PLAY_LISTED);
        Ok(listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_redis_failure_keeps_the_client_error_as_its_source() {
        let error = redis_error(redis::RedisError::from((redis::ErrorKind::Io, "connection refused")));
        assert!(error.to_string().starts_with("store: redis: "), "{error}");
        let source = error.source().and_then(|s| s.downcast_ref::<redis::RedisError>()).expect("the redis error");
        assert_eq!(source.kind(), redis::ErrorKind::Io);
    }
}
