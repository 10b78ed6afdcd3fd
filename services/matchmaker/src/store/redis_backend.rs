//! The matchmaker's store on Redis: every check-and-write is one Lua script
//! of `scripts.rs` over the keys of one hash tag, and the replies are read
//! back into the records of the parent module (which gives the key layout).

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use fogblast_redis::reply::{self, Unexpected};
use fogblast_redis::PrefixedRedis;
use redis::Value;

use super::scripts::Scripts;
use super::{bucket, parse_seek};
use super::{
    BoardRecord, Cleared, Fenced, Lock, MatchBackend, PendingPairing, PlayerSeek, PoolStatus, SeekEntry, StoreError,
    WaveSnapshot, LOBBY_BUCKETS, PLAYER_TTL_MS,
};

fn unexpected(what: &str, value: &Value) -> StoreError {
    StoreError::Reply(format!("expected {what}, got {value:?}"))
}

impl From<Unexpected> for StoreError {
    fn from(error: Unexpected) -> StoreError {
        StoreError::Reply(error.to_string())
    }
}

/// The matchmaker's Redis.
#[derive(Clone)]
pub struct RedisMatchStore {
    redis: PrefixedRedis,
    scripts: std::sync::Arc<Scripts>,
}

impl fmt::Debug for RedisMatchStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisMatchStore").field("prefix", &self.redis.prefix()).finish()
    }
}

fn text(value: &Value) -> Result<String, StoreError> {
    Ok(reply::text(value)?)
}

fn array(value: &Value) -> Result<&[Value], StoreError> {
    Ok(reply::array(value)?)
}

fn uint(value: &Value) -> Result<u64, StoreError> {
    Ok(reply::uint(value)?)
}

fn string_pairs(value: &Value) -> Result<Vec<(String, String)>, StoreError> {
    Ok(reply::string_pairs(value)?)
}

impl RedisMatchStore {
    /// Connects to the Redis at `url`, keeping every key under `<key_prefix>mm:`.
    pub async fn connect(url: &str, key_prefix: &str) -> Result<RedisMatchStore, StoreError> {
        let redis = PrefixedRedis::connect(url, format!("{key_prefix}mm:")).await?;
        Ok(RedisMatchStore { redis, scripts: std::sync::Arc::new(Scripts::new()) })
    }

    /// The prefix of every key this store writes.
    pub fn prefix(&self) -> &str {
        self.redis.prefix()
    }

    fn key(&self, name: &str) -> String {
        self.redis.key(name)
    }

    fn pool_key(&self, pool: &str, part: &str) -> String {
        format!("{}:{part}", self.redis.tagged("pool", pool))
    }

    fn player_key(&self, player: &str) -> String {
        self.redis.tagged("player", player)
    }

    fn busy_key(&self, player: &str) -> String {
        format!("{}:busy", self.redis.tagged("player", player))
    }

    fn boards_key(&self, player: &str) -> String {
        format!("{}:boards", self.redis.tagged("player", player))
    }

    fn lobby_key(&self, bucket: u64) -> String {
        self.redis.key(&format!("lobby:{bucket}"))
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, StoreError> {
        Ok(self.redis.query(cmd).await?)
    }

    async fn run<T: redis::FromRedisValue>(&self, invocation: &redis::ScriptInvocation<'_>) -> Result<T, StoreError> {
        Ok(self.redis.run(invocation).await?)
    }
}

#[async_trait]
impl MatchBackend for RedisMatchStore {
    /// Redis's clock, unix ms: the one time source of every replica.
    async fn now_ms(&self) -> Result<u64, StoreError> {
        let (seconds, micros): (u64, u64) = self.query(&redis::cmd("TIME")).await?;
        Ok(seconds * 1000 + micros / 1000)
    }

    // ---- replicas and pools -------------------------------------------

    /// Renews this replica's registration and returns the live replicas.
    async fn heartbeat(&self, replica: &str, ttl: Duration) -> Result<Vec<String>, StoreError> {
        let mut invocation = self.scripts.replica_heartbeat.prepare_invoke();
        invocation.key(self.key("replicas")).arg(replica).arg(ttl.as_millis() as u64);
        self.run(&invocation).await
    }

