//! The store failing the ways real ones do, under one shard.
//!
//! A commit whose answer is lost (the store applied it, but answered after
//! the client's timeout) is reported `UNAVAILABLE`, and the resent command
//! finds the move already played and commits nothing. The move's event
//! must reach the game's watchers all the same, at once, not with the
//! game's next commit: under load this showed as moves relayed tens of
//! seconds late, and games whose end frame never came.
//!
//! A slow read (a big game replayed, a busy store) serves a spectator
//! late, but never holds up the players' moves behind it.
//!
//! Every command is sent through the gateways' own router, with the
//! answer to its commit lost (the store applied it and the reply never
//! came) or held past the router's attempt deadline (a connection that
//! stopped answering): the router sends it again, and the caller gets the
//! first answer while the game shows exactly one effect.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::{ConsumerConfig, EventBus, MemoryBus};
use fogblast_engine_service::{EngineConfig, EngineSettings};
use fogblast_game_service::{GameConfig, GameSettings, Timeouts};
use fogblast_proto::error::ServiceError;
use fogblast_proto::events::GameEvent;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    Abort, ClaimVictory, Color, ColorChoice, Command, CommandResult, CreateGameRequest, CreateGameResponse, EndReason,
    GetStateRequest, JoinGameRequest, Level, Move, OfferAction, Rematch, Resign, Status, Variant, WatchRequest,
};
use fogblast_proto::ids::{GameId, PlayerId, ShardId};
use fogblast_store::RedisStore;
use fogblast_store::{
    Commit, CommitError, EventsAfter, GameStore, Member, Membership, MemoryStore, StoreError, StoredGame,
};
use fogblast_testkit::proxy::{contains, AnswerDropper};
use fogblast_testkit::Scratch;
use futures::StreamExt;
use prost::Message;
use tokio::net::TcpListener;
use tonic::transport::Channel;

/// The in-process store, except that it can lose the answer of a commit
/// and be slow to read a game.
#[derive(Debug, Default)]
struct LosingStore {
    inner: MemoryStore,
    lose_next_answer: AtomicBool,
    /// The next commit's answer comes this long after it was applied.
    hold_next_answer_ms: std::sync::atomic::AtomicU64,
    /// Games created: commits at version 0 that were applied.
    creates: std::sync::atomic::AtomicUsize,
    /// Every `load` takes this long.
    slow_loads_ms: std::sync::atomic::AtomicU64,
    /// The replicas are out of reach: a commit is applied on the primary
    /// and answered as a failure, and nothing is confirmed durable (as
    /// `WAIT` timing out).
    replicas_away: AtomicBool,
    /// The next create (a commit at version 0) fails without being applied.
    refuse_next_create: AtomicBool,
}

#[tonic::async_trait]
impl Membership for LosingStore {
    async fn register(&self, shard: &ShardId, addr: &str, ttl: Duration) -> Result<u64, StoreError> {
        self.inner.register(shard, addr, ttl).await
    }
    async fn renew(&self, shard: &ShardId, epoch: u64, ttl: Duration) -> Result<bool, StoreError> {
        self.inner.renew(shard, epoch, ttl).await
    }
    async fn deregister(&self, shard: &ShardId, epoch: u64) -> Result<(), StoreError> {
        self.inner.deregister(shard, epoch).await
    }
    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        self.inner.members().await
    }
}

