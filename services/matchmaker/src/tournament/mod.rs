//! Tournaments in the matchmaker, arenas and Swiss events: created by
//! players or by the operator's schedule, joined, paused and left through
//! the gRPC API, and driven (started, paired, scored, finished) by exactly
//! one replica at a time, the holder of the tournament's lease. The rules
//! themselves are `fogblast_tournament::arena` and `::swiss`; this module
//! keeps the state in a store and carries the rules out.
//!
//! State, per tournament (see [`TournamentStore`]):
//! - its record (settings, start, length), status and version;
//! - `joined`: who joined, with their name and rating (any replica writes);
//! - `presence`: active, paused or withdrawn (any replica writes);
//! - `standing`: each player's sheet, colours and current game (the
//!   driver writes, fenced by its lease);
//! - `games`: every game paired, its stage and result (the driver writes);
//! - `results`: finished games told by the finished-games stream, waiting
//!   to be counted (any replica adds, once per game; the driver takes);
//! - a Swiss's rounds ([`SwissState`]: the pairing of each round, when the
//!   last one ended), written by the driver with the rest of its commit.
//!
//! A result is counted exactly once: it enters `results` once (set if
//! absent), and the driver's one fenced commit both scores it and marks
//! the game counted, so a second delivery, a second driver or a driver
//! killed mid-way can neither lose nor double it.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use fogblast_tournament::arena::Sheet;
use fogblast_tournament::swiss::{RoundPairing, SwissPlayer};
use fogblast_tournament::tiebreak::RoundResult;
use serde::{Deserialize, Serialize};

use crate::store::StoreError;

pub mod commands;
pub mod driver;
mod memory;
pub mod public;
mod redis;
pub mod results;
pub mod schedule;
pub mod swiss;

pub use memory::MemoryTournamentStore;
pub use redis::RedisTournamentStore;

/// How a tournament pairs: an arena re-pairs free players for a fixed
/// time; a Swiss pairs everyone once a round for a fixed number of rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum System {
    #[default]
    Arena,
    Swiss,
}

impl System {
    pub fn name(self) -> &'static str {
        match self {
            System::Arena => "arena",
            System::Swiss => "swiss",
        }
    }
}

/// A tournament's settings, fixed when it is created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentRecord {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// `standard`, `atomic` or `fog`.
    pub variant: String,
    #[serde(default)]
    pub chess960: bool,
    /// Initial time and increment, ms.
    pub clock: (u32, u32),
    pub rated: bool,
    pub starts_ms: u64,
    /// An arena's length; a Swiss's estimated length (for listing it).
    pub minutes: u32,
    #[serde(default)]
    pub system: System,
    /// A Swiss's number of rounds.
    #[serde(default)]
    pub rounds: u32,
    /// A Swiss's wait after a round's last game before the next round, s.
    #[serde(default)]
    pub round_interval_s: u32,
    /// The player who made it; empty for the operator's schedule.
    #[serde(default)]
    pub created_by: String,
    #[serde(default)]
    pub created_ms: u64,
}

impl TournamentRecord {
    pub fn ends_ms(&self) -> u64 {
        self.starts_ms.saturating_add(u64::from(self.minutes) * 60_000)
    }
}

/// Where a tournament is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Created,
    Started,
    Finished,
}

/// A player who joined.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entrant {
    pub name: String,
    pub rating: u32,
    pub joined_ms: u64,
}

/// Whether a player who joined is paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Active,
    /// Not paired until they come back; their score stays.
    Paused,
    /// Left; shown in the standings with their score.
    Withdrawn,
}

/// What the driver keeps of a player.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    pub sheet: Sheet,
    pub white_minus_black: i32,
    pub last_white: Option<bool>,
    /// Since when the player has been free to be paired (ms).
    pub free_since_ms: u64,
    /// The game being played now, if any.
    pub playing: Option<String>,
    /// Games with a berserk.
    #[serde(default)]
    pub berserks: u32,
    /// A Swiss player's record, from the first round they were in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swiss: Option<SwissLine>,
}

/// A Swiss player's record: what the pairing needs, and each round's
/// result for the tie-breaks (one per round recorded, missed ones too).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwissLine {
    pub player: SwissPlayer,
    pub rounds: Vec<RoundResult>,
}

/// A Swiss's rounds, as its driver keeps them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwissState {
    /// Every round paired, the first first; the last is being played
    /// unless `recorded`.
    pub rounds: Vec<SwissRoundState>,
    /// When the last round's results were recorded (ms); 0 while played.
    pub round_ended_ms: u64,
}

