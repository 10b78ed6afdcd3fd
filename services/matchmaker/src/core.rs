//! The matchmaker's commands, shared by every replica: placing and
//! withdrawing seeks, and opening, closing and listing boards. Each one
//! checks its input, then changes Redis through the store's atomic
//! scripts; nothing a replica keeps in memory is needed by another.
//!
//! A player has one seek at most. The player's pointer (`player:{id}`)
//! names it, and a pairing must lock the player while the pointer still
//! names the seek it pairs (see `waves.rs`), so a replaced or cancelled
//! seek can never be paired, whichever pool it sits in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::EventBus;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{ClockSettings, ColorChoice, Variant};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::matchmaker::{Board, Lobby, SeekRequest, SeekResponse};
use fogblast_proto::notices::player_subject;
use rand::Rng;
use tokio::sync::{Notify, Semaphore};
use tracing::{info, warn};

use crate::config::MatchmakerConfig;
use crate::games::Games;
use crate::metrics::Metrics;
use crate::pairing::Params;
use crate::pool::{variant_from_name, variant_name, PoolKey};
use crate::ratings::{Ratings, MAX_RATING};
use crate::store::{BoardRecord, Cleared, MatchStore, PlayerSeek, SeekEntry, StoreError};

/// Names are shown to opponents: at most this many characters.
pub const MAX_NAME_CHARS: usize = 30;
/// Join codes, as the game service makes them.
const CODE_LEN: usize = 8;
/// How long a seek waits for a pairing that holds its player to finish.
const BUSY_WAIT: Duration = Duration::from_millis(1500);
/// How many pairings of one replica make their games at once.
const CONCURRENT_COMPLETIONS: usize = 64;

pub(crate) fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
}

pub(crate) fn unavailable(error: StoreError) -> ServiceError {
    ServiceError::new(ErrorCode::Unavailable, format!("the matchmaker's store: {error}"))
}

fn player_id(text: &str) -> Result<PlayerId, ServiceError> {
    PlayerId::parse(text).map_err(|e| bad(e.to_string()))
}

fn checked_name(name: &str) -> Result<String, ServiceError> {
    if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(bad(format!("a name is at most {MAX_NAME_CHARS} characters, without control characters")));
    }
    Ok(name.to_owned())
}

fn checked_variant(value: i32) -> Result<Variant, ServiceError> {
    match Variant::try_from(value) {
        Ok(Variant::Unspecified) | Err(_) => Err(bad("variant must be standard, atomic or fog")),
        Ok(variant) => Ok(variant),
    }
}

/// The game service's clock limits, checked here so a pairing never fails on them.
fn checked_clock(clock: Option<&ClockSettings>) -> Result<(), ServiceError> {
    if let Some(clock) = clock {
        if !(60_000..=3_600_000).contains(&clock.initial_ms) {
            return Err(bad(format!("initial time must be 1 to 60 minutes, not {} ms", clock.initial_ms)));
        }
        if clock.increment_ms > 180_000 {
            return Err(bad(format!("increment must be at most 180 s, not {} ms", clock.increment_ms)));
        }
    }
    Ok(())
}

fn color_name(value: i32) -> Result<&'static str, ServiceError> {
    match ColorChoice::try_from(value) {
        Ok(ColorChoice::ChooseWhite) => Ok("white"),
        Ok(ColorChoice::ChooseBlack) => Ok("black"),
        Ok(ColorChoice::ChooseRandom) => Ok("random"),
        _ => Err(bad("color must be white, black or random")),
    }
}

fn color_choice(name: &str) -> ColorChoice {
    match name {
        "white" => ColorChoice::ChooseWhite,
        "black" => ColorChoice::ChooseBlack,
        "random" => ColorChoice::ChooseRandom,
        _ => ColorChoice::Unspecified,
    }
}

pub(crate) fn random_id(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut rng = rand::rng();
    (0..len).map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())])).collect()
}