    async fn leave(&self, replica: &str) -> Result<(), StoreError> {
        self.query::<i64>(redis::cmd("ZREM").arg(self.key("replicas")).arg(replica)).await.map(drop)
    }

    /// Marks a pool as having had a seek now, so replicas look after it.
    async fn pool_seen(&self, pool: &str) -> Result<(), StoreError> {
        let mut invocation = self.scripts.pool_seen.prepare_invoke();
        invocation.key(self.key("pools")).arg(pool);
        self.run::<i64>(&invocation).await.map(drop)
    }

    /// Every pool that had a seek lately.
    async fn pools(&self) -> Result<Vec<String>, StoreError> {
        self.query(redis::cmd("ZRANGE").arg(self.key("pools")).arg(0).arg(-1)).await
    }

    /// Forgets a pool no seek arrived in for `idle`; the caller checked it is empty.
    async fn forget_pool(&self, pool: &str, idle: Duration) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.pool_forget.prepare_invoke();
        invocation.key(self.key("pools")).arg(pool).arg(idle.as_millis() as u64);
        Ok(self.run::<i64>(&invocation).await? == 1)
    }

    // ---- leases ---------------------------------------------------------

    /// Takes the pool's lease (or extends this replica's own): the token, or
    /// `None` when another replica holds it.
    async fn acquire_lease(&self, pool: &str, replica: &str, ttl: Duration) -> Result<Option<String>, StoreError> {
        let mut invocation = self.scripts.lease_acquire.prepare_invoke();
        invocation
            .key(self.pool_key(pool, "lease"))
            .key(self.pool_key(pool, "fence"))
            .arg(replica)
            .arg(ttl.as_millis() as u64);
        self.run(&invocation).await
    }