/// One round of a Swiss: its pairing and the game of each board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwissRoundState {
    pub pairing: RoundPairing,
    /// The game id of each board, in `pairing.boards`' order.
    pub games: Vec<String>,
    /// An Atomic960 Swiss's start position for every board of the round.
    #[serde(default)]
    pub chess960_position: Option<u32>,
    /// Its results are in the players' records.
    pub recorded: bool,
}

/// How far a tournament game has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Paired; no game yet.
    New,
    /// White created it; black not seated yet.
    Created,
    /// Both seated and told.
    Started,
    /// Its result was counted (or it never started and was given up).
    Done,
}

/// A game the tournament paired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TourGame {
    pub id: String,
    pub white: String,
    pub black: String,
    pub stage: Stage,
    #[serde(default)]
    pub code: String,
    pub paired_ms: u64,
    /// `1-0`, `0-1`, `1/2-1/2`, or `*` (aborted), once counted.
    #[serde(default)]
    pub result: String,
    #[serde(default)]
    pub plies: u32,
    /// The Chess960 start position it is to be made with (a Swiss round's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chess960_position: Option<u32>,
}

/// A finished game as the stream told it, waiting to be counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedResult {
    pub game: String,
    pub result: String,
    pub plies: u32,
    pub white_berserk: bool,
    pub black_berserk: bool,
}

/// Everything about one tournament, read at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub record: TournamentRecord,
    pub status: Status,
    pub version: u64,
    pub now_ms: u64,
    pub joined: BTreeMap<String, Entrant>,
    pub presence: BTreeMap<String, Presence>,
    pub standing: BTreeMap<String, Standing>,
    pub games: BTreeMap<String, TourGame>,
    pub results: BTreeMap<String, ReportedResult>,
    /// A Swiss's rounds; `None` for an arena or a Swiss not started.
    pub swiss: Option<SwissState>,
}

/// The driver's writes, made at once if it still holds the lease.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commit {
    pub status: Option<Status>,
    /// Players paused by the driver: they did not start their last game.
    pub paused: Vec<String>,
    pub standing: Vec<(String, Standing)>,
    pub games: Vec<TourGame>,
    /// Results taken out of the inbox (counted, or for no game of ours).
    pub results_taken: Vec<String>,
    /// A Swiss's rounds, written whole.
    pub swiss: Option<SwissState>,
}

impl Commit {
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.paused.is_empty()
            && self.standing.is_empty()
            && self.games.is_empty()
            && self.results_taken.is_empty()
            && self.swiss.is_none()
    }
}

/// What joining found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Joined {
    /// In now (first time, or back from a pause or a withdrawal).
    Joined,
    /// Already in and active: nothing changed.
    Already,
    NoSuchTournament,
    Finished,
}

/// Where tournaments are kept: Redis for replicas sharing them
/// ([`RedisTournamentStore`]) or this process's memory for `fogblast up`
/// ([`MemoryTournamentStore`]). Each method is atomic.
#[async_trait]
pub trait TournamentStore: Send + Sync + fmt::Debug {
    async fn now_ms(&self) -> Result<u64, StoreError>;

    /// Creates the tournament; false when its id is taken.
    async fn create(&self, record: &TournamentRecord) -> Result<bool, StoreError>;

    /// Every tournament not finished, and those finished since `since_ms`,
    /// with their status and how many joined.
    async fn list(&self, since_ms: u64) -> Result<Vec<(TournamentRecord, Status, usize)>, StoreError>;

    async fn snapshot(&self, id: &str) -> Result<Option<Snapshot>, StoreError>;

    async fn join(&self, id: &str, player: &str, entrant: &Entrant) -> Result<Joined, StoreError>;

    /// Sets a player's presence; false when they never joined.
    async fn set_presence(&self, id: &str, player: &str, presence: Presence) -> Result<bool, StoreError>;

    /// Adds a finished game's result to the inbox, once: false when it
    /// was already there or the tournament is unknown.
    async fn report(&self, id: &str, result: &ReportedResult) -> Result<bool, StoreError>;

    /// Takes the tournament's lease (or extends this replica's own).
    async fn acquire(&self, id: &str, replica: &str, ttl: Duration) -> Result<Option<String>, StoreError>;

    async fn release(&self, id: &str, token: &str) -> Result<(), StoreError>;

    /// Writes `commit` if `token` still holds the lease: false if not.
    async fn commit(&self, id: &str, token: &str, commit: &Commit) -> Result<bool, StoreError>;
}

pub(crate) fn json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    Ok(serde_json::to_string(value)?)
}
