//! One Watch stream per game per gateway, fanned out to every local socket
//! of that game with its audience's frame. A feed keeps its last events, so
//! a socket that resumes after a short drop is replayed exactly what it
//! missed without asking the shard. When the owning shard changes or
//! fails, the feed resumes on the new owner from its last version; when
//! its last socket leaves, it stops.
//!
//! Feeds also report presence: when a player's last socket on a game they
//! are seated in goes, the game service is told, and the opponent hears
//! `opponent_gone`. A player reported here is present only on a lease,
//! which `presence.rs` renews while they stay, so a gateway that dies
//! without a word leaves its players gone once their leases lapse.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use axum::extract::ws::Utf8Bytes;
use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::event_payload::Kind;
use fogblast_proto::game::{watch_event, Audience, AudienceEvent, Color, Command, GameState, WatchRequest};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_protocol::ServerFrame;
use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;
use tracing::{debug, warn};

use crate::conn::Conn;
use crate::frames;
use crate::metrics::Metrics;
use fogblast_routing::Router;

/// Events kept per feed for sockets that resume after a short drop; a
/// longer gap is answered with the whole state. Kept small: a gateway
/// holds thousands of games, and each event is three rendered frames
/// (sixteen are eight moves a side, a drop of many seconds even in bullet).
const RECENT: usize = 16;

/// Which of an event's three frames a socket gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seat {
    White,
    Black,
    Spectator,
}

impl Seat {
    pub fn of(audience: Audience) -> Seat {
        match audience {
            Audience::WhiteSeat => Seat::White,
            Audience::BlackSeat => Seat::Black,
            _ => Seat::Spectator,
        }
    }

    fn index(self) -> usize {
        match self {
            Seat::White => 0,
            Seat::Black => 1,
            Seat::Spectator => 2,
        }
    }
}

/// What taking a subscriber off a feed left behind.
struct Detached {
    /// The feed has no subscribers left.
    emptied: bool,
    /// The seated player it was the last socket of.
    last_of_player: Option<PlayerId>,
}

struct Subscriber {
    conn: Arc<Conn>,
    seat: Seat,
    player: Option<PlayerId>,
    /// Events up to this version were already given to the socket.
    seen: u64,
}

#[derive(Default)]
struct FeedState {
    subscribers: HashMap<u64, Subscriber>,
    recent: VecDeque<(u64, [Option<Utf8Bytes>; 3])>,
    last: u64,
    task: Option<JoinHandle<()>>,
    /// A seat is the computer's.
    computer: bool,
    /// The game has ended.
    ended: bool,
}

struct Feed {
    game: GameId,
    state: Mutex<FeedState>,
}

pub struct Feeds {
    router: Arc<Router>,
    metrics: Arc<Metrics>,
    feeds: Mutex<HashMap<GameId, Arc<Feed>>>,
    me: Weak<Feeds>,
    /// Where presence reports run, so a draining gateway waits for them
    /// with its sessions.
    tasks: TaskTracker,
    /// How long a report of a player here holds without a renewal.
    presence_lease_ms: u64,
}

impl std::fmt::Debug for Feeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeds").finish_non_exhaustive()
    }
}

impl Feeds {
    pub fn new(router: Arc<Router>, metrics: Arc<Metrics>, tasks: TaskTracker, presence_lease_ms: u64) -> Arc<Feeds> {
        Arc::new_cyclic(|me| Feeds {
            router,
            metrics,
            feeds: Mutex::default(),
            me: me.clone(),
            tasks,
            presence_lease_ms,
        })
    }

    fn feed(&self, game: &GameId) -> Arc<Feed> {
        let mut feeds = self.feeds.lock().expect("feeds lock");
        let feed = feeds
            .entry(game.clone())
            .or_insert_with(|| Arc::new(Feed { game: game.clone(), state: Mutex::default() }))
            .clone();
        self.metrics.game_feeds.set(feeds.len() as i64);
        feed
    }