#[tonic::async_trait]
impl GameStore for LosingStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        self.inner.now_ms().await
    }
    async fn load(&self, game: &GameId) -> Result<Option<StoredGame>, StoreError> {
        let slow = self.slow_loads_ms.load(Ordering::SeqCst);
        if slow > 0 {
            tokio::time::sleep(Duration::from_millis(slow)).await;
        }
        self.inner.load(game).await
    }
    async fn commit(&self, commit: Commit) -> Result<u64, CommitError> {
        let create = commit.expected_version == 0;
        if create && self.refuse_next_create.swap(false, Ordering::SeqCst) {
            return Err(CommitError::Store(StoreError::new("redis: connection reset")));
        }
        let version = self.inner.commit(commit).await?;
        if create {
            self.creates.fetch_add(1, Ordering::SeqCst);
        }
        if self.lose_next_answer.swap(false, Ordering::SeqCst) {
            return Err(CommitError::Store(StoreError::new("redis: timed out")));
        }
        if self.replicas_away.load(Ordering::SeqCst) {
            return Err(CommitError::Store(StoreError::new("the write reached 0 of 1 replicas")));
        }
        let hold = self.hold_next_answer_ms.swap(0, Ordering::SeqCst);
        if hold > 0 {
            tokio::time::sleep(Duration::from_millis(hold)).await;
        }
        Ok(version)
    }
    async fn confirm_durable(&self, _game: &GameId) -> Result<(), StoreError> {
        if self.replicas_away.load(Ordering::SeqCst) {
            return Err(StoreError::new("the write reached 0 of 1 replicas"));
        }
        Ok(())
    }
    async fn events_after(&self, game: &GameId, after_version: u64) -> Result<EventsAfter, StoreError> {
        self.inner.events_after(game, after_version).await
    }
    async fn due_games(&self, now_ms: u64, offset: usize, limit: usize) -> Result<Vec<(GameId, u64)>, StoreError> {
        self.inner.due_games(now_ms, offset, limit).await
    }
    async fn postpone(&self, game: &GameId, due_ms: u64, to_ms: u64) -> Result<bool, StoreError> {
        self.inner.postpone(game, due_ms, to_ms).await
    }
    async fn unpublished(&self, offset: usize, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.inner.unpublished(offset, limit).await
    }
    async fn mark_published(&self, game: &GameId) -> Result<(), StoreError> {
        self.inner.mark_published(game).await
    }
    async fn claim_code(&self, code: &str, game: &GameId, ttl: Duration) -> Result<bool, StoreError> {
        self.inner.claim_code(code, game, ttl).await
    }
    async fn note_seat(&self, player: &PlayerId, game: &GameId, ttl: Duration) -> Result<(), StoreError> {
        self.inner.note_seat(player, game, ttl).await
    }
    async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, StoreError> {
        self.inner.seats_of(player).await
    }
    async fn forget_seat(&self, player: &PlayerId, game: &GameId) -> Result<(), StoreError> {
        self.inner.forget_seat(player, game).await
    }
    async fn games_in_play(&self) -> Result<Vec<(GameId, Vec<u8>)>, StoreError> {
        self.inner.games_in_play().await
    }
    async fn resolve_code(&self, code: &str) -> Result<Option<GameId>, StoreError> {
        self.inner.resolve_code(code).await
    }
    async fn release_code(&self, code: &str) -> Result<(), StoreError> {
        self.inner.release_code(code).await
    }
}

/// Starts one shard on `store` and returns its address once it is a member.
async fn start_shard(store: Arc<dyn GameStore>, config: GameConfig) -> String {
    start_shard_on(store, config, MemoryBus::new()).await
}

/// [`start_shard`], publishing to `bus`.
async fn start_shard_on(store: Arc<dyn GameStore>, config: GameConfig, bus: MemoryBus) -> String {
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", grpc.local_addr().unwrap());
    tokio::spawn(fogblast_game_service::run(config, store.clone(), Arc::new(bus), grpc, http, std::future::pending()));
    while store.members().await.unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    addr
}

