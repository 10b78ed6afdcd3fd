//! The shard's games: each owned game is loaded once, held in memory behind
//! its own lock, and changed only by committing to the store with the
//! version it was read at and this shard's epoch. A refused commit means
//! another writer got there first: the game is read again and the command
//! decided again, or refused with `NOT_OWNER`. After each commit the shard
//! pushes the events to its watchers, arms the game's timer, asks the
//! engine for the computer's move, or publishes the finished game.
//!
//! The commit loop lives here; the parts it drives each have a module:
//! `cache` (the games held in memory), `watchers` (live events for the
//! Watch streams), `timers` (each game's next deadline), `computer_turn`
//! (the engine's moves) and `sweep` (the periodic pass and publishing).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::EventBus;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{
    watch_event, CreateGameRequest, CreateGameResponse, GameInPlay, GameState, JoinGameResponse, Status, WatchEvent,
};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::record::{AppliedRequest, GameRecord};
use fogblast_store::{Commit, CommitError, EventsAfter, GameStore};
use prost::Message;
use tokio::sync::broadcast;
use tracing::{debug, info, warn};

use crate::audience::{self, Viewer};
use crate::commands::{Command, Event};
use crate::computer::EnginePool;
use crate::config::GameConfig;
use crate::create::{self, NewGame};
use crate::deadlines;
use crate::metrics::Metrics;
use crate::ownership::Ownership;
use crate::record::{color_to_wire, LiveGame};

mod cache;
mod computer_turn;
mod decide;
mod public_stream;
mod sweep;
mod timers;
mod watchers;

use cache::{Cached, GameCache, Slot};
use decide::{decide, Decision, Proposal, Start};
use public_stream::PublicStream;
use sweep::InFlight;
use timers::Timers;
pub use watchers::Committed;
use watchers::Watchers;

/// Attempts at a command when other writers keep getting there first.
const COMMIT_ATTEMPTS: usize = 4;
/// The log target of one line per commit the store acknowledged (game,
/// versions, epoch), at DEBUG: `FOGBLAST_LOG=info,fogblast::commits=debug`
/// turns it on, for a history checker to read which owner wrote what.
pub const COMMITS: &str = "fogblast::commits";

/// How long a seat stays in the store's index of a player's games: longer
/// than any game lasts but an untimed one, which may drop out of the
/// player's list of games in progress after that.
const SEAT_NOTED_FOR: Duration = Duration::from_secs(3 * 24 * 3600);

/// How many applied requests a game remembers: far more than can be in
/// flight on one game at once.
const RECORDED_REQUESTS: usize = 16;

/// The request `id` as the game recorded it, if it did.
fn recorded<'a>(record: &'a GameRecord, id: &str) -> Option<&'a AppliedRequest> {
    if id.is_empty() {
        return None;
    }
    record.requests.iter().find(|r| r.id == id)
}

/// Records request `id` as applied at `version` (and refused with
/// `refusal`, if it was), forgetting the oldest beyond [`RECORDED_REQUESTS`].
fn record_request(record: &mut GameRecord, id: &str, version: u64, refusal: Option<&ServiceError>) {
    let applied = AppliedRequest {
        id: id.to_owned(),
        version,
        refused: refusal.map_or(ErrorCode::Unspecified, |r| r.code) as i32,
        message: refusal.map(|r| r.message.clone()).unwrap_or_default(),
    };
    record.requests.push(applied);
    if record.requests.len() > RECORDED_REQUESTS {
        let excess = record.requests.len() - RECORDED_REQUESTS;
        record.requests.drain(..excess);
    }
}

/// Each event encoded once, for the store and for every watcher.
fn committed(events: &[WatchEvent]) -> Vec<Committed> {
    events.iter().map(|e| Committed { version: e.version, encoded: Bytes::from(e.encode_to_vec()) }).collect()
}