    /// Sends `conn` every event after `seen` and each new one, with the
    /// frame for `seat`. The caller has given the socket the game up to
    /// `seen` (a state, or the events it already had). Returns `false` when
    /// the feed no longer holds all events after `seen`, so the caller
    /// must send a fresh state instead.
    pub fn subscribe(&self, game: &GameId, conn: &Arc<Conn>, seat: Seat, player: Option<PlayerId>, seen: u64) -> bool {
        let feed = self.feed(game);
        let mut state = feed.state.lock().expect("feed lock");
        let running = state.task.is_some();
        if running {
            let oldest = state.recent.front().map_or(state.last + 1, |(v, _)| *v);
            if seen + 1 < oldest && seen < state.last {
                return false;
            }
            for (v, frames) in &state.recent {
                if *v > seen {
                    if let Some(frame) = &frames[seat.index()] {
                        conn.send(frame.clone());
                    }
                }
            }
        }
        let seen = if running { seen.max(state.last) } else { seen };
        let seated_player = if seat == Seat::Spectator { None } else { player.clone() };
        let first_for_player = seated_player.as_ref().is_some_and(|p| {
            !state.subscribers.values().any(|s| s.seat != Seat::Spectator && s.player.as_ref() == Some(p))
        });
        let subscriber = Subscriber { conn: conn.clone(), seat, player: seated_player.clone(), seen };
        if state.subscribers.insert(conn.id, subscriber).is_none() {
            conn.following.fetch_add(1, Ordering::Relaxed);
        }
        if !running {
            state.last = seen;
            let feeds = self.me.clone();
            let feed_for_task = feed.clone();
            state.task = Some(tokio::spawn(async move { follow(feeds, feed_for_task).await }));
        }
        drop(state);
        if let (true, Some(player)) = (first_for_player, seated_player) {
            self.report_presence(game, &player, true);
        }
        true
    }

    /// [`Feeds::subscribe`] for a socket that resumes at `seen` after the
    /// store answered with the game at version `stored`: when the feed is
    /// running but has not yet heard up to `stored` (its stream lags, or
    /// watches a shard that missed the commits), the replay would leave the
    /// socket behind, so this returns `false` and the caller sends the
    /// stored state instead.
    pub fn resume(
        &self,
        game: &GameId,
        conn: &Arc<Conn>,
        seat: Seat,
        player: Option<PlayerId>,
        seen: u64,
        stored: u64,
    ) -> bool {
        {
            let feed = self.feed(game);
            let state = feed.state.lock().expect("feed lock");
            if state.task.is_some() && state.last < stored {
                return false;
            }
        }
        self.subscribe(game, conn, seat, player, seen)
    }

    /// What the feed knows of the game from a state a socket was given:
    /// whether the computer plays in it, whether it has ended.
    pub fn note(&self, game: &GameId, state: &GameState) {
        let feed = self.feed(game);
        let mut feed_state = feed.state.lock().expect("feed lock");
        feed_state.computer = [&state.white, &state.black].iter().any(|p| p.as_ref().is_some_and(|p| p.computer));
        feed_state.ended |= state.status() == fogblast_proto::game::Status::Ended;
    }

    /// Live games against the computer in which a socket here from `ip`
    /// holds a seat, `except` one.
    pub fn computer_games_from(&self, ip: std::net::IpAddr, except: Option<&GameId>) -> Vec<GameId> {
        let feeds = self.feeds.lock().expect("feeds lock");
        feeds
            .values()
            .filter(|feed| Some(&feed.game) != except)
            .filter(|feed| {
                let state = feed.state.lock().expect("feed lock");
                state.computer
                    && !state.ended
                    && state.subscribers.values().any(|s| s.seat != Seat::Spectator && s.conn.ip == Some(ip))
            })
            .map(|feed| feed.game.clone())
            .collect()
    }

    /// Whether this gateway's feed of `game` has seen it end.
    pub fn ended(&self, game: &GameId) -> bool {
        let feeds = self.feeds.lock().expect("feeds lock");
        feeds.get(game).is_some_and(|feed| feed.state.lock().expect("feed lock").ended)
    }

