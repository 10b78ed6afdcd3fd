//! The in-process store behind `fogblast up` on one machine, where running
//! Redis would be one more thing to install. It keeps the Redis adapter's
//! guarantees exactly (version and epoch checks, bounded history with gaps,
//! deadlines, outbox, expiring codes and seats, the games in play, leases and
//! game keys) so that the game
//! service behaves the same on either, and the shared test suite holds both
//! to it.
//!
//! Its one clock is unix milliseconds taken at construction plus the time
//! elapsed on `tokio::time::Instant`: `now_ms` and every expiry read the
//! same clock, so a test that pauses tokio's time sees leases and codes
//! expire exactly when the store's clock says they should.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use fogblast_proto::ids::{GameId, PlayerId, ShardId};
use tokio::time::Instant;

use crate::{
    Commit, CommitError, EventsAfter, GameStore, Member, Membership, StoreError, StoredGame, MAX_IN_PLAY_LISTED,
    MAX_SEATS_LISTED,
};

/// The history kept per game unless [`MemoryStore::with_history`] says
/// otherwise; the Redis adapter uses the same default.
pub(crate) const DEFAULT_HISTORY: usize = 256;

/// Live games, membership and codes held in this process.
#[derive(Debug)]
pub struct MemoryStore {
    history: usize,
    clock: Clock,
    state: Mutex<State>,
}

#[derive(Debug)]
struct Clock {
    base_unix_ms: u64,
    base: Instant,
}

impl Clock {
    fn new() -> Clock {
        // A system clock before 1970 is a broken host, not a reason to
        // panic; the store then simply counts from zero.
        let base_unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, millis);
        Clock { base_unix_ms, base: Instant::now() }
    }

    fn now_ms(&self) -> u64 {
        self.base_unix_ms.saturating_add(millis(self.base.elapsed()))
    }
}

#[derive(Debug, Default)]
struct State {
    games: HashMap<GameId, Game>,
    /// Ordered as Redis orders a sorted set: by score, then by member.
    deadlines: BTreeSet<(u64, GameId)>,
    due_of: HashMap<GameId, u64>,
    /// Ordered by when the game entered the outbox, like the Redis zset.
    outbox: BTreeSet<(u64, GameId)>,
    outbox_of: HashMap<GameId, u64>,
    codes: HashMap<String, (GameId, u64)>,
    /// Each player's noted seats with their expiry (store ms).
    seats: HashMap<PlayerId, HashMap<GameId, u64>>,
    /// Seats noted since expired ones were last cleared from every player.
    seats_noted: usize,
    last_epoch: u64,
    leases: HashMap<ShardId, Lease>,
}

#[derive(Debug)]
struct Game {
    version: u64,
    epoch: u64,
    record: Vec<u8>,
    events: VecDeque<Vec<u8>>,
    expires_at_ms: Option<u64>,
    /// The time to live a finished game waits for until it is published.
    ttl_after_publish_ms: Option<u64>,
    /// Its entry in the index of games being played, while it is played.
    in_play: Option<Vec<u8>>,
}

#[derive(Debug)]
struct Lease {
    addr: String,
    epoch: u64,
    expires_at_ms: u64,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore { history: DEFAULT_HISTORY, clock: Clock::new(), state: Mutex::new(State::default()) }
    }

    /// Keeps the last `n` events of each game (at least one).
    pub fn with_history(mut self, n: usize) -> Self {
        self.history = n.max(1);
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing in a critical section panics midway through a change, so a
        // poisoned lock still guards consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A commit decided and not yet carried out: the game's state after it,
/// but for its events, which are the held ones followed by `new_events`.
#[derive(Debug)]
pub(crate) struct Plan {
    pub game: GameId,
    pub version: u64,
    epoch: u64,
    record: Vec<u8>,
    new_events: Vec<Vec<u8>>,
    due_ms: Option<u64>,
    outbox_ms: Option<u64>,
    expires_at_ms: Option<u64>,
    ttl_after_publish_ms: Option<u64>,
    in_play: Option<Vec<u8>>,
}

/// A game's whole state in the store, for the file adapter to keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GameImage {
    pub version: u64,
    pub epoch: u64,
    pub record: Vec<u8>,
    pub events: Vec<Vec<u8>>,
    pub due_ms: Option<u64>,
    pub outbox_ms: Option<u64>,
    pub expires_at_ms: Option<u64>,
    pub ttl_after_publish_ms: Option<u64>,
    pub in_play: Option<Vec<u8>>,
}