/// One replica's shared state.
#[derive(Debug)]
pub struct Matchmaker {
    pub(crate) store: MatchStore,
    pub(crate) bus: Arc<dyn EventBus>,
    pub(crate) games: Arc<dyn Games>,
    pub(crate) config: MatchmakerConfig,
    pub(crate) params: Params,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) ratings: Ratings,
    pub(crate) replica: String,
    /// Set whenever this replica changed the lobby; the publisher coalesces.
    pub(crate) lobby_changed: Notify,
    /// Pairings whose games this replica is making now, by pool.
    pub(crate) inflight: Mutex<HashMap<String, String>>,
    pub(crate) completions: Arc<Semaphore>,
    /// The live replicas, as the last heartbeat saw them.
    pub(crate) replicas: RwLock<Arc<Vec<String>>>,
}

/// Why a matchmaker could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("setting up metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("{0}")]
    Config(ServiceError),
}

impl Matchmaker {
    pub fn new(
        config: MatchmakerConfig,
        store: MatchStore,
        bus: Arc<dyn EventBus>,
        games: Arc<dyn Games>,
    ) -> Result<Arc<Matchmaker>, SetupError> {
        let ratings = Ratings::new(config.rating_addr.as_deref()).map_err(SetupError::Config)?;
        let replica = match &config.replica_id {
            Some(id) => player_id(id).map_err(SetupError::Config)?.into_string(),
            None => format!("mm-{}", random_id(8)),
        };
        Ok(Arc::new(Matchmaker {
            store,
            bus,
            games,
            params: config.settings.params(),
            config,
            metrics: Arc::new(Metrics::new()?),
            ratings,
            replica,
            lobby_changed: Notify::new(),
            inflight: Mutex::default(),
            completions: Arc::new(Semaphore::new(CONCURRENT_COMPLETIONS)),
            replicas: RwLock::default(),
        }))
    }

    pub fn replica(&self) -> &str {
        &self.replica
    }

    pub fn store(&self) -> &MatchStore {
        &self.store
    }

    pub(crate) fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub(crate) fn inflight_in(&self, pool: &str) -> usize {
        self.inflight.lock().unwrap_or_else(PoisonError::into_inner).values().filter(|p| *p == pool).count()
    }

    /// Sends an encoded `PlayerNotice` (`notices`) to a player's gateways.
    pub(crate) async fn tell(&self, player: &str, notice: Bytes) {
        if let Err(error) = self.bus.publish(&player_subject(player), Vec::new(), notice).await {
            warn!(player, %error, "could not notify the player");
        }
    }