    /// The game is gone from the game service (a finished game's record
    /// expired): every socket following it is told, and the feed goes, so
    /// a later follower starts a new one instead of joining one that no
    /// longer hears anything.
    fn gone(&self, feed: &Arc<Feed>) {
        let subscribers: Vec<Arc<Conn>> = {
            let mut state = feed.state.lock().expect("feed lock");
            state.task = None;
            state.subscribers.drain().map(|(_, s)| s.conn).collect()
        };
        let message = format!("game {} is no longer live; finished games are in the archive", feed.game);
        let frame = frames::text(&ServerFrame::error(ErrorCode::NotFound, message, None));
        for conn in subscribers {
            conn.following.fetch_sub(1, Ordering::Relaxed);
            conn.send(frame.clone());
        }
        let mut feeds = self.feeds.lock().expect("feeds lock");
        if feeds.get(&feed.game).is_some_and(|f| Arc::ptr_eq(f, feed))
            && feed.state.lock().expect("feed lock").subscribers.is_empty()
        {
            feeds.remove(&feed.game);
        }
        self.metrics.game_feeds.set(feeds.len() as i64);
    }

    /// Whether `conn` already follows `game`.
    pub fn follows(&self, game: &GameId, conn: &Conn) -> bool {
        let feeds = self.feeds.lock().expect("feeds lock");
        feeds.get(game).is_some_and(|feed| feed.state.lock().expect("feed lock").subscribers.contains_key(&conn.id))
    }

    /// Stops sending `conn` the games it follows that have ended (it had
    /// their end already), making room under the cap of games a socket
    /// follows.
    pub fn unsubscribe_ended(&self, conn: &Conn) {
        let feeds: Vec<Arc<Feed>> = self.feeds.lock().expect("feeds lock").values().cloned().collect();
        for feed in feeds {
            let ended = {
                let state = feed.state.lock().expect("feed lock");
                state.ended && state.subscribers.contains_key(&conn.id)
            };
            if ended {
                self.remove(&feed, conn.id);
            }
        }
    }

    /// Stops sending any game to `conn` (it closed).
    pub fn unsubscribe_all(&self, conn: &Conn) {
        let feeds: Vec<Arc<Feed>> = self.feeds.lock().expect("feeds lock").values().cloned().collect();
        for feed in feeds {
            self.remove(&feed, conn.id);
        }
    }

    fn remove(&self, feed: &Arc<Feed>, conn: u64) {
        let Some(detached) = self.detach(feed, conn) else { return };
        if detached.emptied {
            self.forget_if_unused(feed);
        }
        if let Some(player) = detached.last_of_player {
            self.report_presence(&feed.game, &player, false);
        }
    }

    /// Takes `conn` off `feed`, stopping the feed's stream when it was the
    /// last subscriber.
    fn detach(&self, feed: &Arc<Feed>, conn: u64) -> Option<Detached> {
        let mut state = feed.state.lock().expect("feed lock");
        let gone = state.subscribers.remove(&conn)?;
        gone.conn.following.fetch_sub(1, Ordering::Relaxed);
        let last_for_player =
            gone.player.as_ref().is_some_and(|p| !state.subscribers.values().any(|s| s.player.as_ref() == Some(p)));
        let emptied = state.subscribers.is_empty();
        if emptied {
            if let Some(task) = state.task.take() {
                task.abort();
            }
        }
        Some(Detached { emptied, last_of_player: gone.player.filter(|_| last_for_player) })
    }

    /// Drops `feed` from the map if it is still the game's feed there and
    /// no one subscribed again in between. By identity, not by key: the
    /// game may have a newer feed by now (this one went, and a later
    /// subscriber made another), which must not be dropped with
    /// subscribers on it, its stream running unseen for good.
    fn forget_if_unused(&self, feed: &Arc<Feed>) {
        let mut feeds = self.feeds.lock().expect("feeds lock");
        if feeds.get(&feed.game).is_some_and(|f| Arc::ptr_eq(f, feed))
            && feed.state.lock().expect("feed lock").subscribers.is_empty()
        {
            feeds.remove(&feed.game);
        }
        self.metrics.game_feeds.set(feeds.len() as i64);
    }

