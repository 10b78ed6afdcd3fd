//! Where the matchmaker keeps everything: seeks and pools, the pool leases,
//! pairings on their way to a game, players' seek pointers and colour
//! histories, and the lobby, all in Redis, so any replica can serve any
//! call and take over any pool. Every check-and-write is one Lua script
//! (`store/scripts.rs`) over the keys of one hash tag.
//!
//! This module holds what both adapters share: the records, the
//! [`MatchBackend`] trait they implement and the [`MatchStore`] handle;
//! `store/redis_backend.rs` is the Redis adapter, `store/memory_backend.rs`
//! the one in this process's memory.
//!
//! Key layout, every key starting with `<prefix>mm:`:
//! - `pool:{<pool>}:seeks`: hash seek id → `<created ms>|<joined wave>|<json>`;
//! - `pool:{<pool>}:meta`: hash with `wave` (waves run) and `last_wave_ms`;
//! - `pool:{<pool>}:lease`: the pool's lease, `<replica>:<fence>`, with a TTL;
//! - `pool:{<pool>}:fence`: counter handing out fencing tokens;
//! - `pool:{<pool>}:pending`: hash pairing id → pairing whose game is being made;
//! - `player:{<player>}`: hash with `seek`, `pool`, `spec` (the player's one
//!   current seek) and `colors` (recent colours, newest first);
//! - `player:{<player>}:busy`: a pairing holding the player, with a TTL;
//! - `player:{<player>}:boards`: set of the player's open boards;
//! - `lobby:<0..7>`: hashes game id → open board, bucketed by game id;
//! - `lobby-version`: counter ordering lobby notices;
//! - `pools`: sorted set of pool names by the last time a seek arrived;
//! - `replicas`: sorted set of live replica ids by lease expiry.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

mod memory_backend;
mod redis_backend;
mod scripts;

pub use memory_backend::MemoryMatchStore;
pub use redis_backend::RedisMatchStore;

use crate::tournament::{MemoryTournamentStore, RedisTournamentStore, TournamentStore};

/// How many hashes the lobby is spread over.
pub const LOBBY_BUCKETS: u64 = 8;
/// Players' pointers and colour histories expire after a month unused.
pub(crate) const PLAYER_TTL_MS: u64 = 30 * 24 * 3600 * 1000;

/// A failure of the store: Redis itself, a reply that does not read, a
/// record that does not encode, or the game service a pairing waits on.
/// Each keeps its cause as the source.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis: unexpected reply: {0}")]
    Reply(String),
    /// A record that would not encode as JSON.
    #[error("record: {0}")]
    Record(#[from] serde_json::Error),
    /// The game service did not answer a pairing's call; the wave that
    /// made it is tried again.
    #[error("game service: {0}")]
    Games(#[source] fogblast_proto::error::ServiceError),
}

/// What a seek holds, as stored in its pool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeekEntry {
    pub player: String,
    pub name: String,
    pub rating: u32,
    #[serde(default)]
    pub range: Option<(u32, u32)>,
    #[serde(default)]
    pub colors: String,
}

/// A seek read back from its pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seek {
    pub id: String,
    pub created_ms: u64,
    /// The pool's wave count when the seek arrived.
    pub joined_wave: u64,
    pub entry: SeekEntry,
}

/// One side of a pairing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatPlan {
    pub seek: String,
    pub player: String,
    pub name: String,
    pub rating: u32,
    pub waited_ms: u64,
}

/// How far a pairing's game has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Seeks taken; no game yet.
    New,
    /// White created the game; black not seated yet.
    Created,
    /// Both seated; the players are being told.
    Joined,
}

/// A pairing on its way to a game, kept until both players are told.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingPairing {
    pub id: String,
    pub white: SeatPlan,
    pub black: SeatPlan,
    pub paired_ms: u64,
    pub stage: Stage,
    #[serde(default)]
    pub game: String,
    #[serde(default)]
    pub code: String,
}

/// A board in the lobby, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardRecord {
    pub game: String,
    pub code: String,
    pub variant: String,
    pub clock: Option<(u32, u32)>,
    /// `white`, `black` or `random`.
    pub color: String,
    pub rated: bool,
    pub player: String,
    pub name: String,
    pub rating: u32,
    pub opened_ms: u64,
    pub expires_ms: u64,
    /// The creator's address as the gateway counts it; empty if unknown.
    #[serde(default)]
    pub address: String,
}

/// What the player's pointer said when a seek was placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSeek {
    /// A pairing holds the player right now.
    Busy,
    /// The player already has this very seek.
    Same { seek: String, pool: String, colors: String },
    /// The pointer now names the new seek; `old` is what it named before.
    New { old: Option<(String, String)>, colors: String },
}