impl MemoryStore {
    /// The game as held now; `None` once it is gone or expired.
    pub(crate) fn image(&self, game: &GameId) -> Option<GameImage> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let due_ms = state.due_of.get(game).copied();
        let outbox_ms = state.outbox_of.get(game).copied();
        let held = state.live_game(game, now)?;
        Some(GameImage {
            version: held.version,
            epoch: held.epoch,
            record: held.record.clone(),
            events: held.events.iter().cloned().collect(),
            due_ms,
            outbox_ms,
            expires_at_ms: held.expires_at_ms,
            ttl_after_publish_ms: held.ttl_after_publish_ms,
            in_play: held.in_play.clone(),
        })
    }

    /// Takes a game back in as it was kept.
    pub(crate) fn restore(&self, game: GameId, image: GameImage) {
        self.state().install(game, image);
    }

    /// `commit` decided without changing anything: refused as `commit`
    /// would be, or the plan that [`MemoryStore::apply`] carries out.
    pub(crate) fn plan(&self, commit: Commit) -> Result<Plan, CommitError> {
        let now = self.clock.now_ms();
        self.state().planned(commit, now)
    }

    /// The game as `plan` will leave it, for the file to take first.
    pub(crate) fn image_after(&self, plan: &Plan) -> GameImage {
        let state = self.state();
        let held = state.games.get(&plan.game).map(|g| g.events.iter()).into_iter().flatten();
        let mut events: Vec<Vec<u8>> = held.chain(&plan.new_events).cloned().collect();
        events.drain(..events.len().saturating_sub(self.history));
        GameImage {
            version: plan.version,
            epoch: plan.epoch,
            record: plan.record.clone(),
            events,
            due_ms: plan.due_ms,
            outbox_ms: plan.outbox_ms,
            expires_at_ms: plan.expires_at_ms,
            ttl_after_publish_ms: plan.ttl_after_publish_ms,
            in_play: plan.in_play.clone(),
        }
    }

    /// Carries out `plan`, made by [`MemoryStore::plan`] with nothing
    /// committed to the game since.
    pub(crate) fn apply(&self, plan: Plan) -> u64 {
        self.state().apply(plan, self.history)
    }

    /// Makes the game exactly `image` (gone, for `None`).
    pub(crate) fn set_image(&self, game: &GameId, image: Option<GameImage>) {
        let mut state = self.state();
        match image {
            Some(image) => state.install(game.clone(), image),
            None => state.remove(game),
        }
    }

    /// The code's game and expiry (store ms), if it is claimed.
    pub(crate) fn code_image(&self, code: &str) -> Option<(GameId, u64)> {
        let now = self.clock.now_ms();
        self.state().codes.get(code).filter(|(_, expires)| *expires > now).cloned()
    }

    pub(crate) fn restore_code(&self, code: String, game: GameId, expires_at_ms: u64) {
        self.state().codes.insert(code, (game, expires_at_ms));
    }

    /// The last membership epoch handed out.
    pub(crate) fn last_epoch(&self) -> u64 {
        self.state().last_epoch
    }

    /// Hands out epochs above `epoch` from now on.
    pub(crate) fn raise_epoch(&self, epoch: u64) {
        let mut state = self.state();
        state.last_epoch = state.last_epoch.max(epoch);
    }

    pub(crate) fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// [`GameStore::postpone`], for the file store to run under its write lock.
    pub(crate) fn postpone_now(&self, game: &GameId, due_ms: u64, to_ms: u64) -> bool {
        let mut state = self.state();
        if state.due_of.get(game) != Some(&due_ms) {
            return false;
        }
        state.set_deadline(game, Some(to_ms));
        true
    }

    /// [`GameStore::mark_published`], for the file store to run under its write lock.
    pub(crate) fn mark_published_now(&self, game: &GameId) {
        let now = self.clock.now_ms();
        let mut state = self.state();
        state.set_outbox(game, None);
        if let Some(stored) = state.games.get_mut(game) {
            if let Some(ttl) = stored.ttl_after_publish_ms.take() {
                stored.expires_at_ms = Some(now.saturating_add(ttl));
            }
        }
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl State {
    /// The game if it exists and has not expired; an expired game is
    /// dropped here, the moment anything looks at it.
    fn live_game(&mut self, game: &GameId, now_ms: u64) -> Option<&mut Game> {
        if self.games.get(game).is_some_and(|g| g.expires_at_ms.is_some_and(|at| at <= now_ms)) {
            self.games.remove(game);
        }
        self.games.get_mut(game)
    }

    fn live_lease(&mut self, shard: &ShardId, now_ms: u64) -> Option<&mut Lease> {
        if self.leases.get(shard).is_some_and(|lease| lease.expires_at_ms <= now_ms) {
            self.leases.remove(shard);
        }
        self.leases.get_mut(shard)
    }

    fn set_deadline(&mut self, game: &GameId, due: Option<u64>) {
        if let Some(old) = self.due_of.remove(game) {
            self.deadlines.remove(&(old, game.clone()));
        }
        if let Some(due) = due {
            self.due_of.insert(game.clone(), due);
            self.deadlines.insert((due, game.clone()));
        }
    }

    fn set_outbox(&mut self, game: &GameId, at: Option<u64>) {
        if let Some(old) = self.outbox_of.remove(game) {
            self.outbox.remove(&(old, game.clone()));
        }
        if let Some(at) = at {
            self.outbox_of.insert(game.clone(), at);
            self.outbox.insert((at, game.clone()));
        }
    }

    /// The commit decided, or why it is refused; nothing is changed.
    /// Deciding a commit apart from applying it lets the file store write
    /// the result before anyone can read it.
    fn planned(&mut self, commit: Commit, now: u64) -> Result<Plan, CommitError> {
        if commit.events.is_empty() && commit.expected_version == 0 {
            return Err(StoreError::new("a new game is committed with at least one event").into());
        }
        let new_version = new_version(commit.expected_version, commit.events.len())?;
        // The epoch is checked before the version, as in the Redis script:
        // a stale owner learns at once that it must let go of the game.
        match self.live_game(&commit.game, now) {
            Some(game) if commit.epoch < game.epoch => return Err(CommitError::StaleEpoch { stored: game.epoch }),
            Some(game) if game.version != commit.expected_version => {
                return Err(CommitError::VersionConflict { current: game.version })
            }
            None if commit.expected_version != 0 => return Err(CommitError::VersionConflict { current: 0 }),
            _ => {}
        }
        let outbox_ms = self.outbox_of.get(&commit.game).copied().or(commit.finished.then_some(now));
        // A finished game waiting in the outbox never expires: publishing
        // starts its time to live.
        let (expires_at_ms, ttl_after_publish_ms) = match commit.expire_after.map(ttl_ms) {
            Some(ttl) if outbox_ms.is_some() => (None, Some(ttl)),
            Some(ttl) => (Some(now.saturating_add(ttl)), None),
            None => (None, None),
        };
        Ok(Plan {
            game: commit.game,
            version: new_version,
            epoch: commit.epoch,
            record: commit.record,
            new_events: commit.events,
            due_ms: commit.due_at_ms,
            outbox_ms,
            expires_at_ms,
            ttl_after_publish_ms,
            in_play: commit.in_play,
        })
    }

    /// Carries out `plan` in place: the held events are kept and the new
    /// ones added, the oldest past `history` dropped.
    fn apply(&mut self, plan: Plan, history: usize) -> u64 {
        self.set_deadline(&plan.game, plan.due_ms);
        self.set_outbox(&plan.game, plan.outbox_ms);
        self.last_epoch = self.last_epoch.max(plan.epoch);
        let game = self.games.entry(plan.game).or_insert_with(|| Game {
            version: 0,
            epoch: 0,
            record: Vec::new(),
            events: VecDeque::new(),
            expires_at_ms: None,
            ttl_after_publish_ms: None,
            in_play: None,
        });
        game.version = plan.version;
        game.epoch = plan.epoch;
        game.record = plan.record;
        let skip = plan.new_events.len().saturating_sub(history);
        game.events.extend(plan.new_events.into_iter().skip(skip));
        let excess = game.events.len().saturating_sub(history);
        game.events.drain(..excess);
        game.expires_at_ms = plan.expires_at_ms;
        game.ttl_after_publish_ms = plan.ttl_after_publish_ms;
        game.in_play = plan.in_play;
        plan.version
    }

    /// Makes the game exactly `image`.
    fn install(&mut self, game: GameId, image: GameImage) {
        self.set_deadline(&game, image.due_ms);
        self.set_outbox(&game, image.outbox_ms);
        self.last_epoch = self.last_epoch.max(image.epoch);
        let held = Game {
            version: image.version,
            epoch: image.epoch,
            record: image.record,
            events: image.events.into(),
            expires_at_ms: image.expires_at_ms,
            ttl_after_publish_ms: image.ttl_after_publish_ms,
            in_play: image.in_play,
        };
        self.games.insert(game, held);
    }

    /// Forgets the game: no record, deadline or outbox entry.
    fn remove(&mut self, game: &GameId) {
        self.set_deadline(game, None);
        self.set_outbox(game, None);
        self.games.remove(game);
    }
}

#[async_trait]
impl Membership for MemoryStore {
    async fn register(&self, shard: &ShardId, addr: &str, ttl: Duration) -> Result<u64, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        state.last_epoch += 1;
        let epoch = state.last_epoch;
        let lease = Lease { addr: addr.to_owned(), epoch, expires_at_ms: now.saturating_add(ttl_ms(ttl)) };
        state.leases.insert(shard.clone(), lease);
        Ok(epoch)
    }

    async fn renew(&self, shard: &ShardId, epoch: u64, ttl: Duration) -> Result<bool, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        match state.live_lease(shard, now) {
            Some(lease) if lease.epoch == epoch => {
                lease.expires_at_ms = now.saturating_add(ttl_ms(ttl));
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn deregister(&self, shard: &ShardId, epoch: u64) -> Result<(), StoreError> {
        let mut state = self.state();
        if state.leases.get(shard).is_some_and(|lease| lease.epoch == epoch) {
            state.leases.remove(shard);
        }
        Ok(())
    }

    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        state.leases.retain(|_, lease| lease.expires_at_ms > now);
        let members = state
            .leases
            .iter()
            .map(|(shard, lease)| Member { shard: shard.clone(), addr: lease.addr.clone(), epoch: lease.epoch })
            .collect();
        Ok(members)
    }
}

#[async_trait]
impl GameStore for MemoryStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(self.clock.now_ms())
    }

    async fn load(&self, game: &GameId) -> Result<Option<StoredGame>, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let stored = state.live_game(game, now).map(|g| StoredGame {
            version: g.version,
            epoch: g.epoch,
            record: g.record.clone(),
        });
        Ok(stored)
    }

    async fn commit(&self, commit: Commit) -> Result<u64, CommitError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let plan = state.planned(commit, now)?;
        Ok(state.apply(plan, self.history))
    }

    async fn events_after(&self, game: &GameId, after_version: u64) -> Result<EventsAfter, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let Some(game) = state.live_game(game, now) else {
            return Ok(EventsAfter::NotFound);
        };
        let current = game.version;
        if after_version >= current {
            return Ok(EventsAfter::Events { current, events: Vec::new() });
        }
        let held = game.events.len() as u64;
        let first = current + 1 - held.min(current);
        if after_version + 1 < first {
            return Ok(EventsAfter::Gap { current });
        }
        let skip = (after_version + 1 - first) as usize;
        let events = game.events.iter().skip(skip).zip(after_version + 1..).map(|(e, v)| (v, e.clone())).collect();
        Ok(EventsAfter::Events { current, events })
    }

    async fn due_games(&self, now_ms: u64, offset: usize, limit: usize) -> Result<Vec<(GameId, u64)>, StoreError> {
        let state = self.state();
        let due = state
            .deadlines
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .skip(offset)
            .take(limit)
            .map(|(due, game)| (game.clone(), *due))
            .collect();
        Ok(due)
    }

    async fn postpone(&self, game: &GameId, due_ms: u64, to_ms: u64) -> Result<bool, StoreError> {
        Ok(self.postpone_now(game, due_ms, to_ms))
    }

    async fn unpublished(&self, offset: usize, limit: usize) -> Result<Vec<GameId>, StoreError> {
        Ok(self.state().outbox.iter().skip(offset).take(limit).map(|(_, game)| game.clone()).collect())
    }

    async fn mark_published(&self, game: &GameId) -> Result<(), StoreError> {
        self.mark_published_now(game);
        Ok(())
    }

    async fn claim_code(&self, code: &str, game: &GameId, ttl: Duration) -> Result<bool, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        if state.codes.get(code).is_some_and(|(_, expires)| *expires > now) {
            return Ok(false);
        }
        state.codes.insert(code.to_owned(), (game.clone(), now.saturating_add(ttl_ms(ttl))));
        Ok(true)
    }

    async fn resolve_code(&self, code: &str) -> Result<Option<GameId>, StoreError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        match state.codes.get(code) {
            Some((game, expires)) if *expires > now => Ok(Some(game.clone())),
            Some(_) => {
                state.codes.remove(code);
                Ok(None)
            }
            None => Ok(None),
        }
    }

    async fn release_code(&self, code: &str) -> Result<(), StoreError> {
        self.state().codes.remove(code);
        Ok(())
    }

    async fn note_seat(&self, player: &PlayerId, game: &GameId, ttl: Duration) -> Result<(), StoreError> {
        let now = self.clock.now_ms();
        self.note_seat_until(player, game, now.saturating_add(ttl_ms(ttl)));
        Ok(())
    }

    async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, StoreError> {
        Ok(self.seats_now(player).into_iter().map(|(game, _)| game).collect())
    }

    async fn forget_seat(&self, player: &PlayerId, game: &GameId) -> Result<(), StoreError> {
        let mut state = self.state();
        if let Some(seats) = state.seats.get_mut(player) {
            seats.remove(game);
            if seats.is_empty() {
                state.seats.remove(player);
            }
        }
        Ok(())
    }

    async fn games_in_play(&self) -> Result<Vec<(GameId, Vec<u8>)>, StoreError> {
        let now = self.clock.now_ms();
        let state = self.state();
        let listed = state
            .games
            .iter()
            .filter(|(_, game)| game.expires_at_ms.is_none_or(|at| at > now))
            .filter_map(|(id, game)| Some((id.clone(), game.in_play.clone()?)))
            .take(MAX_IN_PLAY_LISTED)
            .collect();
        Ok(listed)
    }
}