    /// Places the player's seek, replacing any other seek of theirs.
    pub async fn seek(&self, request: SeekRequest) -> Result<SeekResponse, ServiceError> {
        let player = player_id(&request.player_id)?.into_string();
        let name = checked_name(&request.name)?;
        let variant = checked_variant(request.variant)?;
        checked_clock(request.clock.as_ref())?;
        let range = match request.range {
            None => None,
            Some(range) => {
                let max = if range.max == 0 { u32::MAX } else { range.max };
                if range.min > max || range.min > MAX_RATING {
                    return Err(bad("a rating range needs min <= max"));
                }
                Some((range.min, max))
            }
        };
        if request.rating.is_some_and(|r| r > MAX_RATING) {
            return Err(bad(format!("a rating is at most {MAX_RATING}")));
        }
        let pool = PoolKey::new(variant, request.clock.as_ref(), request.rated);
        let pool_name = pool.name();
        let rating = self.ratings.rating(&player, variant, request.rating).await;
        let spec = format!("{pool_name}|{range:?}|{rating}");
        let seek = random_id(16);

        self.store.pool_seen(&pool_name).await.map_err(unavailable)?;
        let deadline = tokio::time::Instant::now() + BUSY_WAIT;
        let mut force = false;
        let (old, colors) = loop {
            match self.store.player_seek(&player, &seek, &pool_name, &spec, force).await.map_err(unavailable)? {
                PlayerSeek::New { old, colors } => break (old, colors),
                PlayerSeek::Same { seek: existing, pool: existing_pool, .. } => {
                    if self.store.has_seek(&existing_pool, &existing).await.map_err(unavailable)? {
                        return Ok(SeekResponse {
                            seek_id: existing,
                            pool: existing_pool,
                            rating,
                            existing: true,
                            replaced: false,
                        });
                    }
                    // The pointer outlived its seek: place a new one.
                    force = true;
                }
                PlayerSeek::Busy => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(ServiceError::new(
                            ErrorCode::Conflict,
                            "your seek is being paired right now: wait for the paired game",
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        };
        // The pointer moved while no pairing held the player, so the old
        // seek can no longer be paired: it is replaced whatever its pool says.
        let replaced = old.is_some();
        if let Some((old_seek, old_pool)) = old {
            self.store.remove_seek(&old_pool, &old_seek).await.map_err(unavailable)?;
        }
        let entry = SeekEntry { player: player.clone(), name, rating, range, colors };
        self.store.add_seek(&pool_name, &seek, &entry).await.map_err(unavailable)?;
        info!(player = %player, pool = %pool_name, rating, replaced, "seek placed");
        Ok(SeekResponse { seek_id: seek, pool: pool_name, rating, existing: false, replaced })
    }

    /// Withdraws the player's seek; false if there was none, or it was paired.
    ///
    /// The pointer is cleared only while no pairing holds the player, so
    /// the answer is exact: a pairing in progress either took the seek
    /// (false, and a `Paired` notice follows) or let it go (true).
    pub async fn cancel_seek(&self, player: &str) -> Result<bool, ServiceError> {
        let player = player_id(player)?.into_string();
        let deadline = tokio::time::Instant::now() + BUSY_WAIT;
        loop {
            match self.store.clear_player_seek(&player, None).await.map_err(unavailable)? {
                Cleared::Nothing => return Ok(false),
                Cleared::Seek { seek, pool } => {
                    // The seek can no longer be paired; take it out of its pool too.
                    self.store.remove_seek(&pool, &seek).await.map_err(unavailable)?;
                    return Ok(true);
                }
                Cleared::Busy if tokio::time::Instant::now() >= deadline => {
                    return Err(ServiceError::new(ErrorCode::Unavailable, "a pairing holds the player: try again"));
                }
                Cleared::Busy => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    /// The player's last connection closed: their seek and boards go.
    pub async fn player_left(&self, player: &str) -> Result<(bool, u32), ServiceError> {
        let cancelled = self.cancel_seek(player).await?;
        let closed = self.store.close_player_boards(player).await.map_err(unavailable)?;
        if closed > 0 {
            self.lobby_changed.notify_one();
        }
        Ok((cancelled, closed))
    }

    /// Lists a game waiting for a human opponent.
    pub async fn open_board(&self, board: Board) -> Result<Board, ServiceError> {
        let game = GameId::parse(&board.game_id).map_err(|e| bad(e.to_string()))?.into_string();
        let code = board.code.trim().to_ascii_uppercase();
        if code.len() != CODE_LEN || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(bad(format!("a join code is {CODE_LEN} letters and digits")));
        }
        let variant = checked_variant(board.variant)?;
        checked_clock(board.clock.as_ref())?;
        let color = color_name(board.color)?;
        let player = player_id(&board.player_id)?.into_string();
        let name = checked_name(&board.name)?;
        if board.rating > MAX_RATING {
            return Err(bad(format!("a rating is at most {MAX_RATING}")));
        }
        let rating = self.ratings.rating(&player, variant, Some(board.rating)).await;
        let opened_ms = self.store.now_ms().await.map_err(unavailable)?;
        let record = BoardRecord {
            game,
            code,
            variant: variant_name(variant).to_owned(),
            clock: board.clock.map(|c| (c.initial_ms, c.increment_ms)),
            color: color.to_owned(),
            rated: board.rated,
            player,
            name,
            rating,
            opened_ms,
            expires_ms: opened_ms.saturating_add(self.config.settings.board_ttl_ms),
            address: board.address.chars().take(64).collect(),
        };
        self.store.open_board(&record).await.map_err(unavailable)?;
        self.keep_within_caps(&record).await.map_err(unavailable)?;
        self.lobby_changed.notify_one();
        Ok(to_board(&record))
    }

    /// One player, or one address, fills no more of the lobby than its
    /// share: past the cap, its oldest boards leave (their games stay open
    /// to anyone with the link).
    async fn keep_within_caps(&self, opened: &BoardRecord) -> Result<(), StoreError> {
        let (_, boards) = self.lobby(None, usize::MAX).await?;
        let settings = &self.config.settings;
        let mut over: Vec<&BoardRecord> = Vec::new();
        // Newest first: what lies past the cap is the oldest.
        let of_player = boards.iter().filter(|b| b.player == opened.player);
        over.extend(of_player.skip(settings.boards_per_player));
        if !opened.address.is_empty() {
            let of_address = boards.iter().filter(|b| b.address == opened.address);
            over.extend(of_address.skip(settings.boards_per_address));
        }
        over.sort_by(|a, b| a.game.cmp(&b.game));
        over.dedup_by(|a, b| a.game == b.game);
        for board in over {
            self.store.close_board(&board.game, None).await?;
        }
        Ok(())
    }

    /// Takes a board out of the lobby; with a player, only theirs.
    pub async fn close_board(&self, game: &str, player: &str) -> Result<bool, ServiceError> {
        let game = GameId::parse(game).map_err(|e| bad(e.to_string()))?;
        let player = if player.is_empty() { None } else { Some(player_id(player)?.into_string()) };
        let closed = self.store.close_board(game.as_str(), player.as_deref()).await.map_err(unavailable)?.is_some();
        if closed {
            self.lobby_changed.notify_one();
        }
        Ok(closed)
    }

    /// The open boards, newest first, at most `limit`, of one variant or all.
    pub async fn lobby(&self, variant: Option<Variant>, limit: usize) -> Result<(u64, Vec<BoardRecord>), StoreError> {
        let (version, mut boards) = self.store.boards().await?;
        let now = self.store.now_ms().await?;
        let wanted = variant.map(variant_name);
        boards.retain(|b| b.expires_ms > now && wanted.is_none_or(|v| b.variant == v));
        boards.sort_by(|a, b| b.opened_ms.cmp(&a.opened_ms).then_with(|| a.game.cmp(&b.game)));
        boards.truncate(limit);
        Ok((version, boards))
    }

    /// `ListLobby`: the lobby as a reply.
    pub async fn list_lobby(&self, variant: i32, limit: u32) -> Result<Lobby, ServiceError> {
        let variant = match Variant::try_from(variant) {
            Ok(Variant::Unspecified) => None,
            Ok(variant) => Some(variant),
            Err(_) => return Err(bad("variant must be standard, atomic, fog or unspecified")),
        };
        let limit = match limit {
            0 => self.config.settings.lobby_max,
            n if n as usize > self.config.settings.lobby_max => {
                return Err(bad(format!("limit is 1 to {}", self.config.settings.lobby_max)));
            }
            n => n as usize,
        };
        let (version, boards) = self.lobby(variant, limit).await.map_err(unavailable)?;
        Ok(Lobby { open: boards.iter().map(to_board).collect(), version })
    }
}

pub(crate) fn to_board(record: &BoardRecord) -> Board {
    Board {
        game_id: record.game.clone(),
        code: record.code.clone(),
        variant: variant_from_name(&record.variant).unwrap_or(Variant::Unspecified) as i32,
        clock: record.clock.map(|(initial_ms, increment_ms)| ClockSettings { initial_ms, increment_ms }),
        color: color_choice(&record.color) as i32,
        rated: record.rated,
        player_id: record.player.clone(),
        name: record.name.clone(),
        rating: record.rating,
        opened_ms: record.opened_ms,
        // Only the matchmaker keeps it.
        address: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_checks_refuse_what_the_game_service_would() {
        assert!(checked_clock(Some(&ClockSettings { initial_ms: 59_999, increment_ms: 0 })).is_err());
        assert!(checked_clock(Some(&ClockSettings { initial_ms: 60_000, increment_ms: 180_001 })).is_err());
        assert!(checked_clock(Some(&ClockSettings { initial_ms: 3_600_000, increment_ms: 180_000 })).is_ok());
        assert!(checked_clock(None).is_ok());
        assert!(checked_variant(0).is_err());
        assert!(checked_variant(99).is_err());
        assert!(checked_name(&"x".repeat(31)).is_err());
        assert!(checked_name("a\u{7}").is_err());
        assert!(checked_name("élodie").is_ok());
        assert!(color_name(0).is_err());
        assert_eq!(color_name(3).unwrap(), "random");
    }
}