    /// Every seated player on a socket here, with their game.
    pub fn seats(&self) -> Vec<(GameId, PlayerId)> {
        let feeds = self.feeds.lock().expect("feeds lock");
        let mut seats = Vec::new();
        for feed in feeds.values() {
            let state = feed.state.lock().expect("feed lock");
            let mut players: Vec<&PlayerId> = state
                .subscribers
                .values()
                .filter(|s| s.seat != Seat::Spectator)
                .filter_map(|s| s.player.as_ref())
                .collect();
            players.sort();
            players.dedup();
            seats.extend(players.into_iter().map(|p| (feed.game.clone(), p.clone())));
        }
        // In the same order every time, so renewals spread over a period
        // reach each seat about one period apart.
        seats.sort();
        seats
    }

    /// Whether `player` holds its seat in `game` on a socket here.
    pub fn seated_here(&self, game: &GameId, player: &PlayerId) -> bool {
        let feeds = self.feeds.lock().expect("feeds lock");
        feeds.get(game).is_some_and(|feed| {
            let state = feed.state.lock().expect("feed lock");
            state.subscribers.values().any(|s| s.seat != Seat::Spectator && s.player.as_ref() == Some(player))
        })
    }

    /// Tells the game whether `player` is here. Reports run concurrently
    /// and may be answered in any order (a tab opened and closed at once
    /// sends two), so a report no longer true when its turn comes is left
    /// to the report of the change that made it so, and one that became
    /// untrue while it was on its way goes again: the last word the game
    /// hears is the truth.
    pub fn report_presence(&self, game: &GameId, player: &PlayerId, connected: bool) {
        let Some(feeds) = self.me.upgrade() else { return };
        let router = self.router.clone();
        let (game, player) = (game.clone(), player.clone());
        self.tasks.spawn(async move {
            let mut connected = connected;
            for _ in 0..4 {
                // First pass: the truth changed since, and the change's own
                // report says so. Later passes: what was said still holds.
                if feeds.seated_here(&game, &player) != connected {
                    break;
                }
                let lease_ms = if connected { feeds.presence_lease_ms } else { 0 };
                let request = Command::new(game.to_string(), player.to_string(), Action::presence(connected, lease_ms));
                let result = router.command(request).await;
                if let Err(error) = result {
                    if error.code != ErrorCode::GameOver {
                        debug!(game = %game, %error, "presence not reported");
                    }
                    break;
                }
                // Say the opposite next, if it has become true meanwhile.
                connected = !connected;
            }
        });
    }
}

/// A stream silent this long, heartbeats included (the shard sends one a
/// second), is opened again: its shard froze or the connection was cut
/// without a reset.
const SILENCE: std::time::Duration = std::time::Duration::from_secs(3);
/// How often a feed looks at how long its stream has been silent.
const SILENCE_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Follows the game's Watch stream, on whichever shard owns it, until the
/// feed's last subscriber leaves (which aborts this task).
async fn follow(feeds: Weak<Feeds>, feed: Arc<Feed>) {
    let mut backoff = std::time::Duration::from_millis(50);
    loop {
        let Some(router) = feeds.upgrade().map(|f| f.router.clone()) else { return };
        let after = feed.state.lock().expect("feed lock").last;
        let request = WatchRequest { game_id: feed.game.to_string(), after_version: after };
        // A stream ends by itself when its shard dies or hands the game
        // on, but not when the shard freezes (its sockets stay open) or
        // lags behind a membership change: so the feed also moves when
        // the game's owner by the router's membership changes from the
        // one it had when the stream was asked for.
        let mut membership = router.membership_changes();
        let owner_at_open = router.owner_addr(&feed.game);
        let opened = router.watch(request).await;
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(error) if error.code == ErrorCode::NotFound => {
                warn!(game = %feed.game, "watched game not found: telling its followers");
                if let Some(feeds) = feeds.upgrade() {
                    feeds.gone(&feed);
                }
                return;
            }
            Err(error) => {
                debug!(game = %feed.game, %error, "watch not opened; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(2));
                continue;
            }
        };
        backoff = std::time::Duration::from_millis(50);
        let mut silence = tokio::time::interval_at(tokio::time::Instant::now() + SILENCE_CHECK, SILENCE_CHECK);
        silence.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut heard = tokio::time::Instant::now();
        loop {
            tokio::select! {
                message = stream.next() => match message {
                    Some(Ok(event)) => {
                        heard = tokio::time::Instant::now();
                        deliver(&feeds, &feed, event);
                    }
                    None => break,
                    Some(Err(status)) => {
                        debug!(game = %feed.game, code = ?status.code(), "watch ended; resuming");
                        break;
                    }
                },
                _ = membership.changed() => {
                    if router.owner_addr(&feed.game) != owner_at_open {
                        debug!(game = %feed.game, "the game changed owner; watching the new one");
                        break;
                    }
                }
                _ = silence.tick() => {
                    if heard.elapsed() >= SILENCE {
                        debug!(game = %feed.game, "the watch stream went silent; opening it again");
                        break;
                    }
                }
            }
        }
    }
}