/// Every this many seats noted, expired seats are cleared from every
/// player, so players who never come back cost nothing for long.
const SEATS_CLEARED_EVERY: usize = 4_096;

impl MemoryStore {
    pub(crate) fn note_seat_until(&self, player: &PlayerId, game: &GameId, expires_at_ms: u64) {
        let now = self.clock.now_ms();
        let mut state = self.state();
        state.seats_noted += 1;
        if state.seats_noted >= SEATS_CLEARED_EVERY {
            state.seats_noted = 0;
            state.seats.retain(|_, seats| {
                seats.retain(|_, expires| *expires > now);
                !seats.is_empty()
            });
        }
        let seats = state.seats.entry(player.clone()).or_default();
        seats.retain(|_, expires| *expires > now);
        seats.insert(game.clone(), expires_at_ms);
    }

    /// The player's live seats with their expiry, the latest first.
    pub(crate) fn seats_now(&self, player: &PlayerId) -> Vec<(GameId, u64)> {
        let now = self.clock.now_ms();
        let state = self.state();
        let Some(seats) = state.seats.get(player) else { return Vec::new() };
        let mut live: Vec<(GameId, u64)> =
            seats.iter().filter(|(_, expires)| **expires > now).map(|(g, e)| (g.clone(), *e)).collect();
        live.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        live.truncate(MAX_SEATS_LISTED);
        live
    }
}

/// The version after a commit of `events` events, shared with the Redis
/// adapter so both refuse the same impossible commits.
pub(crate) fn new_version(expected: u64, events: usize) -> Result<u64, StoreError> {
    u64::try_from(events)
        .ok()
        .and_then(|n| expected.checked_add(n))
        .ok_or_else(|| StoreError::new(format!("version overflow after {expected}")))
}

/// A TTL in whole milliseconds, at least one: Redis refuses a zero `PX`,
/// and both adapters must agree on what a tiny TTL means.
pub(crate) fn ttl_ms(ttl: Duration) -> u64 {
    millis(ttl).max(1)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