/// One shard serving on `store`, and a game alice (white) created on it,
/// not yet joined.
async fn shard_with_a_game(store: Arc<LosingStore>) -> (GameClient<Channel>, CreateGameResponse) {
    let addr = start_shard(store, GameConfig::default()).await;
    let mut client = GameClient::connect(addr).await.unwrap();
    let created = client
        .create_game(CreateGameRequest {
            player_id: "alice".into(),
            variant: Variant::Standard as i32,
            color: ColorChoice::ChooseWhite as i32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    (client, created)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_commit_answer_was_lost_still_reaches_the_watchers() {
    let store = Arc::new(LosingStore::default());
    let (mut client, created) = shard_with_a_game(store.clone()).await;
    let joined = client
        .join_game(JoinGameRequest { player_id: "bob".into(), code: created.code, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let game = created.game_id;
    let after_version = joined.state.unwrap().version;
    let mut events = client.watch(WatchRequest { game_id: game.clone(), after_version }).await.unwrap().into_inner();
    let play = |player: &str, uci: &str, ply: u32| {
        let mut client = client.clone();
        let request = move_command(&game, player, uci, ply);
        async move { client.execute(request).await }
    };
    let first = play("alice", "e2e4", 0).await.unwrap().into_inner().version;
    let seen = tokio::time::timeout(Duration::from_secs(5), events.message()).await.unwrap().unwrap().unwrap();
    assert_eq!(seen.version, first);

    store.lose_next_answer.store(true, Ordering::SeqCst);
    let lost = play("bob", "e7e5", 1).await.expect_err("the answer was lost");
    assert_eq!(lost.code(), tonic::Code::Unavailable, "{lost:?}");
    // The client sends it again: already played, nothing committed.
    let second = play("bob", "e7e5", 1).await.unwrap().into_inner().version;
    assert_eq!(second, first + 1);
    let seen = tokio::time::timeout(Duration::from_secs(5), events.message())
        .await
        .expect("the move's event reaches the watcher without another commit")
        .unwrap()
        .unwrap();
    assert_eq!(seen.version, second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_spectator_read_does_not_hold_up_a_move() {
    let store = Arc::new(LosingStore::default());
    let (mut client, created) = shard_with_a_game(store.clone()).await;
    client
        .join_game(JoinGameRequest { player_id: "bob".into(), code: created.code, ..Default::default() })
        .await
        .unwrap();
    let game = created.game_id;

    // Reads of the game now take 800 ms; the shard holds the game itself.
    store.slow_loads_ms.store(800, Ordering::SeqCst);
    let mut spectator = client.clone();
    let request = fogblast_proto::game::GetStateRequest { game_id: game.clone(), player_id: String::new() };
    let read = tokio::spawn(async move { spectator.get_state(request).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    let request = move_command(&game, "alice", "e2e4", 0);
    client.execute(request).await.expect("the move is played");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(400), "the move did not wait for the spectator's read: {took:?}");
    let state = read.await.unwrap().expect("the spectator is served").into_inner();
    assert!(state.version > 0);
}

/// A create and a move whose commits' answers were lost (the router sent
/// each again and was answered from the recorded request) still put their
/// events on the public stream, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_whose_answers_were_lost_still_reach_the_public_stream() {
    let store = Arc::new(LosingStore::default());
    let bus = MemoryBus::new();
    let config = GameConfig {
        settings: GameSettings { public_events: true, ..GameSettings::default() },
        ..GameConfig::default()
    };
    start_shard_on(store.clone(), config, bus.clone()).await;
    let router =
        fogblast_routing::Router::new(store.clone(), Duration::from_secs(8)).await.with_attempt_timeout(ATTEMPT);
    let filter = fogblast_proto::public_events::filter(fogblast_proto::public_events::Encoding::Protobuf, None);
    let consumer = ConsumerConfig { name: "public-check".into(), filter, ack_wait: Duration::from_secs(30) };
    let mut deliveries = bus.consume_durable(consumer).await.unwrap();

    store.lose_next_answer.store(true, Ordering::SeqCst);
    let created = router.create_game(create_request("alice", false)).await.expect("created once");
    assert!(!store.lose_next_answer.load(Ordering::SeqCst), "the create's answer was lost");
    router.join_game(join_request("bob", &created.code)).await.expect("joined");
    store.lose_next_answer.store(true, Ordering::SeqCst);
    let mut request = move_command(&created.game_id, "alice", "e2e4", 0);
    request.request_id = "alice-e2e4".into();
    router.command(request).await.expect("the move is played once");
    assert!(!store.lose_next_answer.load(Ordering::SeqCst), "the move's answer was lost");

    let mut seen = Vec::new();
    while !seen.iter().any(|(_, kind): &(u64, String)| kind == "move") {
        let delivery = tokio::time::timeout(Duration::from_secs(20), deliveries.next())
            .await
            .unwrap_or_else(|_| panic!("the public stream stopped at {seen:?}"))
            .expect("the stream goes on")
            .expect("a delivery");
        let event = GameEvent::decode(delivery.message().payload.as_ref()).expect("a GameEvent");
        assert_eq!(event.game_id, created.game_id);
        let kind = event.kind.as_ref().map(fogblast_proto::public_events::kind_token).unwrap_or_default();
        seen.push((event.version, kind.to_owned()));
        delivery.ack().await.unwrap();
    }
    let kinds: Vec<&str> = seen.iter().map(|(_, kind)| kind.as_str()).collect();
    assert_eq!(kinds, ["created", "started", "move"], "each event once, in order: {seen:?}");
}

/// A move committed while the replicas are out of reach is answered as a
/// failure, and its public event can only be published once they are back
/// (and confirm it). A move played after that must not overtake it on the
/// public stream: a game's events are published in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_commit_waited_for_replicas_keeps_its_place_on_the_public_stream() {
    let store = Arc::new(LosingStore::default());
    let bus = MemoryBus::new();
    let config = GameConfig {
        settings: GameSettings { public_events: true, ..GameSettings::default() },
        ..GameConfig::default()
    };
    let addr = start_shard_on(store.clone(), config, bus.clone()).await;
    let mut client = GameClient::connect(addr).await.unwrap();
    let filter = fogblast_proto::public_events::filter(fogblast_proto::public_events::Encoding::Protobuf, None);
    let consumer = ConsumerConfig { name: "public-order".into(), filter, ack_wait: Duration::from_secs(30) };
    let mut deliveries = bus.consume_durable(consumer).await.unwrap();
    let created = client.create_game(create_request("alice", false)).await.unwrap().into_inner();
    client.join_game(join_request("bob", &created.code)).await.unwrap();
    let game = created.game_id;
    client.execute(move_command(&game, "alice", "e2e4", 0)).await.expect("played");

    store.replicas_away.store(true, Ordering::SeqCst);
    let failed = client.execute(move_command(&game, "bob", "e7e5", 1)).await.expect_err("not confirmed");
    assert_eq!(failed.code(), tonic::Code::Unavailable, "{failed:?}");
    // The replicas come back; alice, who saw bob's move, answers it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    store.replicas_away.store(false, Ordering::SeqCst);
    client.execute(move_command(&game, "alice", "g1f3", 2)).await.expect("played");

    let mut moves = Vec::new();
    while moves.len() < 3 {
        let delivery = tokio::time::timeout(Duration::from_secs(30), deliveries.next())
            .await
            .unwrap_or_else(|_| panic!("the public stream stopped at {moves:?}"))
            .expect("the stream goes on")
            .expect("a delivery");
        let event = GameEvent::decode(delivery.message().payload.as_ref()).expect("a GameEvent");
        if let Some(fogblast_proto::events::game_event::Kind::Moved(moved)) = &event.kind {
            moves.push((event.version, moved.ply));
        }
        delivery.ack().await.unwrap();
    }
    let plies: Vec<u32> = moves.iter().map(|(_, ply)| *ply).collect();
    assert_eq!(plies, [0, 1, 2], "the game's moves in order on the public stream: {moves:?}");
}

/// A rematch is made after the commit that agrees it. When the store
/// fails that create, the agreement stands (the answer names the new
/// game), and the game waits in the outbox until the sweep makes it, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_the_store_failed_to_make_is_made_by_the_sweep() {
    let store = Arc::new(LosingStore::default());
    let config =
        GameConfig { settings: GameSettings { sweep_ms: 100, ..GameSettings::default() }, ..GameConfig::default() };
    let addr = start_shard(store.clone(), config).await;
    let mut client = GameClient::connect(addr).await.unwrap();
    let created = client.create_game(create_request("alice", false)).await.unwrap().into_inner();
    client.join_game(join_request("bob", &created.code)).await.unwrap();
    let game = created.game_id;
    client.execute(command(&game, "bob", Action::Resign(Resign {}))).await.expect("resigned");
    client.execute(command(&game, "alice", Action::Rematch(Rematch {}))).await.expect("offered");

    let creates = store.creates.load(Ordering::SeqCst);
    store.refuse_next_create.store(true, Ordering::SeqCst);
    let agreed = client.execute(command(&game, "bob", Action::Rematch(Rematch {}))).await.expect("agreed");
    let new_game = agreed.into_inner().new_game_id;
    assert!(!new_game.is_empty());
    assert!(!store.refuse_next_create.load(Ordering::SeqCst), "the rematch's create was refused");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let request = GetStateRequest { game_id: new_game.clone(), player_id: "alice".into() };
        match client.get_state(request).await {
            Ok(state) => {
                assert_eq!(state.into_inner().status(), Status::Playing);
                break;
            }
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
                assert!(std::time::Instant::now() < deadline, "the sweep never made the rematch");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    // Published and out of the outbox: nothing more is made.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(store.creates.load(Ordering::SeqCst), creates + 1, "one rematch game");
    assert!(store.inner.unpublished(0, 10).await.unwrap().is_empty(), "the outbox is empty");
}

/// How the answer to the next commit goes missing.
#[derive(Clone, Copy, Debug)]
enum Loss {
    /// The store applied the commit and its reply was lost: the shard
    /// answers `UNAVAILABLE`.
    Dropped,
    /// The reply comes after the router gave the attempt up.
    Late,
}

/// The router's attempt deadline in these tests; a late answer comes after it.
const ATTEMPT: Duration = Duration::from_millis(300);

/// A shard on a losing store and the router the gateways use.
struct Rig {
    store: Arc<LosingStore>,
    router: fogblast_routing::Router,
}

impl Rig {
    async fn start(config: GameConfig) -> Rig {
        let store = Arc::new(LosingStore::default());
        start_shard(store.clone(), config).await;
        let router =
            fogblast_routing::Router::new(store.clone(), Duration::from_secs(8)).await.with_attempt_timeout(ATTEMPT);
        Rig { store, router }
    }

    /// Runs `call` with the answer to its commit lost as `loss` says, and
    /// checks the loss happened: the commit was applied and its answer
    /// did not reach the first attempt.
    async fn losing<T>(&self, loss: Loss, call: impl std::future::Future<Output = T>) -> T {
        match loss {
            Loss::Dropped => self.store.lose_next_answer.store(true, Ordering::SeqCst),
            Loss::Late => self.store.hold_next_answer_ms.store(ATTEMPT.as_millis() as u64 * 2, Ordering::SeqCst),
        }
        let started = std::time::Instant::now();
        let answer = call.await;
        assert!(!self.store.lose_next_answer.load(Ordering::SeqCst), "{loss:?}: no commit was made");
        assert_eq!(self.store.hold_next_answer_ms.load(Ordering::SeqCst), 0, "{loss:?}: no commit was made");
        if matches!(loss, Loss::Late) {
            assert!(started.elapsed() >= ATTEMPT, "the late answer outlived the first attempt");
        }
        answer
    }

    async fn state(&self, game: &str, player: &str) -> fogblast_proto::game::GameState {
        let request = GetStateRequest { game_id: game.to_owned(), player_id: player.to_owned() };
        self.router.get_state(request).await.expect("the game is served")
    }

    async fn play(&self, game: &str, player: &str, uci: &str, ply: u32) -> u64 {
        let request = move_command(game, player, uci, ply);
        self.router.command(request).await.expect("the move is played").version
    }

    /// A game between alice (white) and bob, created and joined without losses.
    async fn people_game(&self) -> String {
        let created = self.router.create_game(create_request("alice", false)).await.expect("created");
        self.router.join_game(join_request("bob", &created.code)).await.expect("joined");
        created.game_id
    }
}

fn create_request(player: &str, computer: bool) -> CreateGameRequest {
    CreateGameRequest {
        player_id: player.into(),
        player_name: player.into(),
        variant: Variant::Standard as i32,
        color: ColorChoice::ChooseWhite as i32,
        computer,
        level: if computer { Level::Easy as i32 } else { 0 },
        ..Default::default()
    }
}

fn join_request(player: &str, code: &str) -> JoinGameRequest {
    JoinGameRequest { player_id: player.into(), player_name: player.into(), code: code.into(), ..Default::default() }
}

/// `player`'s move `uci` at `ply` in `game`: no lag, no wait, no request id.
fn move_command(game: &str, player: &str, uci: &str, ply: u32) -> Command {
    Command::new(game, player, Action::Move(Move { uci: uci.into(), ply, lag_ms: 0, waited_ms: 0 }))
}

fn command(game: &str, player: &str, action: Action) -> Command {
    Command::new(game, player, action)
}

fn offer(game: &str, player: &str, action: OfferAction) -> Command {
    Command::new(game, player, Action::draw(action))
}

fn takeback(game: &str, player: &str, action: OfferAction) -> Command {
    Command::new(game, player, Action::takeback(action))
}

/// Create, join, move, draw offer and decline, takeback request and
/// acceptance, resign, rematch offer and acceptance: each with its commit's
/// answer lost.
async fn every_command_between_people_applies_once(loss: Loss) {
    let rig = Rig::start(GameConfig::default()).await;
    let router = &rig.router;

    let created = rig.losing(loss, router.create_game(create_request("alice", false))).await.expect("created once");
    assert_eq!(rig.store.creates.load(Ordering::SeqCst), 1, "one game was made");
    let game = created.game_id.clone();
    let state = rig.state(&game, "alice").await;
    assert_eq!((state.version, state.code.as_str()), (1, created.code.as_str()), "the answer names the game made");

    let joined = rig.losing(loss, router.join_game(join_request("bob", &created.code))).await.expect("seated");
    assert_eq!((joined.game_id.as_str(), joined.color()), (game.as_str(), Color::Black));
    assert_eq!(rig.state(&game, "bob").await.status(), Status::Playing);

    let moved = rig.losing(loss, rig.play_once(&game, "alice", "e2e4", 0)).await;
    assert_eq!(moved.expect("played").version, rig.state(&game, "alice").await.version);
    assert_eq!(rig.state(&game, "alice").await.moves.len(), 1);

    let before = rig.state(&game, "alice").await.version;
    let offered = rig.losing(loss, router.command(offer(&game, "alice", OfferAction::Offer))).await.expect("offered");
    assert_eq!(offered.version, before + 1, "one offer");
    assert_eq!(rig.state(&game, "bob").await.draw_offer(), Color::White);
    let declined = rig.losing(loss, router.command(offer(&game, "bob", OfferAction::Decline))).await;
    assert_eq!(declined.expect("declined, not `conflict`").version, before + 2);
    assert_eq!(rig.state(&game, "bob").await.draw_offer(), Color::Unspecified);

    rig.play(&game, "bob", "e7e5", 1).await;
    rig.play(&game, "alice", "g1f3", 2).await;
    let asked = rig.losing(loss, router.command(takeback(&game, "alice", OfferAction::Offer))).await;
    asked.expect("asked");
    let accepted = rig.losing(loss, router.command(takeback(&game, "bob", OfferAction::Accept))).await;
    accepted.expect("accepted, not `conflict`");
    let state = rig.state(&game, "alice").await;
    assert_eq!(state.moves.len(), 2, "one move taken back, not two");

    let resigned = rig.losing(loss, router.command(command(&game, "bob", Action::Resign(Resign {})))).await;
    let resigned = resigned.expect("resigned, not `game_over`");
    let state = rig.state(&game, "alice").await;
    assert_eq!((state.result.as_str(), state.version), ("1-0", resigned.version));

    let creates = rig.store.creates.load(Ordering::SeqCst);
    let rematch = |player: &str| router.command(command(&game, player, Action::Rematch(Rematch {})));
    let asked = rig.losing(loss, rematch("alice")).await.expect("rematch offered");
    assert!(asked.new_game_id.is_empty());
    let agreed = rig.losing(loss, rematch("bob")).await.expect("rematch agreed, not `conflict`");
    assert!(!agreed.new_game_id.is_empty());
    assert_eq!(rig.store.creates.load(Ordering::SeqCst), creates + 1, "one rematch game");
    assert_eq!(rig.state(&game, "alice").await.rematch_game_id, agreed.new_game_id);
    assert_eq!(rig.state(&agreed.new_game_id, "bob").await.status(), Status::Playing);
}

/// Abort, and a claim of victory over a player who left.
async fn abort_and_claim_apply_once(loss: Loss) {
    let config = GameConfig {
        settings: GameSettings {
            timeouts: Timeouts { claim_after_ms: 200, ..Timeouts::default() },
            ..GameSettings::default()
        },
        ..GameConfig::default()
    };
    let rig = Rig::start(config).await;
    let router = &rig.router;

    let game = rig.people_game().await;
    let abort = command(&game, "alice", Action::Abort(Abort {}));
    let aborted = rig.losing(loss, router.command(abort)).await.expect("aborted, not `game_over`");
    let state = rig.state(&game, "alice").await;
    assert_eq!((state.reason(), state.version), (EndReason::Aborted, aborted.version));

    let game = rig.people_game().await;
    rig.play(&game, "alice", "e2e4", 0).await;
    rig.play(&game, "bob", "e7e5", 1).await;
    let gone = command(&game, "bob", Action::presence(false, 0));
    router.command(gone).await.expect("bob leaves");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let claim = command(&game, "alice", Action::ClaimVictory(ClaimVictory {}));
    let claimed = rig.losing(loss, router.command(claim)).await;
    let claimed = claimed.expect("claimed, not `game_over`");
    let state = rig.state(&game, "alice").await;
    assert_eq!((state.result.as_str(), state.reason(), state.version), ("1-0", EndReason::Abandoned, claimed.version));
}

/// A takeback against the computer is granted at once and undoes the
/// player's move and the computer's reply: sent twice, it would undo four.
async fn a_takeback_against_the_computer_undoes_one_move(loss: Loss) {
    let config = GameConfig { engine_addrs: vec![engine_pool().await], ..GameConfig::default() };
    let rig = Rig::start(config).await;
    let router = &rig.router;
    let created = rig.losing(loss, router.create_game(create_request("alice", true))).await.expect("created once");
    assert_eq!(rig.store.creates.load(Ordering::SeqCst), 1, "one game was made");
    let game = created.game_id;
    for ply in [0, 2] {
        let legal = computer_replied(&rig, &game, ply).await;
        rig.play(&game, "alice", &legal, ply as u32).await;
    }
    computer_replied(&rig, &game, 4).await;
    let asked = rig.losing(loss, router.command(takeback(&game, "alice", OfferAction::Offer))).await;
    asked.expect("taken back");
    let state = rig.state(&game, "alice").await;
    assert_eq!(state.moves.len(), 2, "the player's move and the reply are undone, once");
}

/// Waits until the game has `ply` moves and it is alice's turn; one of her legal moves.
async fn computer_replied(rig: &Rig, game: &str, ply: usize) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = rig.state(game, "alice").await;
        if state.moves.len() == ply && !state.legal.is_empty() {
            return state.legal[0].clone();
        }
        assert!(std::time::Instant::now() < deadline, "the computer did not reply: {state:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An engine pool of one worker, on loopback.
async fn engine_pool() -> String {
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", grpc.local_addr().unwrap());
    let settings = EngineSettings { workers: 1, queue: 16, hash_mb: 1 };
    let config = EngineConfig { settings, ..EngineConfig::default() };
    tokio::spawn(fogblast_engine_service::run(config, grpc, metrics, std::future::pending()));
    addr
}

impl Rig {
    /// A move through the router, its answer as the caller gets it.
    async fn play_once(&self, game: &str, player: &str, uci: &str, ply: u32) -> Result<CommandResult, ServiceError> {
        self.router.command(move_command(game, player, uci, ply)).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_between_people_applies_once_when_its_answer_is_dropped() {
    every_command_between_people_applies_once(Loss::Dropped).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_between_people_applies_once_when_its_answer_comes_too_late() {
    every_command_between_people_applies_once(Loss::Late).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_and_claim_apply_once_when_their_answers_are_dropped() {
    abort_and_claim_apply_once(Loss::Dropped).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_and_claim_apply_once_when_their_answers_come_too_late() {
    abort_and_claim_apply_once(Loss::Late).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeback_against_the_computer_is_applied_once_when_its_answer_is_dropped() {
    a_takeback_against_the_computer_undoes_one_move(Loss::Dropped).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeback_against_the_computer_is_applied_once_when_its_answer_comes_too_late() {
    a_takeback_against_the_computer_undoes_one_move(Loss::Late).await;
}

/// The connection to a real Redis breaks after each command's commit was
/// sent and before its reply arrives (a proxy cuts it): the router sends
/// the command again on a fresh connection, and it applies once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_whose_redis_connection_breaks_after_the_commit_apply_once() {
    let scratch = Scratch::new("lost-redis");
    let upstream = fogblast_testkit::redis_url();
    let proxy = AnswerDropper::start(upstream.trim_start_matches("redis://").trim_end_matches('/')).await;
    let store = Arc::new(RedisStore::connect(&proxy.redis_url(), &scratch.redis_prefix).await.expect("redis"));
    start_shard(store.clone(), GameConfig::default()).await;
    let router = fogblast_routing::Router::new(store.clone(), Duration::from_secs(8)).await;
    let is_commit = |request: &[u8]| contains(request, b"deadlines") && contains(request, b"outbox");
    let cut = |what: &str| {
        assert!(!proxy.armed(), "{what}: the commit's reply was cut");
    };
    let redis = redis::Client::open(upstream.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let games = || {
        let mut redis = redis.clone();
        let pattern = format!("{}game:*", scratch.redis_prefix);
        async move { redis::cmd("KEYS").arg(pattern).query_async::<Vec<String>>(&mut redis).await.unwrap().len() }
    };
    let state = |game: String, player: &str| {
        let request = GetStateRequest { game_id: game, player_id: player.to_owned() };
        let router = &router;
        async move { router.get_state(request).await.expect("served") }
    };

    proxy.drop_answer_to(is_commit);
    let created = router.create_game(create_request("alice", false)).await.expect("created");
    cut("create");
    assert_eq!(games().await, 1, "one game was made");
    let game = created.game_id.clone();
    assert_eq!(state(game.clone(), "alice").await.code, created.code);

    proxy.drop_answer_to(is_commit);
    router.join_game(join_request("bob", &created.code)).await.expect("seated");
    cut("join");

    proxy.drop_answer_to(is_commit);
    router.command(move_command(&game, "alice", "e2e4", 0)).await.expect("played");
    cut("move");
    assert_eq!(state(game.clone(), "bob").await.moves.len(), 1);

    proxy.drop_answer_to(is_commit);
    router.command(takeback(&game, "alice", OfferAction::Offer)).await.expect("asked");
    cut("takeback request");
    proxy.drop_answer_to(is_commit);
    router.command(takeback(&game, "bob", OfferAction::Accept)).await.expect("accepted once");
    cut("takeback accepted");
    assert_eq!(state(game.clone(), "bob").await.moves.len(), 0);

    proxy.drop_answer_to(is_commit);
    let resigned = router.command(command(&game, "alice", Action::Resign(Resign {}))).await.expect("resigned once");
    cut("resign");
    let ended = state(game.clone(), "bob").await;
    assert_eq!((ended.result.as_str(), ended.version), ("0-1", resigned.version));
    assert!(proxy.dropped() >= 6, "every reply was cut: {}", proxy.dropped());
}