/// What clearing a player's seek pointer found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cleared {
    /// No seek (or not the one named).
    Nothing,
    /// A pairing holds the player right now.
    Busy,
    /// This seek was the player's and no longer is: it can never be paired.
    Seek { seek: String, pool: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    Ok,
    /// Another pairing holds the player.
    Busy,
    /// The seek is no longer the player's (cancelled or replaced).
    Stale,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fenced {
    Ok,
    /// The seeks or the pairing are gone.
    Gone,
    /// This replica no longer holds the pool's lease.
    Fenced,
}

/// A wave's view of its pool, read atomically as the wave starts.
#[derive(Clone, Debug)]
pub struct WaveSnapshot {
    pub wave: u64,
    pub now_ms: u64,
    pub seeks: Vec<Seek>,
    pub pending: Vec<PendingPairing>,
    /// Entries that did not read (written by another build, or by hand).
    pub unreadable: Vec<String>,
}

/// A pool's counts, for deciding when to run a wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStatus {
    pub seeks: usize,
    pub pending: usize,
    pub last_wave_ms: u64,
    pub now_ms: u64,
}

/// Reads `<created ms>|<joined wave>|<json>`.
pub fn parse_seek(id: &str, raw: &str) -> Option<Seek> {
    let mut parts = raw.splitn(3, '|');
    let created_ms = parts.next()?.parse().ok()?;
    let joined_wave = parts.next()?.parse().ok()?;
    let entry = serde_json::from_str(parts.next()?).ok()?;
    Some(Seek { id: id.to_owned(), created_ms, joined_wave, entry })
}

/// The bucket a game's board lives in (FNV-1a of its id).
pub(crate) fn bucket(game: &str) -> u64 {
    fogblast_redis::bucket(game, LOBBY_BUCKETS)
}

/// Everything the matchmaker keeps, behind one interface: Redis for
/// replicas sharing pools ([`RedisMatchStore`]), or this process's memory
/// for `fogblast up` ([`MemoryMatchStore`]). Each method is one atomic
/// check-and-write; both adapters pass the same behaviour suite
/// (`tests/store.rs`).
#[async_trait]
pub trait MatchBackend: Send + Sync + fmt::Debug {
    /// The store's clock, unix ms: the one time source of every replica.
    async fn now_ms(&self) -> Result<u64, StoreError>;

    // ---- replicas and pools -------------------------------------------

    /// Renews this replica's registration and returns the live replicas.
    async fn heartbeat(&self, replica: &str, ttl: Duration) -> Result<Vec<String>, StoreError>;

    async fn leave(&self, replica: &str) -> Result<(), StoreError>;

    /// Marks a pool as having had a seek now, so replicas look after it.
    async fn pool_seen(&self, pool: &str) -> Result<(), StoreError>;

    /// Every pool that had a seek lately.
    async fn pools(&self) -> Result<Vec<String>, StoreError>;

    /// Forgets a pool no seek arrived in for `idle`; the caller checked it is empty.
    async fn forget_pool(&self, pool: &str, idle: Duration) -> Result<bool, StoreError>;

    // ---- leases ---------------------------------------------------------

    /// Takes the pool's lease (or extends this replica's own): the token, or
    /// `None` when another replica holds it.
    async fn acquire_lease(&self, pool: &str, replica: &str, ttl: Duration) -> Result<Option<String>, StoreError>;

    async fn renew_lease(&self, pool: &str, token: &str, ttl: Duration) -> Result<bool, StoreError>;

    async fn release_lease(&self, pool: &str, token: &str) -> Result<(), StoreError>;

    // ---- seeks ----------------------------------------------------------

    /// Points the player at a new seek (see [`PlayerSeek`]).
    async fn player_seek(
        &self,
        player: &str,
        seek: &str,
        pool: &str,
        spec: &str,
        force: bool,
    ) -> Result<PlayerSeek, StoreError>;

    /// Clears the player's seek pointer if it names `seek` (any seek for
    /// `None`) and no pairing holds the player (see [`Cleared`]).
    async fn clear_player_seek(&self, player: &str, seek: Option<&str>) -> Result<Cleared, StoreError>;

    /// Adds a seek to its pool; returns its creation time (store ms).
    async fn add_seek(&self, pool: &str, seek: &str, entry: &SeekEntry) -> Result<u64, StoreError>;

    async fn has_seek(&self, pool: &str, seek: &str) -> Result<bool, StoreError>;

    /// Takes a seek out of its pool; false if it was not there.
    async fn remove_seek(&self, pool: &str, seek: &str) -> Result<bool, StoreError>;

    async fn pool_status(&self, pool: &str) -> Result<PoolStatus, StoreError>;

    // ---- waves ------------------------------------------------------------

    /// Starts a wave under the lease `token`; `None` if the lease is lost.
    async fn begin_wave(&self, pool: &str, token: &str) -> Result<Option<WaveSnapshot>, StoreError>;

    /// Locks a player for a pairing of their seek `seek`.
    async fn lock_player(&self, player: &str, seek: &str, pairing: &str, ttl: Duration) -> Result<Lock, StoreError>;