fn deliver(feeds: &Weak<Feeds>, feed: &Feed, event: fogblast_proto::game::WatchEvent) {
    let version = event.version;
    if matches!(event.kind, Some(watch_event::Kind::Heartbeat(_))) {
        return;
    }
    let mut state = feed.state.lock().expect("feed lock");
    if version <= state.last && !matches!(event.kind, Some(watch_event::Kind::Snapshot(_))) {
        return;
    }
    let mut here = None;
    let sent = match event.kind {
        Some(watch_event::Kind::Event(audience_event)) => {
            here = gone_but_here(&audience_event, &state);
            let ended = matches!(audience_event.spectators.as_ref().and_then(|p| p.kind.as_ref()), Some(Kind::End(_)));
            let frames = frames::event(feed.game.as_str(), version, audience_event);
            let mut sent = 0;
            for subscriber in state.subscribers.values_mut() {
                if version > subscriber.seen {
                    subscriber.seen = version;
                    if let Some(frame) = &frames[subscriber.seat.index()] {
                        subscriber.conn.send(frame.clone());
                        sent += 1;
                    }
                }
            }
            state.ended |= ended;
            state.recent.push_back((version, frames));
            if state.recent.len() > RECENT {
                state.recent.pop_front();
            }
            sent
        }
        Some(watch_event::Kind::Snapshot(snapshot)) => {
            // The history had a gap: everyone gets the whole game again.
            let states: [Option<GameState>; 3] = [snapshot.white, snapshot.black, snapshot.spectators];
            let rendered = states.map(|s| s.map(|s| frames::text(&ServerFrame::State(Box::new(frames::state(&s))))));
            let mut sent = 0;
            for subscriber in state.subscribers.values_mut() {
                subscriber.seen = version;
                if let Some(frame) = &rendered[subscriber.seat.index()] {
                    subscriber.conn.send(frame.clone());
                    sent += 1;
                }
            }
            state.recent.clear();
            sent
        }
        Some(watch_event::Kind::Heartbeat(_)) | None => 0,
    };
    state.last = version;
    drop(state);
    if let Some(feeds) = feeds.upgrade() {
        feeds.metrics.frames_out.inc_by(sent);
        if let Some(player) = here {
            feeds.report_presence(&feed.game, &player, true);
        }
    }
}