/// The refusal a recorded command met after its commit, if any.
fn recorded_refusal(applied: &AppliedRequest) -> Option<ServiceError> {
    match ErrorCode::try_from(applied.refused) {
        Ok(ErrorCode::Unspecified) => None,
        Ok(code) => Some(ServiceError::new(code, applied.message.clone())),
        Err(_) => Some(ServiceError::new(ErrorCode::Internal, applied.message.clone())),
    }
}

/// How one commit of a command went.
enum Attempt {
    /// Written: the game as committed, and the refusal the command still
    /// gets (a move after the flag fell commits the loss on time).
    Committed { cached: Cached, refusal: Option<ServiceError> },
    /// Another writer got there first: read the game again.
    Lost,
    /// The game carries a newer epoch than this shard's.
    StaleEpoch { stored: u64 },
    /// The store failed; the commit may or may not have been made.
    Failed(ServiceError),
}

/// What a command did, for its caller.
#[derive(Debug)]
pub struct Done {
    pub version: u64,
    /// The game as committed, shared with the shard's cache.
    pub live: Arc<LiveGame>,
}

#[derive(Debug)]
pub struct Shard {
    pub store: Arc<dyn GameStore>,
    pub bus: Arc<dyn EventBus>,
    pub ownership: Arc<Ownership>,
    pub config: GameConfig,
    pub metrics: Arc<Metrics>,
    engines: EnginePool,
    games: GameCache,
    watchers: Watchers,
    timers: Timers,
    /// Games whose computer move the engine is being asked for.
    thinking: InFlight,
    /// Finished games being published to the stream.
    publishing: InFlight,
    /// Public events waiting for the stream.
    public: PublicStream,
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
            games: GameCache::default(),
            watchers: Watchers::default(),
            timers: Timers::default(),
            thinking: InFlight::default(),
            publishing: InFlight::default(),
            public: PublicStream::default(),
        }
    }

    fn slot(&self, game: &GameId) -> Arc<tokio::sync::Mutex<Slot>> {
        let (slot, held) = self.games.slot(game);
        self.metrics.games_cached.set(held as i64);
        slot
    }

    async fn load(&self, game: &GameId) -> Result<Option<Cached>, ServiceError> {
        let Some(stored) = self.store.load(game).await.map_err(unavailable)? else { return Ok(None) };
        let record = GameRecord::decode(stored.record.as_slice())
            .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("game {game} is unreadable: {e}")))?;
        let live = LiveGame::from_record(record).map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        Ok(Some(Cached { live: Arc::new(live), version: stored.version }))
    }

    /// The game as last committed, read from the store. Reads never take
    /// the game's lock: a spectator or a reconnecting player is served the
    /// latest commit without holding up a command on the game.
    ///
    /// What is shown is as durable as a commit: a commit whose answer
    /// failed (its replicas not reached) is in the primary, and must not be
    /// shown as played before it is written where a failover keeps it.
    pub async fn current(&self, game: &GameId) -> Result<(LiveGame, u64), ServiceError> {
        let cached = self.load(game).await?.ok_or_else(|| not_found(game))?;
        self.store.confirm_durable(game).await.map_err(unavailable)?;
        Ok((Arc::unwrap_or_clone(cached.live), cached.version))
    }

    /// The game as `player` (or a spectator, for `None`) may see it.
    pub async fn state_for(&self, game: &GameId, player: Option<&PlayerId>) -> Result<GameState, ServiceError> {
        let (live, version) = self.current(game).await?;
        let viewer = player.and_then(|p| live.color_of(p)).map_or(Viewer::Spectator, Viewer::Seat);
        let now = self.store.now_ms().await.map_err(unavailable)?;
        Ok(audience::state_for(&live, version, viewer, now, &self.config.settings.timeouts))
    }

    /// The games `player` sits in that have not ended, the latest first.
    /// The store's index may still hold a game that ended (or never
    /// seated them): each is read, and those are forgotten.
    pub async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, ServiceError> {
        let noted = self.store.seats_of(player).await.map_err(unavailable)?;
        let mut seated = Vec::with_capacity(noted.len());
        for game in noted {
            let live = self.load(&game).await?;
            if live.is_some_and(|c| c.live.color_of(player).is_some() && c.live.status() != Status::Ended) {
                seated.push(game);
            } else if let Err(error) = self.store.forget_seat(player, &game).await {
                debug!(game = %game, %error, "could not forget a seat");
            }
        }
        Ok(seated)
    }

    /// The games being played now, on any shard, from the store's index.
    /// An entry that does not read is left out (and logged).
    pub async fn games_in_play(&self) -> Result<Vec<GameInPlay>, ServiceError> {
        let listed = self.store.games_in_play().await.map_err(unavailable)?;
        let mut games = Vec::with_capacity(listed.len());
        for (game, entry) in listed {
            match GameInPlay::decode(entry.as_slice()) {
                Ok(entry) => games.push(entry),
                Err(error) => warn!(game = %game, %error, "an entry of the games in play does not read"),
            }
        }
        Ok(games)
    }

    /// Notes the people seated in `live` in the store's index of seats,
    /// before the commit that seats them: the index may list a game that
    /// never came to be, never miss one that did.
    async fn note_seats(&self, live: &LiveGame) -> Result<(), ServiceError> {
        let game =
            GameId::parse(&live.record.game_id).map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        for player in live.people() {
            self.store.note_seat(&player, &game, SEAT_NOTED_FOR).await.map_err(unavailable)?;
        }
        Ok(())
    }

    /// Creates a game owned by this shard: the one `request.game_id` names
    /// (refused with `NOT_OWNER` if another shard owns it), or one drawn
    /// here. A create sent again with the same id and request id answers
    /// with the game the first one made.
    pub async fn create(self: &Arc<Self>, request: &CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        let spec = NewGame::from_request(request)?;
        let (game, epoch) = if request.game_id.is_empty() {
            let epoch = self.ownership.epoch().ok_or_else(|| ServiceError::not_owner(None))?;
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
            (game, epoch)
        } else {
            let game =
                GameId::parse(&request.game_id).map_err(|e| ServiceError::new(ErrorCode::BadRequest, e.to_string()))?;
            let epoch = self.ownership.check_fresh(&game).await?;
            (game, epoch)
        };
        if !request.request_id.is_empty() {
            if let Some(created) = self.created_by(&game, &spec, &request.request_id).await? {
                return Ok(created);
            }
        }
        let code = create::random_code(&mut rand::rng());
        let code = if spec.computer.is_none() { self.claim_code(&game, code).await? } else { String::new() };
        let now = self.store.now_ms().await.map_err(unavailable)?;
        let (mut record, color) = create::new_record(&game, &code, &spec, now, &mut rand::rng());
        if !request.request_id.is_empty() {
            record_request(&mut record, &request.request_id, 1, None);
        }
        let live = LiveGame::from_record(record).map_err(|e| ServiceError::new(ErrorCode::Internal, e.to_string()))?;
        let version = match self.commit_new(&game, live.clone(), epoch, now).await {
            Ok(version) => version,
            Err(error) => {
                // This very commit, its answer lost, or a first attempt may have made it.
                let made = if request.request_id.is_empty() {
                    None
                } else {
                    self.created_by(&game, &spec, &request.request_id).await.ok().flatten()
                };
                if !code.is_empty() && made.as_ref().is_none_or(|made| made.code != code) {
                    // The code claimed here names no game.
                    let _ = self.store.release_code(&code).await;
                }
                return made.ok_or(error);
            }
        };
        info!(game = %game, variant = live.variant().name(), computer = spec.computer.is_some(), "game created");
        let state = audience::state_for(&live, version, Viewer::Seat(color), now, &self.config.settings.timeouts);
        Ok(CreateGameResponse {
            game_id: game.to_string(),
            code,
            color: color_to_wire(color) as i32,
            state: Some(state),
        })
    }

    /// The answer to a create already made under `request_id`, if `game`
    /// was made by it; the creator's view of the game as it is now.
    async fn created_by(
        self: &Arc<Self>,
        game: &GameId,
        spec: &NewGame,
        request_id: &str,
    ) -> Result<Option<CreateGameResponse>, ServiceError> {
        let Some(cached) = self.load(game).await? else { return Ok(None) };
        self.store.confirm_durable(game).await.map_err(unavailable)?;
        let made_here = recorded(&cached.live.record, request_id).is_some_and(|r| r.version == 1);
        let Some(color) = cached.live.color_of(&spec.player).filter(|_| made_here) else {
            return Err(ServiceError::new(ErrorCode::Conflict, format!("game {game} already exists")));
        };
        let now = self.store.now_ms().await.map_err(unavailable)?;
        // The create's first answer may have been lost, and with it its public events.
        self.republish_public(game, &cached.live.record, 1, cached.live.status() == Status::Ended);
        let state =
            audience::state_for(&cached.live, cached.version, Viewer::Seat(color), now, &self.config.settings.timeouts);
        Ok(Some(CreateGameResponse {
            game_id: game.to_string(),
            code: cached.live.record.code.clone(),
            color: color_to_wire(color) as i32,
            state: Some(state),
        }))
    }

    /// Seats `player` in the open game `code` names. The code keeps naming
    /// the game until it expires, so a join sent again finds its game (and
    /// answers as the first did), and anyone else learns the game is full.
    pub async fn join(
        self: &Arc<Self>,
        code: &str,
        player: PlayerId,
        name: String,
        request_id: &str,
    ) -> Result<JoinGameResponse, ServiceError> {
        let game = self
            .store
            .resolve_code(code)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| ServiceError::new(ErrorCode::NotFound, "no open game has that code"))?;
        self.store.note_seat(&player, &game, SEAT_NOTED_FOR).await.map_err(unavailable)?;
        let done = self.execute(&game, Command::Join { player: player.clone(), name }, request_id).await?;
        let color = done.live.color_of(&player).ok_or_else(|| ServiceError::new(ErrorCode::Internal, "seat lost"))?;
        let now = self.store.now_ms().await.map_err(unavailable)?;
        let state =
            audience::state_for(&done.live, done.version, Viewer::Seat(color), now, &self.config.settings.timeouts);
        Ok(JoinGameResponse { game_id: game.to_string(), color: color_to_wire(color) as i32, state: Some(state) })
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
        self.note_seats(&live).await?;
        let events = [Event::Reset];
        let events = self.encode_events(&live, &events, 0, now);
        let encoded = committed(&events);
        let due = deadlines::next_due(&live, &self.config.settings.timeouts);
        let commit = Commit {
            game: game.clone(),
            expected_version: 0,
            epoch,
            record: live.record.encode_to_vec(),
            events: encoded.iter().map(|e| e.encoded.to_vec()).collect(),
            due_at_ms: due,
            finished: false,
            expire_after: None,
            in_play: live.in_play_entry(),
        };
        let version = match self.store.commit(commit).await {
            Ok(version) => {
                debug!(target: COMMITS, game = %game, from = 0, to = version, epoch, "game committed");
                version
            }
            Err(CommitError::VersionConflict { .. }) => {
                return Err(ServiceError::new(ErrorCode::Conflict, format!("game {game} already exists")))
            }
            Err(error) => return Err(unavailable(error)),
        };
        if self.ownership.owns(game) {
            let slot = self.slot(game);
            let mut slot = slot.lock().await;
            self.after_commit(game, &live, &events, encoded, due, now);
            slot.cached = Some(Cached { live: Arc::new(live), version });
        }
        Ok(version)
    }

    /// Runs a command on an owned game until it is committed or refused.
    /// With a `request_id` (empty: none), the commit records it with its
    /// outcome, and the same id again answers with that outcome and
    /// changes nothing.
    pub async fn execute(
        self: &Arc<Self>,
        game: &GameId,
        command: Command,
        request_id: &str,
    ) -> Result<Done, ServiceError> {
        let entered = std::time::Instant::now();
        self.ownership.check_fresh(game).await?;
        // Games taken over from a shard with a newer epoch carry it.
        self.ownership.outrank_departed().await.map_err(unavailable)?;
        let mut epoch = self.ownership.check(game)?;
        let slot = self.slot(game);
        let mut slot = slot.lock().await;
        for _ in 0..COMMIT_ATTEMPTS {
            // Taken out of the slot: whatever is not committed goes back
            // only as the decision says.
            let start = match slot.cached.take() {
                Some(cached) => Start::Held(cached),
                None => {
                    self.note_public_reread(game);
                    Start::Read(self.load(game).await?.ok_or_else(|| not_found(game))?)
                }
            };
            let now = self.store.now_ms().await.map_err(unavailable)?;
            // The time since the command came in is not the mover's: `now`
            // may be read after waiting for the game or for the store.
            let command_now = command.clone().waited_also(entered.elapsed());
            let proposal = match decide(start, command_now, request_id, now, &self.config.settings.timeouts) {
                Decision::Commit(proposal) => proposal,
                Decision::ReadAgain => continue,
                Decision::Refused { keep, refusal } => {
                    slot.cached = Some(keep);
                    return Err(refusal);
                }
                Decision::Answered { keep, answer, republish } => {
                    let live = Arc::clone(&keep.live);
                    slot.cached = Some(keep);
                    self.store.confirm_durable(game).await.map_err(unavailable)?;
                    if matches!(command, Command::Rematch { .. }) && !live.record.rematch_game_id.is_empty() {
                        // The agreement's first answer was lost, and the
                        // rematch may not be made yet.
                        self.create_rematch(&live, now).await?;
                    }
                    if let Some(through) = republish {
                        self.republish_public(game, &live.record, through, live.status() == Status::Ended);
                    }
                    return answer;
                }
            };
            match self.commit_proposal(game, epoch, *proposal, now).await {
                Attempt::Committed { cached, refusal } => {
                    let live = Arc::clone(&cached.live);
                    let version = cached.version;
                    slot.cached = Some(cached);
                    return refusal.map_or(Ok(Done { version, live }), Err);
                }
                Attempt::Lost => {}
                Attempt::StaleEpoch { stored } => epoch = self.take_newer_epoch(game, epoch, stored).await?,
                Attempt::Failed(error) => return Err(error),
            }
        }
        Err(ServiceError::new(ErrorCode::Unavailable, "the game is changing too fast; try again"))
    }

    /// Commits a decided change and, if it is written, sets off what
    /// follows it (still under the game's lock, so watchers get events in
    /// order).
    async fn commit_proposal(self: &Arc<Self>, game: &GameId, epoch: u64, proposal: Proposal, now: u64) -> Attempt {
        let Proposal { live, from_version: version, was_ended, mut changes } = proposal;
        let ended = live.status() == Status::Ended;
        let events = self.encode_events(&live, &changes.events, version, now);
        let encoded = committed(&events);
        let due = deadlines::next_due(&live, &self.config.settings.timeouts);
        let commit = Commit {
            game: game.clone(),
            expected_version: version,
            epoch,
            record: live.record.encode_to_vec(),
            events: encoded.iter().map(|e| e.encoded.to_vec()).collect(),
            due_at_ms: due,
            // Into the outbox: a game that just ended is published, and
            // the rematch agreed is made, by whoever owns the game then.
            finished: (ended && !was_ended) || changes.rematch,
            expire_after: ended.then(|| Duration::from_millis(self.config.settings.finished_ttl_ms)),
            in_play: live.in_play_entry(),
        };
        match self.store.commit(commit).await {
            Ok(committed) => {
                debug!(target: COMMITS, game = %game, from = version, to = committed, epoch, "game committed");
                let version = committed;
                let moves = changes.events.iter().filter(|e| matches!(e, Event::Moved { .. })).count();
                self.metrics.moves.inc_by(moves as u64);
                if ended && !was_ended {
                    self.metrics.games_finished.inc();
                }
                if changes.rematch {
                    // A follow-up of the commit, made before anyone hears
                    // of it so both players can open it at once; if it
                    // cannot be made now, the game waits in the outbox
                    // until the sweep makes it.
                    if let Err(error) = self.create_rematch(&live, now).await {
                        warn!(game = %game, %error, "rematch not made yet; the sweep will make it");
                    }
                }
                let live = Arc::new(live);
                self.after_commit(game, &live, &events, encoded, due, now);
                Attempt::Committed { cached: Cached { live, version }, refusal: changes.refusal.take().map(Into::into) }
            }
            Err(CommitError::VersionConflict { current }) => {
                debug!(game = %game, expected = version, current, "commit lost a race; reading again");
                self.metrics.commit_conflicts.inc();
                Attempt::Lost
            }
            Err(CommitError::StaleEpoch { stored }) => {
                self.metrics.commit_conflicts.inc();
                Attempt::StaleEpoch { stored }
            }
            Err(CommitError::Store(error)) => {
                // Applied or not, the commit's public events are read back
                // from the store in their place in the game's queue, before
                // any later commit's.
                if !events.is_empty() {
                    self.republish_public(game, &live.record, version + events.len() as u64, ended);
                }
                self.recover_events(game.clone(), version);
                Attempt::Failed(unavailable(error))
            }
        }
    }

    /// After a commit refused for a newer epoch than `epoch` (`stored`):
    /// the epoch to try again with, if this shard still owns the game by
    /// the current membership (the game was written by a shard that joined
    /// later and has left again).
    async fn take_newer_epoch(&self, game: &GameId, epoch: u64, stored: u64) -> Result<u64, ServiceError> {
        self.ownership.refresh().await.map_err(unavailable)?;
        self.ownership.check(game)?;
        warn!(game = %game, epoch, stored, "game carries a newer epoch; taking a new one");
        self.ownership.reregister().await.map_err(unavailable)?;
        self.ownership.check(game)
    }

    /// Makes the rematch `old` records as agreed, if it is not made yet.
    pub(crate) async fn create_rematch(self: &Arc<Self>, old: &LiveGame, now: u64) -> Result<(), ServiceError> {
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
        events: &[WatchEvent],
        encoded: Vec<Committed>,
        due: Option<u64>,
        now: u64,
    ) {
        self.stream_public(game, &live.record, events, now);
        self.watchers.send(game, encoded);
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
    /// applied. (The public stream reads them back on its own, queued at
    /// the failure: see `commit_proposal`.)
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
                // The commit's answer failed, maybe for want of replicas:
                // its events are shown only once they are as durable as a
                // commit's, or a failover could take back a move players
                // saw played.
                if shard.store.confirm_durable(&game).await.is_err() {
                    continue;
                }
                // A rematch agreed by the commit is made before the
                // players hear of it.
                if let Ok(Some(cached)) = shard.load(&game).await {
                    if !cached.live.record.rematch_game_id.is_empty() {
                        let now = shard.store.now_ms().await.unwrap_or_default();
                        if let Err(error) = shard.create_rematch(&cached.live, now).await {
                            debug!(game = %game, %error, "rematch not made yet; the sweep will make it");
                        }
                    }
                }
                if shard.watchers.watched(&game) {
                    // Only what a watcher can read.
                    let readable = events
                        .into_iter()
                        .filter(|(_, bytes)| WatchEvent::decode(bytes.as_slice()).is_ok())
                        .map(|(version, bytes)| Committed { version, encoded: Bytes::from(bytes) });
                    shard.watchers.send(&game, readable);
                }
                return;
            }
        });
    }

    /// A receiver of the game's live events, created on first use.
    pub fn subscribe(&self, game: &GameId) -> broadcast::Receiver<Committed> {
        self.watchers.subscribe(game)
    }
}
