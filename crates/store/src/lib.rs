//! Where live games are kept: each game's record with its version and the
//! epoch of the shard that last wrote it, its bounded event history, the
//! deadlines of games that need attention without a command, the outbox of
//! finished games not yet published, join codes, each player's seats, the
//! index of games being played, and shard membership.
//!
//! Three adapters implement [`GameStore`]: [`RedisStore`] for production and
//! the distributed tests, [`FileStore`] for `fogblast up` on one machine (the
//! in-process store written through to a SQLite file), and [`MemoryStore`],
//! held in memory alone. Both keep the same guarantees, which are the game service's
//! invariants: a commit is refused unless the game is still at the version
//! the writer read (one writer wins) and the writer's epoch is not older
//! than the one recorded on the game (stale owners lose); and the store's
//! clock, not the shard's, is the one time source.

use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::ids::{GameId, PlayerId};

mod file;
mod memory;
mod redis_store;

pub use file::FileStore;
pub use memory::MemoryStore;
pub use redis_store::{game_bucket, Durability, RedisStore, GAME_BUCKETS};

pub use fogblast_routing::{placement, Member, Membership, StoreError};

/// Why a commit was refused.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The game is no longer at the version the writer read (or, for a
    /// create, the game already exists).
    #[error("the game is at version {current}, not the expected one")]
    VersionConflict { current: u64 },
    /// The game records a newer epoch than the writer's: a newer owner has
    /// written it.
    #[error("the game was written at epoch {stored}, newer than the writer's")]
    StaleEpoch { stored: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A game as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGame {
    /// The version of the last event; 0 is never stored (a create commits
    /// at least one event).
    pub version: u64,
    /// The epoch of the shard that last wrote the game.
    pub epoch: u64,
    /// The encoded `fogblast.record.v1.GameRecord`.
    pub record: Vec<u8>,
}

/// One atomic write of a game: the new record and the events it made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    pub game: GameId,
    /// The version the writer read; 0 creates the game and is refused with
    /// `VersionConflict` if it exists.
    pub expected_version: u64,
    /// The writer's membership epoch.
    pub epoch: u64,
    pub record: Vec<u8>,
    /// They get versions `expected_version + 1` on. A create has at least
    /// one; a commit of none writes the record alone and keeps the version
    /// (a presence lease renewed: nothing a watcher needs to hear).
    pub events: Vec<Vec<u8>>,
    /// When the game next needs attention (store time, unix ms); `None`
    /// takes it off the deadline set.
    pub due_at_ms: Option<u64>,
    /// Put the game in the outbox: it has just finished (its end is to be
    /// published), or a rematch was agreed (it is to be made).
    pub finished: bool,
    /// Let the game's keys expire this long after the commit (finished
    /// games), or, while the game waits in the outbox, this long after it
    /// is marked published, so an outage of the stream of any length loses
    /// no finished game; `None` keeps them without expiry.
    pub expire_after: Option<Duration>,
    /// The game's entry in the index of games being played (the encoded
    /// `fogblast.game.v1.GameInPlay`): set while the game is played, `None`
    /// takes it off. Written with the commit, so a game is listed exactly
    /// from the commit that starts it to the one that ends it.
    pub in_play: Option<Vec<u8>>,
}

/// The events after a version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventsAfter {
    /// Every event after the requested version, oldest first, with its
    /// version; empty when there is none yet.
    Events { current: u64, events: Vec<(u64, Vec<u8>)> },
    /// The bounded history no longer reaches back to the requested version.
    /// The caller needs a snapshot at `current`.
    Gap { current: u64 },
    /// No such game.
    NotFound,
}

/// Live games.
#[async_trait]
pub trait GameStore: Membership {
    /// The store's clock, unix milliseconds: the one time source for clocks.
    /// The Redis adapter may answer from its last reading carried forward
    /// (`RedisStore::with_clock_sync`), never from a stale one.
    async fn now_ms(&self) -> Result<u64, StoreError>;
    async fn load(&self, game: &GameId) -> Result<Option<StoredGame>, StoreError>;
    /// Writes the commit atomically, or refuses it and changes nothing.
    /// Returns the new version once the commit is as durable as the store
    /// is set to make it; a commit applied but not yet that durable is an
    /// error (and may still become durable).
    async fn commit(&self, commit: Commit) -> Result<u64, CommitError>;
    /// Returns once every write this store made so far to `game` is as
    /// durable as a commit's: before a command answered from a commit made
    /// earlier (a resend whose first answer was lost) is acknowledged.
    async fn confirm_durable(&self, _game: &GameId) -> Result<(), StoreError> {
        Ok(())
    }
    /// The events after `after_version`, read atomically with the current
    /// version.
    async fn events_after(&self, game: &GameId, after_version: u64) -> Result<EventsAfter, StoreError>;
    /// Games whose deadline is at or before `now_ms`, with their deadlines,
    /// earliest first, at most `limit` after skipping `offset` (a page).
    async fn due_games(&self, now_ms: u64, offset: usize, limit: usize) -> Result<Vec<(GameId, u64)>, StoreError>;
    /// Moves the game's deadline from `due_ms` to `to_ms` if it is still
    /// `due_ms` (a commit since has set its own): for a deadline the sweep
    /// found and could not act on yet, so it waits its turn again instead
    /// of coming up in every sweep. `Ok(false)` when it was not moved.
    async fn postpone(&self, game: &GameId, due_ms: u64, to_ms: u64) -> Result<bool, StoreError>;
    /// Finished games not yet marked published, oldest first, at most
    /// `limit` after skipping `offset` (a page).
    async fn unpublished(&self, offset: usize, limit: usize) -> Result<Vec<GameId>, StoreError>;
    /// Takes the game out of the outbox and starts the time to live its
    /// last commit asked for.
    async fn mark_published(&self, game: &GameId) -> Result<(), StoreError>;
    /// Reserves a join code for a game; `Ok(false)` if the code is taken.
    async fn claim_code(&self, code: &str, game: &GameId, ttl: Duration) -> Result<bool, StoreError>;
    async fn resolve_code(&self, code: &str) -> Result<Option<GameId>, StoreError>;
    async fn release_code(&self, code: &str) -> Result<(), StoreError>;
    /// Notes that `player` holds a seat in `game`, for `ttl` from now (a
    /// second note renews it). The index of a player's games in progress:
    /// a superset, since a game that ended stays noted until it is
    /// forgotten or expires, so readers check each game.
    async fn note_seat(&self, player: &PlayerId, game: &GameId, ttl: Duration) -> Result<(), StoreError>;
    /// The games noted for `player` and not expired, the latest noted
    /// first, at most [`MAX_SEATS_LISTED`].
    async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, StoreError>;
    async fn forget_seat(&self, player: &PlayerId, game: &GameId) -> Result<(), StoreError>;
    /// The entries of the games being played (see [`Commit::in_play`]),
    /// in no particular order, at most [`MAX_IN_PLAY_LISTED`].
    async fn games_in_play(&self) -> Result<Vec<(GameId, Vec<u8>)>, StoreError>;
}

/// The most games [`GameStore::games_in_play`] lists.
pub const MAX_IN_PLAY_LISTED: usize = 10_000;

/// The most games [`GameStore::seats_of`] lists.
pub const MAX_SEATS_LISTED: usize = 100;