/// The player an event reports gone while it still holds its seat on a
/// socket here. Presence is reported per gateway: with a tab on each of
/// two gateways, closing one tab reports the player gone; so does a
/// gateway that hears of a dropped socket after the player came back on
/// another. Either way the player is here, and is reported back at once,
/// so that its opponent cannot claim a win from a player still playing.
fn gone_but_here(event: &AudienceEvent, state: &FeedState) -> Option<PlayerId> {
    let payload = event.white.as_ref().or(event.black.as_ref()).or(event.spectators.as_ref())?;
    let Some(Kind::Presence(presence)) = &payload.kind else { return None };
    let seat = match Color::try_from(presence.color) {
        Ok(Color::White) if presence.gone => Seat::White,
        Ok(Color::Black) if presence.gone => Seat::Black,
        _ => return None,
    };
    state.subscribers.values().find(|s| s.seat == seat).and_then(|s| s.player.clone())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use fogblast_proto::game::game_server::{Game, GameServer};
    use fogblast_proto::game::{
        CommandAnswer, CommandCall, CommandResult, CreateGameRequest, CreateGameResponse, EncodedWatchEvent,
        GamesInPlay, GetStateRequest, JoinGameRequest, JoinGameResponse, ListGamesInPlayRequest, ListSeatsRequest,
        ListSeatsResponse, WatchEvent,
    };
    use fogblast_proto::ids::ShardId;
    use fogblast_routing::Membership;
    use fogblast_store::MemoryStore;
    use tonic::{Request, Response, Status};

    use super::*;

    /// A shard whose Watch streams stay open and silent (as a frozen
    /// shard's, or a connection cut without a reset), counting how often
    /// they are opened. It is of a release before the encoded stream, so
    /// these tests also show the feed's fallback to the plain one.
    #[derive(Default)]
    struct SilentShard {
        watches: Arc<AtomicUsize>,
        /// Answer every Watch with `NOT_FOUND` instead, as for a game
        /// whose record expired.
        missing: bool,
    }

    #[allow(clippy::result_large_err)] // the signature tonic gives every call
    fn no<T>() -> Result<Response<T>, Status> {
        Err(Status::unimplemented("not in this test"))
    }

    #[tonic::async_trait]
    impl Game for SilentShard {
        async fn create_game(&self, _: Request<CreateGameRequest>) -> Result<Response<CreateGameResponse>, Status> {
            no()
        }
        async fn join_game(&self, _: Request<JoinGameRequest>) -> Result<Response<JoinGameResponse>, Status> {
            no()
        }
        async fn execute(&self, _: Request<Command>) -> Result<Response<CommandResult>, Status> {
            no()
        }
        type ExecuteStreamStream = futures::stream::Pending<Result<CommandAnswer, Status>>;
        async fn execute_stream(
            &self,
            _: Request<tonic::Streaming<CommandCall>>,
        ) -> Result<Response<Self::ExecuteStreamStream>, Status> {
            no()
        }
        async fn get_state(&self, _: Request<GetStateRequest>) -> Result<Response<GameState>, Status> {
            no()
        }
        async fn list_seats(&self, _: Request<ListSeatsRequest>) -> Result<Response<ListSeatsResponse>, Status> {
            no()
        }
        async fn list_games_in_play(
            &self,
            _: Request<ListGamesInPlayRequest>,
        ) -> Result<Response<GamesInPlay>, Status> {
            no()
        }
        type WatchStream = futures::stream::Pending<Result<WatchEvent, Status>>;
        async fn watch(&self, _: Request<WatchRequest>) -> Result<Response<Self::WatchStream>, Status> {
            self.watches.fetch_add(1, Ordering::Relaxed);
            if self.missing {
                return Err(
                    fogblast_proto::error::ServiceError::new(ErrorCode::NotFound, "no game g-expired").into_status()
                );
            }
            Ok(Response::new(futures::stream::pending()))
        }
        // A shard of an earlier release, without the encoded stream: the
        // feed falls back to the plain one.
        type WatchEncodedStream = futures::stream::Pending<Result<EncodedWatchEvent, Status>>;
        async fn watch_encoded(&self, _: Request<WatchRequest>) -> Result<Response<Self::WatchEncodedStream>, Status> {
            no()
        }
    }

    /// Feeds whose one shard is `shard`, on loopback.
    async fn feeds_on(shard: SilentShard) -> Arc<Feeds> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(GameServer::new(shard))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        let store = Arc::new(MemoryStore::new());
        store.register(&ShardId::parse("only").unwrap(), &addr, Duration::from_secs(60)).await.unwrap();
        let router = Arc::new(Router::new(store, Duration::from_millis(500)).await);
        Feeds::new(router, Arc::new(Metrics::new().unwrap()), TaskTracker::new(), 20_000)
    }

    /// A game that is gone is not followed in silence: its followers hear
    /// `not_found`, and the next follower gets a feed of its own that asks
    /// the shard again, not the dead one.
    #[tokio::test]
    async fn the_followers_of_a_game_that_is_gone_are_told_and_the_feed_goes() {
        let shard = SilentShard { missing: true, ..SilentShard::default() };
        let watches = shard.watches.clone();
        let feeds = feeds_on(shard).await;
        let game = GameId::parse("g-expired").unwrap();
        let (watcher, mut frames, _closed) = Conn::new();
        assert!(feeds.subscribe(&game, &watcher, Seat::Spectator, None, 3));
        let told = tokio::time::timeout(Duration::from_secs(5), frames.recv()).await.expect("told in time").unwrap();
        let told: serde_json::Value = serde_json::from_str(told.as_str()).unwrap();
        assert_eq!((told["t"].as_str(), told["code"].as_str()), (Some("error"), Some("not_found")), "{told}");
        assert!(!feeds.follows(&game, &watcher));
        let (later, _frames, _closed) = Conn::new();
        assert!(feeds.subscribe(&game, &later, Seat::Spectator, None, 3));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while watches.load(Ordering::Relaxed) < 2 {
            assert!(tokio::time::Instant::now() < deadline, "the later follower's feed never asked the shard");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn a_move_at(version: u64) -> WatchEvent {
        use fogblast_proto::game::{EventPayload, MoveEvent};
        let payload = EventPayload {
            kind: Some(Kind::Move(MoveEvent {
                ply: version as u32 - 1,
                uci: Some("e2e4".into()),
                ..Default::default()
            })),
        };
        let event =
            AudienceEvent { white: Some(payload.clone()), black: Some(payload.clone()), spectators: Some(payload) };
        WatchEvent { version, kind: Some(watch_event::Kind::Event(event)) }
    }

    /// A feed keeps only its last `RECENT` events, however long the game:
    /// a socket that resumes within them is sent exactly what it missed,
    /// one that resumes from before them is told to take a whole state.
    #[tokio::test]
    async fn a_feed_keeps_its_last_events_for_resumes_and_no_more() {
        let feeds = feeds_on(SilentShard::default()).await;
        let game = GameId::parse("g-long").unwrap();
        let (watcher, _frames, _closed) = Conn::new();
        assert!(feeds.subscribe(&game, &watcher, Seat::Spectator, None, 0));
        let feed = feeds.feed(&game);
        let last = RECENT as u64 * 5;
        for version in 1..=last {
            deliver(&Arc::downgrade(&feeds), &feed, a_move_at(version));
        }
        let kept: Vec<u64> = feed.state.lock().unwrap().recent.iter().map(|(v, _)| *v).collect();
        assert_eq!(kept, (last - RECENT as u64 + 1..=last).collect::<Vec<_>>());

        let (early, _early_frames, _closed) = Conn::new();
        assert!(
            !feeds.subscribe(&game, &early, Seat::White, None, last - RECENT as u64 - 1),
            "a resume from before the kept events is refused, so the socket is sent the state"
        );
        let (back, mut frames, _closed) = Conn::new();
        assert!(feeds.subscribe(&game, &back, Seat::White, None, last - 3));
        for version in last - 2..=last {
            let frame = frames.try_recv().expect("a missed event replayed");
            let frame: serde_json::Value = serde_json::from_str(frame.as_str()).unwrap();
            assert_eq!((frame["t"].as_str(), frame["v"].as_u64()), (Some("move"), Some(version)), "{frame}");
        }
        assert!(frames.try_recv().is_err(), "only the missed events");
    }

    #[tokio::test]
    async fn computer_games_are_counted_by_address_while_live_and_seated() {
        let feeds = feeds().await;
        let ip: std::net::IpAddr = "192.0.2.7".parse().unwrap();
        let player = PlayerId::parse("aaaaaaaaaaaaaaaa").unwrap();
        let computer = fogblast_proto::game::Player { computer: true, ..Default::default() };
        let human = fogblast_proto::game::Player { id: player.to_string(), ..Default::default() };
        let live = GameState {
            white: Some(human.clone()),
            black: Some(computer),
            status: fogblast_proto::game::Status::Playing as i32,
            ..Default::default()
        };
        let (seated, _frames, _closed) = Conn::from_ip(ip);
        let (watching, _frames2, _closed2) = Conn::from_ip(ip);
        let games: Vec<GameId> = ["g-one", "g-two", "g-watched", "g-human"].map(|g| GameId::parse(g).unwrap()).into();
        for game in &games[..2] {
            feeds.note(game, &live);
            feeds.subscribe(game, &seated, Seat::White, Some(player.clone()), 0);
        }
        feeds.note(&games[2], &live);
        feeds.subscribe(&games[2], &watching, Seat::Spectator, None, 0);
        feeds.note(&games[3], &GameState { black: Some(human), ..live.clone() });
        feeds.subscribe(&games[3], &seated, Seat::White, Some(player.clone()), 0);
        assert_eq!(feeds.computer_games_from(ip, None).len(), 2, "seats against the computer only");
        assert_eq!(feeds.computer_games_from(ip, Some(&games[0])).len(), 1);
        assert!(feeds.computer_games_from("192.0.2.8".parse().unwrap(), None).is_empty());
        feeds.note(&games[1], &GameState { status: fogblast_proto::game::Status::Ended as i32, ..live.clone() });
        assert_eq!(feeds.computer_games_from(ip, None).len(), 1, "an ended game is not counted");
        feeds.unsubscribe_all(&seated);
        assert!(feeds.computer_games_from(ip, None).is_empty());
    }

    #[tokio::test]
    async fn a_socket_leaving_an_old_feed_late_leaves_the_games_newer_feed_alone() {
        let feeds = feeds().await;
        let game = GameId::parse("g-race").unwrap();
        let (first, _first_rx, _first_closed) = Conn::new();
        feeds.subscribe(&game, &first, Seat::Spectator, None, 0);
        assert_eq!(first.following.load(Ordering::Relaxed), 1);
        let old = feeds.feeds.lock().unwrap().get(&game).cloned().expect("the game's feed");
        // The first socket closes: it is taken off the feed, and before the
        // feed is dropped from the map the feed goes (its game expired) and
        // a second socket starts the game's next feed.
        let detached = feeds.detach(&old, first.id).expect("it was subscribed");
        assert!(detached.emptied);
        feeds.gone(&old);
        let (second, _second_rx, _second_closed) = Conn::new();
        feeds.subscribe(&game, &second, Seat::Spectator, None, 0);
        // Now the first socket's removal drops the feed it emptied.
        feeds.forget_if_unused(&old);
        assert!(feeds.follows(&game, &second), "the newer feed is still the game's, not orphaned");
        assert_eq!((first.following.load(Ordering::Relaxed), second.following.load(Ordering::Relaxed)), (0, 1));
        feeds.unsubscribe_all(&second);
        assert_eq!(second.following.load(Ordering::Relaxed), 0);
        assert!(feeds.feeds.lock().unwrap().is_empty(), "no feed is left behind");
    }

    #[tokio::test]
    async fn a_feed_whose_stream_goes_silent_opens_it_again() {
        let shard = SilentShard::default();
        let watches = shard.watches.clone();
        let feeds = feeds_on(shard).await;
        let (watcher, _rx, _closed) = Conn::new();
        feeds.subscribe(&GameId::parse("g-silent").unwrap(), &watcher, Seat::Spectator, None, 0);
        // It is opened again once it has been silent for SILENCE, found at
        // the next look; waited for with room to spare.
        let deadline = tokio::time::Instant::now() + SILENCE + SILENCE_CHECK + Duration::from_secs(5);
        while watches.load(Ordering::Relaxed) < 2 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(watches.load(Ordering::Relaxed) >= 2, "the silent stream was opened again");
    }

    async fn feeds() -> Arc<Feeds> {
        let router = Arc::new(Router::new(Arc::new(MemoryStore::new()), Duration::from_millis(200)).await);
        Feeds::new(router, Arc::new(Metrics::new().unwrap()), TaskTracker::new(), 20_000)
    }

    #[tokio::test]
    async fn a_resume_the_feed_cannot_bring_up_to_the_stored_version_gets_the_state() {
        let feeds = feeds().await;
        let game = GameId::parse("g-lagging").unwrap();
        let (watcher, _rx, _closed) = Conn::new();
        // A running feed that has heard nothing beyond version 2 (no shard
        // answers its Watch here, as one that missed the commits).
        assert!(feeds.subscribe(&game, &watcher, Seat::Spectator, None, 2));
        let (resuming, _rx, _closed) = Conn::new();
        assert!(
            !feeds.resume(&game, &resuming, Seat::Spectator, None, 2, 5),
            "the store has version 5: replaying the feed would bring nothing"
        );
        assert!(feeds.resume(&game, &resuming, Seat::Spectator, None, 2, 2), "the feed is as new as the store");
    }
}