    /// Unlocks a player; `consumed` is the seek the pairing took, whose
    /// pointer goes too.
    async fn unlock_player(&self, player: &str, pairing: &str, consumed: Option<&str>) -> Result<(), StoreError>;

    /// Takes both seeks of a pairing out of the pool and records the
    /// pairing, if the lease still holds and both seeks are still there.
    async fn commit_pair(&self, pool: &str, token: &str, pairing: &PendingPairing) -> Result<Fenced, StoreError>;

    /// Rewrites (or with `None` removes) a pending pairing under the lease.
    async fn update_pending(
        &self,
        pool: &str,
        token: &str,
        id: &str,
        pairing: Option<&PendingPairing>,
    ) -> Result<Fenced, StoreError>;

    /// A pending pairing as stored now; `None` once it is done or given up.
    async fn pending(&self, pool: &str, id: &str) -> Result<Option<PendingPairing>, StoreError>;

    /// Adds a game's colour to the player's history, keeping `keep`.
    async fn push_color(&self, player: &str, white: bool, keep: usize) -> Result<(), StoreError>;

    async fn colors(&self, player: &str) -> Result<String, StoreError>;

    // ---- lobby ------------------------------------------------------------

    async fn open_board(&self, board: &BoardRecord) -> Result<(), StoreError>;

    /// Takes a board out of the lobby; with `player`, only that player's.
    async fn close_board(&self, game: &str, player: Option<&str>) -> Result<Option<BoardRecord>, StoreError>;

    /// Takes every board of a player out of the lobby; returns how many.
    async fn close_player_boards(&self, player: &str) -> Result<u32, StoreError>;

    /// The lobby version, then every board (unordered, expired included).
    async fn boards(&self) -> Result<(u64, Vec<BoardRecord>), StoreError>;

    /// The next lobby version, for a lobby notice about to be read.
    async fn bump_lobby_version(&self) -> Result<u64, StoreError>;

    /// Removes boards whose time is up; returns how many.
    async fn sweep_boards(&self, now_ms: u64) -> Result<usize, StoreError>;
}

/// The matchmaker's store: a cheap handle on one of the adapters, whose
/// methods it offers directly, and the tournaments' store beside it.
#[derive(Clone, Debug)]
pub struct MatchStore {
    backend: Arc<dyn MatchBackend>,
    tournaments: Arc<dyn TournamentStore>,
}

impl MatchStore {
    /// Redis at `url`, every key under `<key_prefix>mm:`; shared by replicas.
    pub async fn connect(url: &str, key_prefix: &str) -> Result<MatchStore, StoreError> {
        Ok(MatchStore {
            backend: Arc::new(RedisMatchStore::connect(url, key_prefix).await?),
            tournaments: Arc::new(RedisTournamentStore::connect(url, key_prefix).await?),
        })
    }

    /// This process's memory: for one replica running next to everything
    /// else (`fogblast up`); gone when the process ends.
    pub fn in_memory() -> MatchStore {
        MatchStore { backend: Arc::new(MemoryMatchStore::new()), tournaments: Arc::new(MemoryTournamentStore::new()) }
    }

    /// `backend`, with tournaments in this process's memory.
    pub fn new(backend: Arc<dyn MatchBackend>) -> MatchStore {
        MatchStore { backend, tournaments: Arc::new(MemoryTournamentStore::new()) }
    }

    /// The same store with `tournaments` for its tournaments.
    pub fn with_tournaments(self, tournaments: Arc<dyn TournamentStore>) -> MatchStore {
        MatchStore { tournaments, ..self }
    }

    pub fn tournaments(&self) -> &Arc<dyn TournamentStore> {
        &self.tournaments
    }
}

impl std::ops::Deref for MatchStore {
    type Target = dyn MatchBackend;

    fn deref(&self) -> &(dyn MatchBackend + 'static) {
        self.backend.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeks_read_back_and_junk_does_not() {
        let entry =
            SeekEntry { player: "p".into(), name: "n|x".into(), rating: 1500, range: None, colors: "wb".into() };
        let raw = format!("1700000000000|3|{}", serde_json::to_string(&entry).unwrap());
        let seek = parse_seek("s", &raw).unwrap();
        assert_eq!((seek.created_ms, seek.joined_wave, seek.entry), (1_700_000_000_000, 3, entry));
        for junk in ["", "1|2", "x|2|{}", "1|2|{", "1|y|{}"] {
            assert!(parse_seek("s", junk).is_none(), "{junk}");
        }
    }

    #[test]
    fn buckets_spread_and_stay_in_range() {
        let used: std::collections::HashSet<u64> = (0..100).map(|i| bucket(&format!("game{i}"))).collect();
        assert!(used.len() > LOBBY_BUCKETS as usize / 2);
        assert!(used.iter().all(|b| *b < LOBBY_BUCKETS));
    }
}
