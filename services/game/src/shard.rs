//! The shard's games: each owned game is loaded once, held in memory behind
//! its own lock, and changed only by committing to the store with the
//! version it was read at and this shard's epoch. A refused commit means
//! another writer got there first: the game is read again and the command
//! decided again, or refused with `NOT_OWNER`. After each commit the shard
//! pushes the events to its watchers, arms the game's timer, asks the
//! engine for the computer's move, or publishes the finished game.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_bus::EventBus;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{watch_event, CreateGameRequest, CreateGameResponse, GameState, Status, WatchEvent};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::record::GameRecord;
use fogblast_store::{Commit, CommitError, EventsAfter, GameStore, StoreError};
use prost::Message;
use tokio::sync::broadcast;
use tracing::{debug, info, warn};

use crate::audience::{self, Viewer};
use crate::commands::{self, Command, Event, Outcome};
use crate::computer::EnginePool;
use crate::config::GameConfig;
use crate::create::{self, NewGame};
use crate::metrics::Metrics;
use crate::ownership::Ownership;
use crate::record::{color_to_wire, LiveGame};

/// Attempts at a command when other writers keep getting there first.
const COMMIT_ATTEMPTS: usize = 4;
/// Live events buffered per game for slow watchers before they re-read the store.
const WATCH_BUFFER: usize = 256;

/// A game as this shard holds it.
#[derive(Debug, Default)]
struct Slot {
    cached: Option<Cached>,
}

#[derive(Debug, Clone)]
struct Cached {
    live: LiveGame,
    version: u64,
}

/// What a command did, for its caller.
#[derive(Debug)]
pub struct Done {
    pub version: u64,
    pub live: LiveGame,
}

#[derive(Debug)]
pub struct Shard {
    pub store: Arc<dyn GameStore>,
    pub bus: Arc<dyn EventBus>,
    pub ownership: Arc<Ownership>,
    pub config: GameConfig,
    pub metrics: Arc<Metrics>,
    engines: EnginePool,
    slots: Mutex<HashMap<GameId, Arc<tokio::sync::Mutex<Slot>>>>,
    watchers: Mutex<HashMap<GameId, broadcast::Sender<Arc<WatchEvent>>>>,
    /// The generation of each game's pending timer.
    timers: Mutex<HashMap<GameId, u64>>,
    thinking: Mutex<HashSet<GameId>>,
    publishing: Mutex<HashSet<GameId>>,
}

pub fn unavailable(error: impl std::fmt::Display) -> ServiceError {
    ServiceError::new(ErrorCode::Unavailable, format!("the game store is unavailable: {error}"))
}

fn not_found(game: &GameId) -> ServiceError {
    ServiceError::new(ErrorCode::NotFound, format!("no game {game}"))
}

impl Shard {
    pub fn new(
        store: Arc<dyn GameStore>,
        bus: Arc<dyn EventBus>,
        ownership: Arc<Ownership>,
        config: GameConfig,
        metrics: Arc<Metrics>,
        engines: EnginePool,
    ) -> Shard {
        Shard {
            store,
            bus,
            ownership,
            config,
            metrics,
            engines,
            slots: Mutex::default(),
            watchers: Mutex::default(),
            timers: Mutex::default(),
            thinking: Mutex::default(),
            publishing: Mutex::default(),
        }
    }