    async fn renew_lease(&self, pool: &str, token: &str, ttl: Duration) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.lease_renew.prepare_invoke();
        invocation.key(self.pool_key(pool, "lease")).arg(token).arg(ttl.as_millis() as u64);
        Ok(self.run::<i64>(&invocation).await? == 1)
    }

    async fn release_lease(&self, pool: &str, token: &str) -> Result<(), StoreError> {
        let mut invocation = self.scripts.lease_release.prepare_invoke();
        invocation.key(self.pool_key(pool, "lease")).arg(token);
        self.run::<i64>(&invocation).await.map(drop)
    }

    // ---- seeks ----------------------------------------------------------

    /// Points the player at a new seek (see [`PlayerSeek`]).
    async fn player_seek(
        &self,
        player: &str,
        seek: &str,
        pool: &str,
        spec: &str,
        force: bool,
    ) -> Result<PlayerSeek, StoreError> {
        let mut invocation = self.scripts.player_seek.prepare_invoke();
        invocation
            .key(self.player_key(player))
            .key(self.busy_key(player))
            .arg(seek)
            .arg(pool)
            .arg(spec)
            .arg(if force { "1" } else { "0" })
            .arg(PLAYER_TTL_MS);
        let reply: Vec<String> = self.run(&invocation).await?;
        match reply.as_slice() {
            [busy] if busy == "busy" => Ok(PlayerSeek::Busy),
            [same, seek, pool, colors] if same == "same" => {
                Ok(PlayerSeek::Same { seek: seek.clone(), pool: pool.clone(), colors: colors.clone() })
            }
            [new, old_seek, old_pool, colors] if new == "new" => Ok(PlayerSeek::New {
                old: (!old_seek.is_empty()).then(|| (old_seek.clone(), old_pool.clone())),
                colors: colors.clone(),
            }),
            other => Err(StoreError::Reply(format!("player seek: {other:?}"))),
        }
    }

    /// Clears the player's seek pointer if it names `seek` (any seek for
    /// `None`) and no pairing holds the player (see [`Cleared`]).
    async fn clear_player_seek(&self, player: &str, seek: Option<&str>) -> Result<Cleared, StoreError> {
        let mut invocation = self.scripts.player_clear.prepare_invoke();
        invocation.key(self.player_key(player)).key(self.busy_key(player)).arg(seek.unwrap_or(""));
        let reply: Vec<String> = self.run(&invocation).await?;
        match reply.as_slice() {
            [] => Ok(Cleared::Nothing),
            [busy] if busy == "busy" => Ok(Cleared::Busy),
            [cleared, seek, pool] if cleared == "cleared" => {
                Ok(Cleared::Seek { seek: seek.clone(), pool: pool.clone() })
            }
            other => Err(StoreError::Reply(format!("player clear: {other:?}"))),
        }
    }

    /// Adds a seek to its pool; returns its creation time (store ms).
    async fn add_seek(&self, pool: &str, seek: &str, entry: &SeekEntry) -> Result<u64, StoreError> {
        let record = serde_json::to_string(entry)?;
        let mut invocation = self.scripts.pool_add.prepare_invoke();
        invocation.key(self.pool_key(pool, "seeks")).key(self.pool_key(pool, "meta")).arg(seek).arg(record);
        let created: String = self.run(&invocation).await?;
        created.parse().map_err(|_| StoreError::Reply(format!("seek time {created:?}")))
    }

    async fn has_seek(&self, pool: &str, seek: &str) -> Result<bool, StoreError> {
        self.query(redis::cmd("HEXISTS").arg(self.pool_key(pool, "seeks")).arg(seek)).await
    }

    /// Takes a seek out of its pool; false if it was not there.
    async fn remove_seek(&self, pool: &str, seek: &str) -> Result<bool, StoreError> {
        Ok(self.query::<i64>(redis::cmd("HDEL").arg(self.pool_key(pool, "seeks")).arg(seek)).await? == 1)
    }

    async fn pool_status(&self, pool: &str) -> Result<PoolStatus, StoreError> {
        let (seeks, pending, last, time): (usize, usize, Option<u64>, (u64, u64)) = redis::pipe()
            .cmd("HLEN")
            .arg(self.pool_key(pool, "seeks"))
            .cmd("HLEN")
            .arg(self.pool_key(pool, "pending"))
            .cmd("HGET")
            .arg(self.pool_key(pool, "meta"))
            .arg("last_wave_ms")
            .cmd("TIME")
            .query_async(&mut self.redis.connection())
            .await?;
        Ok(PoolStatus { seeks, pending, last_wave_ms: last.unwrap_or(0), now_ms: time.0 * 1000 + time.1 / 1000 })
    }

    // ---- waves ------------------------------------------------------------

    /// Starts a wave under the lease `token`; `None` if the lease is lost.
    async fn begin_wave(&self, pool: &str, token: &str) -> Result<Option<WaveSnapshot>, StoreError> {
        let mut invocation = self.scripts.begin_wave.prepare_invoke();
        invocation
            .key(self.pool_key(pool, "lease"))
            .key(self.pool_key(pool, "meta"))
            .key(self.pool_key(pool, "seeks"))
            .key(self.pool_key(pool, "pending"))
            .arg(token);
        let reply: Value = self.run(&invocation).await?;
        let items = array(&reply)?;
        match items {
            [status] if text(status)? == "fenced" => Ok(None),
            [status, wave, now, seeks, pending] if text(status)? == "ok" => {
                let mut unreadable = Vec::new();
                let mut snapshot = WaveSnapshot {
                    wave: uint(wave)?,
                    now_ms: uint(now)?,
                    seeks: Vec::new(),
                    pending: Vec::new(),
                    unreadable: Vec::new(),
                };
                for (id, raw) in string_pairs(seeks)? {
                    match parse_seek(&id, &raw) {
                        Some(seek) => snapshot.seeks.push(seek),
                        None => unreadable.push(id),
                    }
                }
                for (id, raw) in string_pairs(pending)? {
                    match serde_json::from_str::<PendingPairing>(&raw) {
                        Ok(pairing) => snapshot.pending.push(pairing),
                        Err(_) => unreadable.push(id),
                    }
                }
                snapshot.unreadable = unreadable;
                Ok(Some(snapshot))
            }
            _ => Err(unexpected("a wave snapshot", &reply)),
        }
    }

    /// Locks a player for a pairing of their seek `seek`.
    async fn lock_player(&self, player: &str, seek: &str, pairing: &str, ttl: Duration) -> Result<Lock, StoreError> {
        let mut invocation = self.scripts.player_lock.prepare_invoke();
        invocation
            .key(self.player_key(player))
            .key(self.busy_key(player))
            .arg(seek)
            .arg(pairing)
            .arg(ttl.as_millis() as u64);
        let reply: String = self.run(&invocation).await?;
        match reply.as_str() {
            "ok" => Ok(Lock::Ok),
            "busy" => Ok(Lock::Busy),
            "stale" => Ok(Lock::Stale),
            other => Err(StoreError::Reply(format!("player lock: {other:?}"))),
        }
    }

    /// Unlocks a player; `consumed` is the seek the pairing took, whose
    /// pointer goes too.
    async fn unlock_player(&self, player: &str, pairing: &str, consumed: Option<&str>) -> Result<(), StoreError> {
        let mut invocation = self.scripts.player_unlock.prepare_invoke();
        invocation.key(self.player_key(player)).key(self.busy_key(player)).arg(pairing).arg(consumed.unwrap_or(""));
        self.run::<i64>(&invocation).await.map(drop)
    }

    /// Takes both seeks of a pairing out of the pool and records the
    /// pairing, if the lease still holds and both seeks are still there.
    async fn commit_pair(&self, pool: &str, token: &str, pairing: &PendingPairing) -> Result<Fenced, StoreError> {
        let record = serde_json::to_string(pairing)?;
        let mut invocation = self.scripts.commit_pair.prepare_invoke();
        invocation
            .key(self.pool_key(pool, "lease"))
            .key(self.pool_key(pool, "seeks"))
            .key(self.pool_key(pool, "pending"))
            .arg(token)
            .arg(&pairing.white.seek)
            .arg(&pairing.black.seek)
            .arg(&pairing.id)
            .arg(record);
        fenced(&self.run::<String>(&invocation).await?)
    }

    /// Rewrites (or with `None` removes) a pending pairing under the lease.
    async fn update_pending(
        &self,
        pool: &str,
        token: &str,
        id: &str,
        pairing: Option<&PendingPairing>,
    ) -> Result<Fenced, StoreError> {
        let record = match pairing {
            Some(pairing) => serde_json::to_string(pairing)?,
            None => String::new(),
        };
        let mut invocation = self.scripts.update_pending.prepare_invoke();
        invocation.key(self.pool_key(pool, "lease")).key(self.pool_key(pool, "pending")).arg(token).arg(id).arg(record);
        fenced(&self.run::<String>(&invocation).await?)
    }

    /// A pending pairing as stored now; `None` once it is done or given up.
    async fn pending(&self, pool: &str, id: &str) -> Result<Option<PendingPairing>, StoreError> {
        let raw: Option<String> = self.query(redis::cmd("HGET").arg(self.pool_key(pool, "pending")).arg(id)).await?;
        Ok(raw.and_then(|raw| serde_json::from_str(&raw).ok()))
    }

    /// Adds a game's colour to the player's history, keeping `keep`.
    async fn push_color(&self, player: &str, white: bool, keep: usize) -> Result<(), StoreError> {
        let mut invocation = self.scripts.player_color.prepare_invoke();
        invocation.key(self.player_key(player)).arg(if white { "w" } else { "b" }).arg(keep.max(1)).arg(PLAYER_TTL_MS);
        self.run::<String>(&invocation).await.map(drop)
    }

    async fn colors(&self, player: &str) -> Result<String, StoreError> {
        let colors: Option<String> = self.query(redis::cmd("HGET").arg(self.player_key(player)).arg("colors")).await?;
        Ok(colors.unwrap_or_default())
    }

    // ---- lobby ------------------------------------------------------------

    async fn open_board(&self, board: &BoardRecord) -> Result<(), StoreError> {
        let record = serde_json::to_string(board)?;
        let boards = self.boards_key(&board.player);
        // The player's index first: a board is never listed without it.
        redis::pipe()
            .cmd("SADD")
            .arg(&boards)
            .arg(&board.game)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&boards)
            .arg(PLAYER_TTL_MS)
            .ignore()
            .query_async::<()>(&mut self.redis.connection())
            .await?;
        self.query::<i64>(redis::cmd("HSET").arg(self.lobby_key(bucket(&board.game))).arg(&board.game).arg(record))
            .await
            .map(drop)
    }

    /// Takes a board out of the lobby; with `player`, only that player's.
    async fn close_board(&self, game: &str, player: Option<&str>) -> Result<Option<BoardRecord>, StoreError> {
        let mut invocation = self.scripts.board_close.prepare_invoke();
        invocation.key(self.lobby_key(bucket(game))).arg(game).arg(player.unwrap_or(""));
        let record: Option<String> = self.run(&invocation).await?;
        let Some(record) = record else { return Ok(None) };
        let board: Option<BoardRecord> = serde_json::from_str(&record).ok();
        if let Some(board) = &board {
            self.query::<i64>(redis::cmd("SREM").arg(self.boards_key(&board.player)).arg(game)).await?;
        }
        // A record that does not read was still removed.
        Ok(Some(board.unwrap_or_else(|| BoardRecord {
            game: game.to_owned(),
            code: String::new(),
            variant: String::new(),
            clock: None,
            color: String::new(),
            rated: false,
            player: player.unwrap_or_default().to_owned(),
            name: String::new(),
            rating: 0,
            opened_ms: 0,
            expires_ms: 0,
            address: String::new(),
        })))
    }

    /// Takes every board of a player out of the lobby; returns how many.
    async fn close_player_boards(&self, player: &str) -> Result<u32, StoreError> {
        let games: Vec<String> = self.query(redis::cmd("SMEMBERS").arg(self.boards_key(player))).await?;
        let mut closed = 0;
        for game in games {
            if self.close_board(&game, Some(player)).await?.is_some() {
                closed += 1;
            }
        }
        self.query::<i64>(redis::cmd("DEL").arg(self.boards_key(player))).await?;
        Ok(closed)
    }

    /// The lobby version, then every board (unordered, expired included).
    async fn boards(&self) -> Result<(u64, Vec<BoardRecord>), StoreError> {
        // The buckets lie in different slots on a cluster: side by side,
        // not one pipeline.
        let mut cmds = vec![redis::cmd("GET").arg(self.key("lobby-version")).to_owned()];
        cmds.extend((0..LOBBY_BUCKETS).map(|bucket| redis::cmd("HVALS").arg(self.lobby_key(bucket)).to_owned()));
        let reply = self.redis.query_each(&cmds).await?;
        let mut items = reply.iter();
        let version = match items.next() {
            Some(Value::Nil) | None => 0,
            Some(value) => uint(value)?,
        };
        let mut boards = Vec::new();
        for bucket in items {
            for raw in array(bucket)? {
                if let Ok(board) = serde_json::from_str::<BoardRecord>(&text(raw)?) {
                    boards.push(board);
                }
            }
        }
        Ok((version, boards))
    }

    /// The next lobby version, for a lobby notice about to be read.
    async fn bump_lobby_version(&self) -> Result<u64, StoreError> {
        self.query(redis::cmd("INCR").arg(self.key("lobby-version"))).await
    }

    /// Removes boards whose time is up; returns how many.
    async fn sweep_boards(&self, now_ms: u64) -> Result<usize, StoreError> {
        let (_, boards) = self.boards().await?;
        let mut removed = 0;
        for board in boards.iter().filter(|b| b.expires_ms <= now_ms) {
            if self.close_board(&board.game, None).await?.is_some() {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

fn fenced(reply: &str) -> Result<Fenced, StoreError> {
    match reply {
        "ok" => Ok(Fenced::Ok),
        "gone" | "missing" => Ok(Fenced::Gone),
        "fenced" => Ok(Fenced::Fenced),
        other => Err(StoreError::Reply(format!("fenced write: {other:?}"))),
    }
}