    fn slot(&self, game: &GameId) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut slots = self.slots.lock().expect("slots lock");
        let slot = slots.entry(game.clone()).or_default().clone();
        self.metrics.games_cached.set(slots.len() as i64);
        slot
    }

    async fn load(&self, game: &GameId) -> Result<Option<Cached>, ServiceError> {
        let Some(stored) = self.store.load(game).await.map_err(unavailable)? else { return Ok(None) };
        let record = GameRecord::decode(stored.record.as_slice())
            .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("game {game} is unreadable: {e}")))?;
        let live = LiveGame::from_record(record).map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        Ok(Some(Cached { live, version: stored.version }))
    }

    /// The game as last committed, read from the store.
    pub async fn current(&self, game: &GameId) -> Result<(LiveGame, u64), ServiceError> {
        if !self.ownership.owns(game) {
            let cached = self.load(game).await?.ok_or_else(|| not_found(game))?;
            return Ok((cached.live, cached.version));
        }
        let slot = self.slot(game);
        let mut slot = slot.lock().await;
        // Read through: no commit would catch a held copy that a shard with
        // a lagging view of membership has made stale.
        slot.cached = self.load(game).await?;
        let cached = slot.cached.as_ref().ok_or_else(|| not_found(game))?;
        Ok((cached.live.clone(), cached.version))
    }

    /// The game as `player` (or a spectator, for `None`) may see it.
    pub async fn state_for(&self, game: &GameId, player: Option<&PlayerId>) -> Result<GameState, ServiceError> {
        let (live, version) = self.current(game).await?;
        let viewer = player.and_then(|p| live.color_of(p)).map_or(Viewer::Spectator, Viewer::Seat);
        let now = self.store.now_ms().await.map_err(unavailable)?;
        Ok(audience::state_for(&live, version, viewer, now, &self.config.settings.timeouts))
    }

    /// Creates a game owned by this shard.
    pub async fn create(self: &Arc<Self>, request: &CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        let spec = NewGame::from_request(request)?;
        let epoch = self.ownership.epoch().ok_or_else(|| ServiceError::not_owner(None))?;
        let (game, code) = {
            let mut rng = rand::rng();
            // Draw ids until one falls to this shard, so its creator's next
            // command needs no redirect.
            let mut game = create::random_game_id(&mut rng);
            for _ in 0..64 {
                if self.ownership.owns(&game) {
                    break;
                }
                game = create::random_game_id(&mut rng);
            }
            (game, create::random_code(&mut rng))
        };
        let code = if spec.computer.is_none() { self.claim_code(&game, code).await? } else { String::new() };
        let now = self.store.now_ms().await.map_err(unavailable)?;
        let (record, color) = create::new_record(&game, &code, &spec, now, &mut rand::rng());
        let live = LiveGame::from_record(record).map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        let version = self.commit_new(&game, live.clone(), epoch, now).await?;
        info!(game = %game, variant = live.variant().name(), computer = spec.computer.is_some(), "game created");
        let state = audience::state_for(&live, version, Viewer::Seat(color), now, &self.config.settings.timeouts);
        Ok(CreateGameResponse {
            game_id: game.to_string(),
            code,
            color: color_to_wire(color) as i32,
            state: Some(state),
        })
    }

    async fn claim_code(&self, game: &GameId, first: String) -> Result<String, ServiceError> {
        let ttl = Duration::from_millis(self.config.settings.timeouts.open_game_ms);
        let mut code = first;
        for _ in 0..8 {
            if self.store.claim_code(&code, game, ttl).await.map_err(unavailable)? {
                return Ok(code);
            }
            code = create::random_code(&mut rand::rng());
        }
        Err(ServiceError::new(ErrorCode::Unavailable, "could not find a free join code"))
    }

    /// Commits a new game at version 0 and takes it in.
    async fn commit_new(
        self: &Arc<Self>,
        game: &GameId,
        live: LiveGame,
        epoch: u64,
        now: u64,
    ) -> Result<u64, ServiceError> {
        let events = [Event::Reset];
        let bytes = self.encode_events(&live, &events, 0, now);
        let due = commands::next_due(&live, &self.config.settings.timeouts);
        let commit = Commit {
            game: game.clone(),
            expected_version: 0,
            epoch,
            record: live.record.encode_to_vec(),
            events: bytes.iter().map(|e| e.encode_to_vec()).collect(),
            due_at_ms: due,
            finished: false,
            expire_after: None,
        };
        let version = match self.store.commit(commit).await {
            Ok(version) => version,
            Err(CommitError::VersionConflict { .. }) => {
                return Err(ServiceError::new(ErrorCode::Conflict, format!("game {game} already exists")))
            }
            Err(error) => return Err(unavailable(error)),
        };
        if self.ownership.owns(game) {
            let slot = self.slot(game);
            let mut slot = slot.lock().await;
            slot.cached = Some(Cached { live: live.clone(), version });
            self.after_commit(game, &live, bytes, due, now);
        }
        Ok(version)
    }

    /// Runs a command on an owned game until it is committed or refused.
    pub async fn execute(self: &Arc<Self>, game: &GameId, command: Command) -> Result<Done, ServiceError> {
        let mut epoch = self.ownership.check(game)?;
        let slot = self.slot(game);
        let mut slot = slot.lock().await;
        for _ in 0..COMMIT_ATTEMPTS {
            let held = slot.cached.is_some();
            if !held {
                slot.cached = self.load(game).await?;
            }
            let Some(cached) = slot.cached.clone() else { return Err(not_found(game)) };
            let now = self.store.now_ms().await.map_err(unavailable)?;
            let outcome = commands::apply(&cached.live, command.clone(), now, &self.config.settings.timeouts);
            // Only a commit checks the held copy against the store. A shard
            // whose view of membership lagged may have written the game
            // since, so a refusal or a no-op is decided again on a fresh read.
            if held && !matches!(outcome, Ok(Outcome::Applied(_))) {
                slot.cached = None;
                continue;
            }
            let applied = match outcome? {
                Outcome::AlreadyPlayed | Outcome::Unchanged => {
                    return Ok(Done { version: cached.version, live: cached.live });
                }
                Outcome::Applied(applied) => applied,
            };
            if applied.rematch {
                self.create_rematch(&applied.live, now).await?;
            }
            let was_ended = cached.live.status() == Status::Ended;
            let ended = applied.live.status() == Status::Ended;
            let events = self.encode_events(&applied.live, &applied.events, cached.version, now);
            let due = commands::next_due(&applied.live, &self.config.settings.timeouts);
            let commit = Commit {
                game: game.clone(),
                expected_version: cached.version,
                epoch,
                record: applied.live.record.encode_to_vec(),
                events: events.iter().map(|e| e.encode_to_vec()).collect(),
                due_at_ms: due,
                finished: ended && !was_ended,
                expire_after: ended.then(|| Duration::from_millis(self.config.settings.finished_ttl_ms)),
            };
            match self.store.commit(commit).await {
                Ok(version) => {
                    let moves = applied.events.iter().filter(|e| matches!(e, Event::Moved { .. })).count();
                    self.metrics.moves.inc_by(moves as u64);
                    if ended && !was_ended {
                        self.metrics.games_finished.inc();
                    }
                    slot.cached = Some(Cached { live: applied.live.clone(), version });
                    // Still under the game's lock, so watchers get events in order.
                    self.after_commit(game, &applied.live, events, due, now);
                    drop(slot);
                    if let Some(refusal) = applied.refusal {
                        return Err(refusal.into());
                    }
                    return Ok(Done { version, live: applied.live });
                }
                Err(CommitError::VersionConflict { current }) => {
                    debug!(game = %game, expected = cached.version, current, "commit lost a race; reading again");
                    self.metrics.commit_conflicts.inc();
                    slot.cached = None;
                }
                Err(CommitError::StaleEpoch { stored }) => {
                    self.metrics.commit_conflicts.inc();
                    slot.cached = None;
                    self.ownership.refresh().await.map_err(unavailable)?;
                    self.ownership.check(game)?;
                    // Still the owner by the current membership: the game was
                    // written by a shard that joined later and has left again.
                    warn!(game = %game, epoch, stored, "game carries a newer epoch; taking a new one");
                    self.ownership.reregister().await.map_err(unavailable)?;
                    epoch = self.ownership.check(game)?;
                }
                Err(CommitError::Store(error)) => {
                    slot.cached = None;
                    self.recover_events(game.clone(), cached.version);
                    return Err(unavailable(error));
                }
            }
        }
        Err(ServiceError::new(ErrorCode::Unavailable, "the game is changing too fast; try again"))
    }

    async fn create_rematch(self: &Arc<Self>, old: &LiveGame, now: u64) -> Result<(), ServiceError> {
        let game = GameId::parse(&old.record.rematch_game_id)
            .map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        let record = create::rematch_record(old, &game, now, &mut rand::rng());
        let live = LiveGame::from_record(record).map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        // Another shard may own the new game. Written at epoch 0 (a create
        // can overwrite nothing), it takes its owner's epoch on the first
        // write instead of fencing that owner out.
        match self.commit_new(&game, live, 0, now).await {
            // Made by an earlier attempt that crashed before recording it.
            Ok(_) => Ok(()),
            Err(error) if error.code == ErrorCode::Conflict => Ok(()),
            Err(error) => Err(error),
        }
    }

    fn encode_events(&self, live: &LiveGame, events: &[Event], from_version: u64, now: u64) -> Vec<WatchEvent> {
        events
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let version = from_version + 1 + i as u64;
                let audience = audience::event_for_all(live, event, version, now, &self.config.settings.timeouts);
                WatchEvent { version, kind: Some(watch_event::Kind::Event(audience)) }
            })
            .collect()
    }

    /// Everything a commit sets off: watchers, the timer, the computer, the
    /// stream of finished games.
    fn after_commit(
        self: &Arc<Self>,
        game: &GameId,
        live: &LiveGame,
        events: Vec<WatchEvent>,
        due: Option<u64>,
        now: u64,
    ) {
        if let Some(sender) = self.watchers.lock().expect("watchers lock").get(game) {
            for event in events {
                let _ = sender.send(Arc::new(event));
            }
        }
        if let Some(due) = due {
            self.arm_timer(game.clone(), due.saturating_sub(now));
        }
        if live.status() == Status::Ended {
            self.spawn_publish(game.clone());
        } else if live.status() == Status::Playing && live.is_computer(live.game.position().turn()) {
            self.spawn_think(game.clone());
        }
    }

    /// After a commit whose answer was lost: it may have been applied all
    /// the same (the store answered after the client's timeout), and then
    /// its events would reach the watchers only with the game's next
    /// commit, which may never come (the resent command finds the move
    /// played and commits nothing). So the events after `after_version`
    /// are read back from the store and handed on; watchers skip those they
    /// have and catch up from the store on a gap. None, if it was not
    /// applied.
    fn recover_events(self: &Arc<Self>, game: GameId, after_version: u64) {
        let shard = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut wait = Duration::from_millis(50);
            for _ in 0..6 {
                tokio::time::sleep(wait).await;
                wait *= 2;
                let Some(shard) = shard.upgrade() else { return };
                let events = match shard.store.events_after(&game, after_version).await {
                    Ok(EventsAfter::Events { events, .. }) => events,
                    // A gap or no game: the watchers find out on their own.
                    Ok(_) => return,
                    Err(_) => continue,
                };
                let Some(sender) = shard.watchers.lock().expect("watchers lock").get(&game).cloned() else { return };
                for (_, bytes) in events {
                    if let Ok(event) = WatchEvent::decode(bytes.as_slice()) {
                        let _ = sender.send(Arc::new(event));
                    }
                }
                return;
            }
        });
    }

    /// Sets the game's one timer; a timer set earlier for the game finds
    /// itself replaced when it wakes and does nothing.
    fn arm_timer(self: &Arc<Self>, game: GameId, delay_ms: u64) {
        let generation = {
            let mut timers = self.timers.lock().expect("timers lock");
            let generation = timers.get(&game).map_or(0, |g| g + 1);
            timers.insert(game.clone(), generation);
            generation
        };
        let shard = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            let Some(shard) = shard.upgrade() else { return };
            let current = {
                let mut timers = shard.timers.lock().expect("timers lock");
                let current = timers.get(&game) == Some(&generation);
                if current {
                    timers.remove(&game);
                }
                current
            };
            if current {
                shard.on_due(&game).await;
            }
        });
    }

    /// Whatever fell due for a game: a flag, an abort, the computer's turn.
    pub async fn on_due(self: &Arc<Self>, game: &GameId) {
        if !self.ownership.owns(game) {
            return;
        }
        match self.execute(game, Command::Tick).await {
            Ok(done) => {
                let live = done.live;
                if live.status() == Status::Playing && live.is_computer(live.game.position().turn()) {
                    self.spawn_think(game.clone());
                }
            }
            Err(error) if error.code == ErrorCode::NotOwner || error.code == ErrorCode::NotFound => {}
            Err(error) => warn!(game = %game, %error, "deadline not handled; the sweep will try again"),
        }
    }

    /// Asks the engine for the computer's move, unless already asking.
    fn spawn_think(self: &Arc<Self>, game: GameId) {
        if !self.thinking.lock().expect("thinking lock").insert(game.clone()) {
            return;
        }
        let shard = self.clone();
        // A child of whatever set it off (the opponent's move), so the
        // engine's work joins that move's trace.
        let span = tracing::info_span!("game.think", game = %game, variant = tracing::field::Empty);
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                shard.think(&game).await;
                shard.thinking.lock().expect("thinking lock").remove(&game);
            },
            span,
        ));
    }

    async fn think(self: &Arc<Self>, game: &GameId) {
        let mut backoff = Duration::from_millis(200);
        loop {
            let Ok((live, _)) = self.current(game).await else { return };
            let turn = live.game.position().turn();
            if !self.ownership.owns(game) || live.status() != Status::Playing || !live.is_computer(turn) {
                return;
            }
            let Ok(now) = self.store.now_ms().await else { return };
            tracing::Span::current().record("variant", live.variant().name());
            match self.engines.best_move(&live, now).await {
                Ok(uci) => {
                    let ply = live.ply() as u32;
                    if let Err(error) = self.execute(game, Command::ComputerMove { uci: uci.clone(), ply }).await {
                        warn!(game = %game, uci, %error, "the computer's move was not applied");
                    }
                    return;
                }
                Err(error) => {
                    warn!(game = %game, %error, "no engine answered; trying again");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    fn spawn_publish(self: &Arc<Self>, game: GameId) {
        if !self.publishing.lock().expect("publishing lock").insert(game.clone()) {
            return;
        }
        let shard = self.clone();
        let span = tracing::info_span!("game.publish_finished", game = %game, otel.kind = "producer");
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                if let Err(error) = crate::publisher::publish(&shard, &game).await {
                    warn!(game = %game, %error, "finished game not published yet; the sweep will retry");
                }
                shard.publishing.lock().expect("publishing lock").remove(&game);
            },
            span,
        ));
    }

    /// One pass over the deadlines and the outbox: handles the due games
    /// and unpublished finished games this shard owns now, including those
    /// whose timers died with another shard.
    pub async fn sweep(self: &Arc<Self>) -> Result<(), StoreError> {
        let now = self.store.now_ms().await?;
        for (game, _) in self.store.due_games(now, 500).await? {
            if self.ownership.owns(&game) {
                let shard = self.clone();
                tokio::spawn(async move { shard.on_due(&game).await });
            }
        }
        for game in self.store.unpublished(500).await? {
            if self.ownership.owns(&game) {
                self.spawn_publish(game);
            }
        }
        self.evict();
        Ok(())
    }

    /// Drops games this shard no longer owns, and finished games nobody
    /// watches, from memory; the store keeps them.
    fn evict(&self) {
        let watched: HashSet<GameId> = {
            let mut watchers = self.watchers.lock().expect("watchers lock");
            watchers.retain(|_, sender| sender.receiver_count() > 0);
            watchers.keys().cloned().collect()
        };
        let mut slots = self.slots.lock().expect("slots lock");
        slots.retain(|game, slot| {
            if !self.ownership.owns(game) {
                return false;
            }
            match slot.try_lock() {
                Ok(slot) => match &slot.cached {
                    Some(cached) => cached.live.status() != Status::Ended || watched.contains(game),
                    None => false,
                },
                Err(_) => true,
            }
        });
        self.metrics.games_cached.set(slots.len() as i64);
    }

    /// A receiver of the game's live events, created on first use.
    pub fn subscribe(&self, game: &GameId) -> broadcast::Receiver<Arc<WatchEvent>> {
        let mut watchers = self.watchers.lock().expect("watchers lock");
        watchers.entry(game.clone()).or_insert_with(|| broadcast::channel(WATCH_BUFFER).0).subscribe()
    }
}
