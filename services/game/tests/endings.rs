//! Every way a game can end, played in full through real gRPC on a
//! two-shard cluster over real Redis and NATS JetStream. The endings by the
//! rules are not hand-written: each test finds, with the rules crate and a
//! seeded random playout, a line that reaches the ending it wants in its
//! variant, then plays it move by move through the owners and checks the
//! final state of every audience, the mover's `end` event on the Watch
//! stream and the one `GameFinished` on the durable stream. The endings by
//! the players (resign, agreement, abort, claim) and by the shard's own
//! timers (no start, nobody joined) follow, with offers, takebacks and
//! rematches on the way; last, bad input of every kind is refused with its
//! code and changes nothing. One more test keeps a bug these games found
//! fixed: a shard answering from a copy of a game that a shard with a
//! lagging view of membership had written since.

mod support;

use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::{ConsumerConfig, Delivery};
use fogblast_game_service::GameConfig;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::events::GameFinished;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::event_payload::Kind;
use fogblast_proto::game::{
    watch_event, Abort, AudienceEvent, ClaimVictory, Color as WireColor, ColorChoice, Command, CreateGameRequest,
    DeclineRematch, EndEvent, EndReason, GameState, GetStateRequest, JoinGameRequest, OfferAction, Rematch, Resign,
    Status, Variant as WireVariant, WatchEvent, WatchRequest,
};
use fogblast_proto::ids::GameId;
use fogblast_rules::{CastlingMode, DrawReason, Fen, Game, Move, Outcome, Position, Variant, WinReason};
use fogblast_store::GameStore;
use futures::stream::{BoxStream, StreamExt};
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use support::{eventually, test_config, Backend, Router, ShardProcess};

const WHITE: &str = "alice";
const BLACK: &str = "bob";

// ---------------------------------------------------------------------------
// Finding a line to each ending with the rules crate
// ---------------------------------------------------------------------------

/// Playouts tried before giving up, and plies per playout.
const SEARCH_TRIES: usize = 300;
const SEARCH_PLIES: usize = 500;

/// How a playout picks among the moves that do not end the game. Whatever
/// the style, a move that reaches the wanted ending is always taken, and
/// moves that end the game otherwise are never played.
#[derive(Clone, Copy, Debug)]
enum Style {
    /// Any move.
    Random,
    /// Mostly captures, so material comes off quickly.
    Captures,
    /// After a short opening, only moves that neither capture nor move a
    /// pawn, preferring positions not seen before: the fifty-move rule.
    Quiet,
    /// Quiet moves back to positions already seen: threefold repetition.
    Repeat,
}

/// Plies of free play before [`Style::Quiet`] starts counting.
const QUIET_OPENING: usize = 12;

/// A line from the starting position to an ending, as the rules see it.
#[derive(Debug)]
struct Line {
    moves: Vec<String>,
    outcome: Outcome,
    fen: String,
}

/// The contract's name for an ending by the rules, written out here rather
/// than taken from the service, so the service's own mapping is checked.
fn reason_of(outcome: Outcome) -> EndReason {
    match outcome {
        Outcome::Decisive { reason, .. } => match reason {
            WinReason::Checkmate => EndReason::Checkmate,
            WinReason::KingExploded => EndReason::Explosion,
            WinReason::KingCaptured => EndReason::KingCaptured,
            WinReason::Timeout => EndReason::Timeout,
        },
        Outcome::Draw { reason } => match reason {
            DrawReason::Stalemate => EndReason::Stalemate,
            DrawReason::NoMoves => EndReason::NoMoves,
            DrawReason::InsufficientMaterial => EndReason::InsufficientMaterial,
            DrawReason::ThreefoldRepetition => EndReason::Threefold,
            DrawReason::FiftyMoves => EndReason::FiftyMoves,
            DrawReason::TimeoutVsInsufficientMaterial => EndReason::Timeout,
        },
    }
}

/// The first line a seeded playout finds from the standard starting
/// position of `variant` to an ending the contract calls `wanted`.
fn find_line(variant: Variant, wanted: EndReason, style: Style, seed: u64) -> Line {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..SEARCH_TRIES {
        if let Some(line) = playout(variant, wanted, style, &mut rng) {
            return line;
        }
    }
    panic!("no {wanted:?} found in {variant:?} within {SEARCH_TRIES} playouts ({style:?}, seed {seed})");
}

fn playout(variant: Variant, wanted: EndReason, style: Style, rng: &mut StdRng) -> Option<Line> {
    let mut game = Game::new(Position::new(variant));
    while game.ply() < SEARCH_PLIES {
        let mut going_on: Vec<(Move, Game)> = Vec::new();
        for m in game.position().legal_moves() {
            let mut next = game.clone();
            next.play(m).expect("legal moves play");
            match next.outcome() {
                Some(outcome) if reason_of(outcome) == wanted => {
                    let moves = next.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
                    let fen = Fen::from_position(next.position()).to_string();
                    return Some(Line { moves, outcome, fen });
                }
                Some(_) => {}
                None => going_on.push((m, next)),
            }
        }
        game = pick(style, game.ply(), going_on, rng)?;
    }
    None
}

fn pick(style: Style, ply: usize, mut options: Vec<(Move, Game)>, rng: &mut StdRng) -> Option<Game> {
    match style {
        Style::Random => {}
        Style::Captures => {
            if options.iter().any(|(m, _)| m.is_capture()) && rng.random_bool(0.8) {
                options.retain(|(m, _)| m.is_capture());
            }
        }
        Style::Quiet => {
            if ply >= QUIET_OPENING {
                options.retain(|(m, _)| !m.is_zeroing());
                if options.iter().any(|(_, g)| g.repetitions() == 1) {
                    options.retain(|(_, g)| g.repetitions() == 1);
                }
            }
        }
        Style::Repeat => {
            options.retain(|(m, _)| !m.is_zeroing());
            let most = options.iter().map(|(_, g)| g.repetitions()).max()?;
            options.retain(|(_, g)| g.repetitions() == most);
        }
    }
    if options.is_empty() {
        return None;
    }
    let index = rng.random_range(0..options.len());
    Some(options.swap_remove(index).1)
}

// ---------------------------------------------------------------------------
// The cluster, its commands and its streams
// ---------------------------------------------------------------------------

/// Two shards on the test's own Redis prefix and NATS stream, a router, and
/// a durable consumer of the finished games.
struct Cluster {
    router: Router,
    finished: Finished,
    _shards: [ShardProcess; 2],
}

impl Cluster {
    async fn start(name: &str, config: GameConfig) -> Cluster {
        let backend = Backend::distributed(name);
        let a = ShardProcess::start(&backend, "a", config.clone()).await;
        let b = ShardProcess::start(&backend, "b", config).await;
        let router = Router::new(&backend).await;
        let finished = Finished::consume(&backend).await;
        Cluster { router, finished, _shards: [a, b] }
    }
}

/// The stream of finished games, as the rating service would read it.
struct Finished {
    deliveries: BoxStream<'static, Result<Box<dyn Delivery>, fogblast_bus::BusError>>,
    /// Every message so far: subject, message id, event.
    seen: Vec<(String, Option<String>, GameFinished)>,
    /// The store whose outbox the shards publish from.
    store: Arc<dyn GameStore>,
}

impl Finished {
    async fn consume(backend: &Backend) -> Finished {
        let bus = backend.bus().await;
        let config = ConsumerConfig {
            name: "endings".to_owned(),
            filter: "games.finished.>".to_owned(),
            ack_wait: Duration::from_secs(30),
        };
        let deliveries = bus.consume_durable(config).await.expect("a durable consumer");
        Finished { deliveries, seen: Vec::new(), store: backend.store().await }
    }

    /// Takes the next message within `limit`; false if none came.
    async fn pull(&mut self, limit: Duration) -> bool {
        let Ok(Some(delivery)) = tokio::time::timeout(limit, self.deliveries.next()).await else { return false };
        let delivery = delivery.expect("a delivery");
        let message = delivery.message();
        let event = GameFinished::decode(message.payload.as_ref()).expect("a GameFinished");
        self.seen.push((message.subject.clone(), delivery.message_id().map(str::to_owned), event));
        delivery.ack().await.expect("ack");
        true
    }

    /// The one `GameFinished` of `game`: waits for it, then until the
    /// store's outbox no longer holds the game (so nothing will publish it
    /// again), then a moment for any second copy already on its way.
    async fn once(&mut self, game: &str, variant: &str) -> GameFinished {
        let count =
            |seen: &[(String, Option<String>, GameFinished)]| seen.iter().filter(|(_, _, e)| e.game_id == game).count();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while count(&self.seen) == 0 {
            assert!(tokio::time::Instant::now() < deadline, "no GameFinished for {game}");
            self.pull(Duration::from_millis(500)).await;
        }
        let store = self.store.clone();
        let id = GameId::parse(game).unwrap();
        eventually(Duration::from_secs(5), || async { !store.unpublished(0, 10_000).await.unwrap().contains(&id) })
            .await;
        while self.pull(Duration::from_millis(250)).await {}
        assert_eq!(count(&self.seen), 1, "GameFinished for {game} more than once: {:?}", self.seen);
        let (subject, id, event) = self.seen.iter().find(|(_, _, e)| e.game_id == game).unwrap().clone();
        assert_eq!(subject, format!("games.finished.{variant}"));
        assert_eq!(id.as_deref(), Some(game), "the message id is the game id");
        event
    }
}

/// A player's command other than a move.
#[derive(Clone, Copy, Debug)]
enum Rpc {
    Resign,
    Abort,
    Claim,
    Draw(OfferAction),
    Takeback(OfferAction),
    Presence(bool),
}

async fn send(router: &Router, game: &str, player: &str, rpc: Rpc) -> Result<u64, ServiceError> {
    let action = match rpc {
        Rpc::Resign => Action::Resign(Resign {}),
        Rpc::Abort => Action::Abort(Abort {}),
        Rpc::Claim => Action::ClaimVictory(ClaimVictory {}),
        Rpc::Draw(action) => Action::draw(action),
        Rpc::Takeback(action) => Action::takeback(action),
        Rpc::Presence(connected) => Action::presence(connected, 0),
    };
    router.execute(Command::new(game, player, action)).await.map(|result| result.version)
}

async fn rematch(router: &Router, game: &str, player: &str) -> Result<String, ServiceError> {
    let command = Command::new(game, player, Action::Rematch(Rematch {}));
    router.execute(command).await.map(|result| result.new_game_id)
}

async fn decline_rematch(router: &Router, game: &str, player: &str) -> Result<u64, ServiceError> {
    let command = Command::new(game, player, Action::DeclineRematch(DeclineRematch {}));
    router.execute(command).await.map(|result| result.version)
}

/// GetState through the owner, refusals included.
async fn try_state(router: &Router, game: &str, player: &str) -> Result<GameState, ServiceError> {
    let request = GetStateRequest { game_id: game.to_owned(), player_id: player.to_owned() };
    router
        .on_owner(game, |mut client| {
            let request = request.clone();
            async move { client.get_state(request).await }
        })
        .await
}

/// The game's version, as a spectator reads it.
async fn version(router: &Router, game: &str) -> u64 {
    router.state(game, "").await.version
}

fn code(result: Result<impl std::fmt::Debug, ServiceError>) -> ErrorCode {
    match result {
        Ok(ok) => panic!("expected a refusal, got {ok:?}"),
        Err(error) => error.code,
    }
}

/// Plays `moves` by alternating players, starting with white.
async fn play(router: &Router, game: &str, from_ply: usize, moves: &[&str]) -> u64 {
    let mut last = 0;
    for (i, uci) in moves.iter().enumerate() {
        let ply = from_ply + i;
        let player = if ply.is_multiple_of(2) { WHITE } else { BLACK };
        last = router.make_move(game, player, uci, ply as u32).await.unwrap_or_else(|e| panic!("{uci} at {ply}: {e}"));
    }
    last
}

async fn open_watch(router: &Router, game: &str, after: u64) -> tonic::Streaming<WatchEvent> {
    let addr = router.owner_addr(&GameId::parse(game).unwrap()).await.expect("an owner");
    let request = WatchRequest { game_id: game.to_owned(), after_version: after };
    router.client(&addr).watch(request).await.expect("a watch stream").into_inner()
}

/// The next event on a watch stream (heartbeats aside), within a few seconds.
async fn next_event(stream: &mut tonic::Streaming<WatchEvent>) -> (u64, AudienceEvent) {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(5), stream.message())
            .await
            .expect("an event in time")
            .expect("a healthy stream")
            .expect("the stream goes on");
        match event.kind {
            Some(watch_event::Kind::Heartbeat(_)) => {}
            Some(watch_event::Kind::Event(audience)) => return (event.version, audience),
            other => panic!("expected an event at {}, got {other:?}", event.version),
        }
    }
}

fn seat_payload(event: &AudienceEvent, color: WireColor) -> Option<&Kind> {
    let payload = match color {
        WireColor::White => &event.white,
        WireColor::Black => &event.black,
        WireColor::Unspecified => &event.spectators,
    };
    payload.as_ref().and_then(|p| p.kind.as_ref())
}

fn end_of(event: &AudienceEvent, color: WireColor) -> &EndEvent {
    match seat_payload(event, color) {
        Some(Kind::End(end)) => end,
        other => panic!("expected an end event for {color:?}, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// 1. Endings by the rules
// ---------------------------------------------------------------------------

/// Finds a line to `wanted`, plays it through the service and checks
/// everything the end of a game produces.
async fn ending_by_the_rules(name: &str, variant: Variant, wanted: EndReason, style: Style, seed: u64) {
    let line = find_line(variant, wanted, style, seed);
    assert_eq!(reason_of(line.outcome), wanted);
    let mut cluster = Cluster::start(name, test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::from(variant), WHITE, BLACK, None).await;

    let (last, before) = line.moves.split_last().expect("a line has moves");
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    let mut previous = play(router, &game, 0, &before).await;
    if before.is_empty() {
        previous = version(router, &game).await;
    }
    // The mover of the last move watches from just before it.
    let last_ply = before.len();
    let (mover, mover_color) =
        if last_ply.is_multiple_of(2) { (WHITE, WireColor::White) } else { (BLACK, WireColor::Black) };
    let mut watch = open_watch(router, &game, previous).await;
    let final_version = router.make_move(&game, mover, last, last_ply as u32).await.expect("the last move is taken");
    assert!(final_version > previous);

    // The mover sees its move, then the end with the full move list.
    let (moved_at, moved) = next_event(&mut watch).await;
    assert_eq!(moved_at, previous + 1);
    match seat_payload(&moved, mover_color) {
        Some(Kind::Move(m)) => {
            assert_eq!(m.ply as usize, last_ply);
            assert_eq!(m.uci.as_deref(), Some(last.as_str()));
        }
        other => panic!("expected the last move, got {other:?}"),
    }
    let (ended_at, ended) = next_event(&mut watch).await;
    assert_eq!(ended_at, previous + 2);
    assert_eq!(ended_at, final_version, "the move's answer is the version of its last event");
    for audience in [WireColor::White, WireColor::Black, WireColor::Unspecified] {
        // At the end the fog lifts for everyone.
        let end = end_of(&ended, audience);
        assert_eq!(end.result, line.outcome.result_str(), "{audience:?}");
        assert_eq!(end.reason(), wanted, "{audience:?}");
        assert_eq!(end.moves, line.moves, "{audience:?}");
        assert_eq!(end.fen, line.fen, "{audience:?}");
    }

    // Every audience's state says the same.
    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&game, viewer).await;
        assert_eq!(state.version, final_version);
        assert_eq!(state.status(), Status::Ended, "{viewer:?}");
        assert_eq!(state.result, line.outcome.result_str(), "{viewer:?}");
        assert_eq!(state.reason(), wanted, "{viewer:?}");
        assert_eq!(state.fen, line.fen, "{viewer:?}");
        assert!(state.visible.is_empty(), "no fog once ended");
        let moves: Vec<Option<String>> = state.moves.iter().map(|m| m.uci.clone()).collect();
        let expected: Vec<Option<String>> = line.moves.iter().cloned().map(Some).collect();
        assert_eq!(moves, expected, "{viewer:?}");
    }
    // The game is over for the rules of the service too.
    let error =
        router.make_move(&game, if mover == WHITE { BLACK } else { WHITE }, "a1a2", line.moves.len() as u32).await;
    assert_eq!(code(error), ErrorCode::GameOver);

    let finished = cluster.finished.once(&game, variant.name()).await;
    assert_eq!(finished.game_id, game);
    assert_eq!(finished.variant(), WireVariant::from(variant));
    assert_eq!(finished.result, line.outcome.result_str());
    assert_eq!(finished.reason(), wanted);
    assert_eq!(finished.moves, line.moves);
    assert_eq!(finished.final_fen, line.fen);
    assert_eq!(finished.initial_fen, Fen::from_position(&Position::new(variant)).to_string());
    assert_eq!(finished.white.as_ref().map(|p| p.id.as_str()), Some(WHITE));
    assert_eq!(finished.black.as_ref().map(|p| p.id.as_str()), Some(BLACK));
    assert!(finished.clock_ms.is_empty() && finished.clock.is_none(), "no clock");
    assert!(finished.created_at_ms <= finished.started_at_ms && finished.started_at_ms <= finished.ended_at_ms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_checkmate() {
    ending_by_the_rules("end-std-mate", Variant::Standard, EndReason::Checkmate, Style::Random, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_stalemate() {
    ending_by_the_rules("end-std-stalemate", Variant::Standard, EndReason::Stalemate, Style::Captures, 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_insufficient_material() {
    ending_by_the_rules("end-std-material", Variant::Standard, EndReason::InsufficientMaterial, Style::Captures, 3)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_threefold() {
    ending_by_the_rules("end-std-threefold", Variant::Standard, EndReason::Threefold, Style::Repeat, 4).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_fifty_moves() {
    ending_by_the_rules("end-std-fifty", Variant::Standard, EndReason::FiftyMoves, Style::Quiet, 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_explosion() {
    ending_by_the_rules("end-atomic-explosion", Variant::Atomic, EndReason::Explosion, Style::Random, 6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_checkmate() {
    ending_by_the_rules("end-atomic-mate", Variant::Atomic, EndReason::Checkmate, Style::Random, 7).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_stalemate() {
    ending_by_the_rules("end-atomic-stalemate", Variant::Atomic, EndReason::Stalemate, Style::Captures, 8).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_insufficient_material() {
    ending_by_the_rules("end-atomic-material", Variant::Atomic, EndReason::InsufficientMaterial, Style::Captures, 9)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_threefold() {
    ending_by_the_rules("end-atomic-threefold", Variant::Atomic, EndReason::Threefold, Style::Repeat, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_fifty_moves() {
    ending_by_the_rules("end-atomic-fifty", Variant::Atomic, EndReason::FiftyMoves, Style::Quiet, 11).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fog_king_captured() {
    ending_by_the_rules("end-fog-king", Variant::Fog, EndReason::KingCaptured, Style::Random, 12).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fog_threefold() {
    ending_by_the_rules("end-fog-threefold", Variant::Fog, EndReason::Threefold, Style::Repeat, 13).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fog_fifty_moves() {
    ending_by_the_rules("end-fog-fifty", Variant::Fog, EndReason::FiftyMoves, Style::Quiet, 14).await;
}

// ---------------------------------------------------------------------------
// 2. Endings by the players and the shard's timers
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resigning_gives_the_game_to_the_opponent() {
    let mut cluster = Cluster::start("end-resign", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Atomic, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4", "e7e5", "g1f3"]).await;
    let mut watch = open_watch(router, &game, version(router, &game).await).await;
    // Black resigns on its own turn.
    let v = send(router, &game, BLACK, Rpc::Resign).await.expect("black resigns");
    let (at, event) = next_event(&mut watch).await;
    assert_eq!(at, v);
    let end = end_of(&event, WireColor::Black);
    assert_eq!((end.result.as_str(), end.reason()), ("1-0", EndReason::Resign));
    assert_eq!(end.moves, ["e2e4", "e7e5", "g1f3"]);
    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&game, viewer).await;
        assert_eq!(state.status(), Status::Ended);
        assert_eq!((state.result.as_str(), state.reason()), ("1-0", EndReason::Resign));
    }
    assert_eq!(code(send(router, &game, WHITE, Rpc::Resign).await), ErrorCode::GameOver);
    let finished = cluster.finished.once(&game, "atomic").await;
    assert_eq!((finished.result.as_str(), finished.reason()), ("1-0", EndReason::Resign));
    assert_eq!(finished.moves, ["e2e4", "e7e5", "g1f3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draw_offer_accepted_ends_by_agreement() {
    let mut cluster = Cluster::start("end-agreement", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Fog, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4", "e7e5"]).await;
    let v = version(router, &game).await;
    assert_eq!(code(send(router, &game, BLACK, Rpc::Draw(OfferAction::Accept)).await), ErrorCode::Conflict);
    assert_eq!(version(router, &game).await, v, "nothing to accept changes nothing");

    send(router, &game, WHITE, Rpc::Draw(OfferAction::Offer)).await.expect("white offers");
    for viewer in [WHITE, BLACK] {
        assert_eq!(router.state(&game, viewer).await.draw_offer(), WireColor::White, "{viewer} sees the offer");
    }
    let v = version(router, &game).await;
    assert_eq!(code(send(router, &game, WHITE, Rpc::Draw(OfferAction::Offer)).await), ErrorCode::Conflict);
    assert_eq!(code(send(router, &game, WHITE, Rpc::Draw(OfferAction::Accept)).await), ErrorCode::Conflict);
    assert_eq!(version(router, &game).await, v, "accepting one's own offer changes nothing");

    send(router, &game, BLACK, Rpc::Draw(OfferAction::Accept)).await.expect("black accepts");
    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&game, viewer).await;
        assert_eq!(state.status(), Status::Ended);
        assert_eq!((state.result.as_str(), state.reason()), ("1/2-1/2", EndReason::Agreement));
        assert_eq!(state.draw_offer(), WireColor::Unspecified);
    }
    let finished = cluster.finished.once(&game, "fog").await;
    assert_eq!((finished.result.as_str(), finished.reason()), ("1/2-1/2", EndReason::Agreement));
    assert_eq!(finished.moves, ["e2e4", "e7e5"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draw_offer_declined_or_answered_by_a_move_lapses() {
    let cluster = Cluster::start("end-decline", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &game, 0, &["d2d4"]).await;
    send(router, &game, WHITE, Rpc::Draw(OfferAction::Offer)).await.expect("white offers");
    send(router, &game, BLACK, Rpc::Draw(OfferAction::Decline)).await.expect("black declines");
    for viewer in [WHITE, BLACK] {
        let state = router.state(&game, viewer).await;
        assert_eq!(state.status(), Status::Playing);
        assert_eq!(state.draw_offer(), WireColor::Unspecified);
    }
    assert_eq!(code(send(router, &game, BLACK, Rpc::Draw(OfferAction::Accept)).await), ErrorCode::Conflict);

    // An offer the opponent answers with a move lapses too.
    send(router, &game, WHITE, Rpc::Draw(OfferAction::Offer)).await.expect("white offers again");
    play(router, &game, 1, &["d7d5"]).await;
    assert_eq!(router.state(&game, WHITE).await.draw_offer(), WireColor::Unspecified);
    assert_eq!(code(send(router, &game, BLACK, Rpc::Draw(OfferAction::Accept)).await), ErrorCode::Conflict);
    play(router, &game, 2, &["c2c4"]).await;
    let state = router.state(&game, BLACK).await;
    assert_eq!(state.status(), Status::Playing);
    assert_eq!(state.moves.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_only_before_both_sides_moved() {
    let mut cluster = Cluster::start("end-abort", test_config()).await;
    let router = &cluster.router;

    let (early, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &early, 0, &["e2e4"]).await;
    send(router, &early, BLACK, Rpc::Abort).await.expect("black aborts before its first move");
    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&early, viewer).await;
        assert_eq!(state.status(), Status::Ended);
        assert_eq!((state.result.as_str(), state.reason()), ("*", EndReason::Aborted));
    }
    assert_eq!(code(send(router, &early, WHITE, Rpc::Abort).await), ErrorCode::GameOver);

    let (late, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &late, 0, &["e2e4", "e7e5"]).await;
    let v = version(router, &late).await;
    for player in [WHITE, BLACK] {
        assert_eq!(code(send(router, &late, player, Rpc::Abort).await), ErrorCode::Conflict, "{player}");
    }
    let state = router.state(&late, WHITE).await;
    assert_eq!((state.version, state.status()), (v, Status::Playing));

    // The aborted game is published like any other, with `*`.
    let finished = cluster.finished.once(&early, "standard").await;
    assert_eq!((finished.result.as_str(), finished.reason()), ("*", EndReason::Aborted));
    assert_eq!(finished.moves, ["e2e4"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shard_aborts_games_nobody_starts_or_joins() {
    let mut config = test_config();
    config.settings.timeouts.no_start_ms = 500;
    config.settings.timeouts.open_game_ms = 1_000;
    let mut cluster = Cluster::start("end-no-start", config).await;
    let router = &cluster.router;

    let (idle, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    let (one_move, _) = router.start_game(WireVariant::Fog, WHITE, BLACK, None).await;
    play(router, &one_move, 0, &["e2e4"]).await;
    let open = router
        .create(CreateGameRequest {
            player_id: WHITE.to_owned(),
            player_name: WHITE.to_owned(),
            variant: WireVariant::Atomic as i32,
            color: ColorChoice::ChooseWhite as i32,
            ..Default::default()
        })
        .await
        .expect("an open game");
    assert_eq!(router.state(&open.game_id, WHITE).await.status(), Status::Waiting);

    for game in [&idle, &one_move, &open.game_id] {
        eventually(Duration::from_secs(8), || async { router.state(game, WHITE).await.status() == Status::Ended })
            .await;
        let state = router.state(game, WHITE).await;
        assert_eq!((state.result.as_str(), state.reason()), ("*", EndReason::Aborted), "{game}");
    }
    let finished = cluster.finished.once(&idle, "standard").await;
    assert_eq!((finished.reason(), finished.moves.len()), (EndReason::Aborted, 0));
    let finished = cluster.finished.once(&one_move, "fog").await;
    assert_eq!((finished.reason(), finished.moves.as_slice()), (EndReason::Aborted, ["e2e4".to_owned()].as_slice()));
    let finished = cluster.finished.once(&open.game_id, "atomic").await;
    assert_eq!(finished.reason(), EndReason::Aborted);
    // Its code seats nobody any more.
    let v = version(router, &open.game_id).await;
    let refused = code(router.join(&open.code, BLACK).await);
    assert!(matches!(refused, ErrorCode::NotFound | ErrorCode::Conflict), "{refused:?}");
    assert_eq!(version(router, &open.game_id).await, v);
}

/// Games no socket or game stream ever followed (a computer game made over
/// HTTP and never moved in, a game played by commands alone) still end:
/// their seats count as away since the last move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shard_ends_games_nobody_follows() {
    let mut config = test_config();
    config.settings.timeouts.abandon_ms = 1_000;
    let mut cluster = Cluster::start("end-unfollowed", config).await;
    let router = &cluster.router;

    let computer = router
        .create(CreateGameRequest {
            player_id: WHITE.to_owned(),
            player_name: WHITE.to_owned(),
            variant: WireVariant::Atomic as i32,
            color: ColorChoice::ChooseWhite as i32,
            computer: true,
            level: fogblast_proto::game::Level::Easy as i32,
            ..Default::default()
        })
        .await
        .expect("a computer game");
    assert_eq!(router.state(&computer.game_id, WHITE).await.status(), Status::Playing);
    let (people, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &people, 0, &["e2e4", "e7e5"]).await;

    for (game, reason) in [(&computer.game_id, EndReason::Aborted), (&people, EndReason::Abandoned)] {
        eventually(Duration::from_secs(20), || async { router.state(game, WHITE).await.status() == Status::Ended })
            .await;
        assert_eq!(router.state(game, WHITE).await.reason(), reason, "{game}");
    }
    assert_eq!(cluster.finished.once(&computer.game_id, "atomic").await.reason(), EndReason::Aborted);
    assert_eq!(cluster.finished.once(&people, "standard").await.reason(), EndReason::Abandoned);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn victory_is_claimed_once_the_opponent_has_been_gone_long_enough() {
    const CLAIM_AFTER_MS: u64 = 600;
    let mut config = test_config();
    config.settings.timeouts.claim_after_ms = CLAIM_AFTER_MS;
    let mut cluster = Cluster::start("end-claim", config).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4", "e7e5"]).await;

    assert_eq!(code(send(router, &game, WHITE, Rpc::Claim).await), ErrorCode::Conflict, "black is still here");
    send(router, &game, BLACK, Rpc::Presence(false)).await.expect("black's gateway reports it gone");
    let v = version(router, &game).await;
    assert_eq!(code(send(router, &game, WHITE, Rpc::Claim).await), ErrorCode::Conflict, "too early");
    assert_eq!(code(send(router, &game, BLACK, Rpc::Claim).await), ErrorCode::Conflict, "white is here");
    let state = router.state(&game, WHITE).await;
    assert_eq!(state.version, v, "refused claims change nothing");
    assert_eq!(state.gone(), WireColor::Black);
    assert!(state.claim_in_ms > 0 && state.claim_in_ms <= CLAIM_AFTER_MS, "{}", state.claim_in_ms);

    // Black comes back, then goes again: the wait starts over.
    send(router, &game, BLACK, Rpc::Presence(true)).await.expect("black is back");
    assert_eq!(router.state(&game, WHITE).await.gone(), WireColor::Unspecified);
    send(router, &game, BLACK, Rpc::Presence(false)).await.expect("black is gone again");
    let gone_at = tokio::time::Instant::now();
    assert_eq!(code(send(router, &game, WHITE, Rpc::Claim).await), ErrorCode::Conflict, "too early again");

    tokio::time::sleep_until(gone_at + Duration::from_millis(CLAIM_AFTER_MS + 100)).await;
    send(router, &game, WHITE, Rpc::Claim).await.expect("the claim wins");
    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&game, viewer).await;
        assert_eq!(state.status(), Status::Ended);
        assert_eq!((state.result.as_str(), state.reason()), ("1-0", EndReason::Abandoned));
        assert_eq!(state.gone(), WireColor::Unspecified, "nobody is gone from an ended game");
    }
    let finished = cluster.finished.once(&game, "standard").await;
    assert_eq!((finished.result.as_str(), finished.reason()), ("1-0", EndReason::Abandoned));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takebacks_between_humans_need_the_opponents_consent() {
    let cluster = Cluster::start("end-takeback", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    assert_eq!(code(send(router, &game, WHITE, Rpc::Takeback(OfferAction::Offer)).await), ErrorCode::Conflict);
    play(router, &game, 0, &["e2e4", "e7e5", "g1f3"]).await;
    let fen_after = |moves: &[&str]| {
        let mut replay = Game::new(Position::new(Variant::Standard));
        for uci in moves {
            replay.play_uci(uci).unwrap();
        }
        Fen::from_position(replay.position()).to_string()
    };
    let consistent = |white: &GameState, black: &GameState, moves: &[&str]| {
        assert_eq!(white.version, black.version);
        assert_eq!(white.fen, black.fen);
        assert_eq!(white.fen, fen_after(moves));
        for state in [white, black] {
            let seen: Vec<&str> = state.moves.iter().map(|m| m.uci.as_deref().unwrap()).collect();
            assert_eq!(seen, moves);
            assert_eq!(state.takeback_offer(), WireColor::Unspecified);
            assert_eq!(state.status(), Status::Playing);
        }
    };

    // White asks to take back its last move while black is to move: one ply.
    send(router, &game, WHITE, Rpc::Takeback(OfferAction::Offer)).await.expect("white asks");
    assert_eq!(router.state(&game, BLACK).await.takeback_offer(), WireColor::White);
    let v = version(router, &game).await;
    assert_eq!(code(send(router, &game, WHITE, Rpc::Takeback(OfferAction::Accept)).await), ErrorCode::Conflict);
    assert_eq!(version(router, &game).await, v);
    let mut watch = open_watch(router, &game, v).await;
    send(router, &game, BLACK, Rpc::Takeback(OfferAction::Accept)).await.expect("black agrees");
    let (_, offer) = next_event(&mut watch).await;
    assert!(matches!(seat_payload(&offer, WireColor::White), Some(Kind::Offer(_))), "{offer:?}");
    let (_, reset) = next_event(&mut watch).await;
    match seat_payload(&reset, WireColor::White) {
        Some(Kind::State(state)) => assert_eq!(state.moves.len(), 2),
        other => panic!("expected the new state, got {other:?}"),
    }
    consistent(&router.state(&game, WHITE).await, &router.state(&game, BLACK).await, &["e2e4", "e7e5"]);

    // White plays something else; black asks on its own turn: its move
    // and white's reply go.
    play(router, &game, 2, &["b1c3"]).await;
    send(router, &game, BLACK, Rpc::Takeback(OfferAction::Offer)).await.expect("black asks");
    send(router, &game, WHITE, Rpc::Takeback(OfferAction::Accept)).await.expect("white agrees");
    consistent(&router.state(&game, WHITE).await, &router.state(&game, BLACK).await, &["e2e4"]);

    // A declined request changes nothing but the request.
    play(router, &game, 1, &["c7c5"]).await;
    send(router, &game, BLACK, Rpc::Takeback(OfferAction::Offer)).await.expect("black asks again");
    send(router, &game, WHITE, Rpc::Takeback(OfferAction::Decline)).await.expect("white declines");
    consistent(&router.state(&game, WHITE).await, &router.state(&game, BLACK).await, &["e2e4", "c7c5"]);
    // And the game goes on from there, at the right ply.
    play(router, &game, 2, &["g1f3", "d7d6"]).await;
    assert_eq!(router.state(&game, WHITE).await.moves.len(), 4);
}

/// Draw offers and takeback requests interrupt the opponent and cost a
/// commit each: past a budget per seat they are refused and change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offers_past_their_budget_are_refused() {
    let cluster = Cluster::start("end-offer-budget", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4", "e7e5"]).await;
    for _ in 0..5 {
        send(router, &game, WHITE, Rpc::Draw(OfferAction::Offer)).await.expect("an offer within the budget");
        send(router, &game, BLACK, Rpc::Draw(OfferAction::Decline)).await.expect("declined");
        send(router, &game, WHITE, Rpc::Takeback(OfferAction::Offer)).await.expect("a request within the budget");
        send(router, &game, BLACK, Rpc::Takeback(OfferAction::Decline)).await.expect("declined");
    }
    let v = version(router, &game).await;
    let refused = send(router, &game, WHITE, Rpc::Draw(OfferAction::Offer)).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited, "{refused:?}");
    assert_eq!(refused.message, "you have made 5 draw offers in this game; no more are allowed");
    let refused = send(router, &game, WHITE, Rpc::Takeback(OfferAction::Offer)).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited, "{refused:?}");
    assert_eq!(version(router, &game).await, v, "refused offers change nothing");
    // The budget is the seat's: black may still offer, and white accept.
    send(router, &game, BLACK, Rpc::Draw(OfferAction::Offer)).await.expect("black's first offer");
    send(router, &game, WHITE, Rpc::Draw(OfferAction::Accept)).await.expect("white agrees");
    assert_eq!(router.state(&game, WHITE).await.reason(), EndReason::Agreement);
}

/// A takeback in fog of war would show the taker what its move revealed
/// and then hide it again: a probe of the fog. Refused for everyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fog_of_war_has_no_takebacks() {
    let cluster = Cluster::start("end-fog-takeback", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Fog, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4", "e7e5", "g1f3"]).await;
    let v = version(router, &game).await;
    for (player, action) in [(WHITE, OfferAction::Offer), (BLACK, OfferAction::Offer), (BLACK, OfferAction::Accept)] {
        let refused = send(router, &game, player, Rpc::Takeback(action)).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::NotAllowed, "{refused:?}");
        assert!(refused.message.contains("fog of war has no takebacks"), "{}", refused.message);
    }
    assert_eq!(version(router, &game).await, v, "refused takebacks change nothing");
    assert_eq!(router.state(&game, BLACK).await.moves.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rematch_agreed_by_both_starts_with_colours_swapped() {
    let cluster = Cluster::start("end-rematch", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Atomic, WHITE, BLACK, Some((180_000, 2_000))).await;
    assert_eq!(code(rematch(router, &game, WHITE).await), ErrorCode::Conflict, "not before the end");
    play(router, &game, 0, &["e2e4"]).await;
    send(router, &game, WHITE, Rpc::Resign).await.expect("white resigns");

    assert_eq!(rematch(router, &game, WHITE).await.expect("white offers"), "");
    assert_eq!(router.state(&game, BLACK).await.rematch_offer(), WireColor::White);
    assert_eq!(code(rematch(router, &game, WHITE).await), ErrorCode::Conflict, "the offer already stands");
    assert_eq!(code(rematch(router, &game, "carol").await), ErrorCode::NotYourGame);
    let new_game = rematch(router, &game, BLACK).await.expect("black agrees");
    assert!(!new_game.is_empty() && new_game != game);
    assert_eq!(router.state(&game, WHITE).await.rematch_game_id, new_game);
    assert_eq!(code(rematch(router, &game, BLACK).await), ErrorCode::Conflict, "the rematch has started");

    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&new_game, viewer).await;
        assert_eq!(state.status(), Status::Playing, "{viewer:?}");
        assert_eq!(state.variant(), WireVariant::Atomic);
        assert_eq!(state.white.as_ref().map(|p| p.id.as_str()), Some(BLACK), "colours swapped");
        assert_eq!(state.black.as_ref().map(|p| p.id.as_str()), Some(WHITE), "colours swapped");
        assert!(state.moves.is_empty());
        let settings = state.clock_settings.expect("the same clock");
        assert_eq!((settings.initial_ms, settings.increment_ms), (180_000, 2_000));
    }
    // Bob has white now.
    assert_eq!(code(router.make_move(&new_game, WHITE, "e2e4", 0).await), ErrorCode::NotYourTurn);
    router.make_move(&new_game, BLACK, "e2e4", 0).await.expect("bob opens");
    router.make_move(&new_game, WHITE, "e7e5", 1).await.expect("alice answers");
    assert_eq!(router.state(&new_game, BLACK).await.moves.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_rematch_offer_is_gone_for_both_and_may_be_made_again() {
    let cluster = Cluster::start("end-rematch-decline", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Atomic, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4"]).await;
    send(router, &game, WHITE, Rpc::Resign).await.expect("white resigns");
    assert_eq!(code(decline_rematch(router, &game, BLACK).await), ErrorCode::Conflict, "no offer to decline");

    let mut watch = open_watch(router, &game, version(router, &game).await).await;
    rematch(router, &game, WHITE).await.expect("white offers");
    assert_eq!(code(decline_rematch(router, &game, WHITE).await), ErrorCode::Conflict, "not one's own offer");
    assert_eq!(code(decline_rematch(router, &game, "carol").await), ErrorCode::NotYourGame);
    let declined_at = decline_rematch(router, &game, BLACK).await.expect("black declines");
    for viewer in [WHITE, BLACK, ""] {
        let state = router.state(&game, viewer).await;
        assert_eq!(state.rematch_offer(), WireColor::Unspecified, "{viewer:?}");
        assert!(state.rematch_game_id.is_empty());
    }
    let (_, offered) = next_event(&mut watch).await;
    assert!(matches!(seat_payload(&offered, WireColor::Black), Some(Kind::Rematch(r)) if !r.declined));
    let (v, declined) = next_event(&mut watch).await;
    assert_eq!(v, declined_at);
    for audience in [WireColor::White, WireColor::Black] {
        let Some(Kind::Rematch(event)) = seat_payload(&declined, audience) else { panic!("{declined:?}") };
        assert!(event.declined && event.game_id.is_empty());
        assert_eq!(event.by(), WireColor::Black);
    }
    assert_eq!(code(decline_rematch(router, &game, BLACK).await), ErrorCode::Conflict, "declined once");

    rematch(router, &game, WHITE).await.expect("white offers again");
    let new_game = rematch(router, &game, BLACK).await.expect("black agrees this time");
    assert!(!new_game.is_empty());
    assert_eq!(code(decline_rematch(router, &game, WHITE).await), ErrorCode::Conflict, "the rematch has started");
}

// ---------------------------------------------------------------------------
// 3. Bad input changes nothing
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_moves_change_nothing() {
    let cluster = Cluster::start("end-refusals", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    let played = play(router, &game, 0, &["e2e4", "e7e5"]).await;
    let before = router.state(&game, WHITE).await;
    assert_eq!(before.version, played);

    let cases: [(&str, &str, u32, ErrorCode); 11] = [
        (WHITE, "e4e6", 2, ErrorCode::IllegalMove),
        (WHITE, "e1g1", 2, ErrorCode::IllegalMove),
        (WHITE, "a7a8q", 2, ErrorCode::IllegalMove),
        (BLACK, "d7d5", 2, ErrorCode::NotYourTurn),
        ("carol", "d2d4", 2, ErrorCode::NotYourGame),
        (WHITE, "d2d4", 0, ErrorCode::StalePly),
        (WHITE, "d2d4", 3, ErrorCode::StalePly),
        (WHITE, "zz99", 2, ErrorCode::BadRequest),
        (WHITE, "", 2, ErrorCode::BadRequest),
        (WHITE, "e2e4e5", 2, ErrorCode::BadRequest),
        (WHITE, "e2", 2, ErrorCode::BadRequest),
    ];
    for (player, uci, ply, expected) in cases {
        let error = router.make_move(&game, player, uci, ply).await;
        assert_eq!(code(error), expected, "{player} {uci:?} at {ply}");
        assert_eq!(version(router, &game).await, before.version, "{player} {uci:?} at {ply} changed the game");
    }
    // A resend of the last move is answered again and plays nothing.
    assert_eq!(router.make_move(&game, BLACK, "e7e5", 1).await.expect("a resend"), before.version);
    let after = router.state(&game, WHITE).await;
    assert_eq!((after.version, after.fen.as_str(), after.moves.len()), (before.version, before.fen.as_str(), 2));

    // Once over, every command that would change the game is refused.
    let ended = play(router, &game, 2, &["d1h5", "b8c6", "f1c4", "g8f6", "h5f7"]).await;
    let state = router.state(&game, BLACK).await;
    assert_eq!((state.status(), state.reason(), state.result.as_str()), (Status::Ended, EndReason::Checkmate, "1-0"));
    assert_eq!(code(router.make_move(&game, BLACK, "e8e7", 7).await), ErrorCode::GameOver);
    assert_eq!(code(send(router, &game, BLACK, Rpc::Resign).await), ErrorCode::GameOver);
    assert_eq!(code(send(router, &game, BLACK, Rpc::Draw(OfferAction::Offer)).await), ErrorCode::GameOver);
    assert_eq!(code(send(router, &game, BLACK, Rpc::Takeback(OfferAction::Offer)).await), ErrorCode::GameOver);
    assert_eq!(code(send(router, &game, BLACK, Rpc::Abort).await), ErrorCode::GameOver);
    assert_eq!(code(send(router, &game, BLACK, Rpc::Claim).await), ErrorCode::GameOver);
    assert_eq!(version(router, &game).await, ended);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_malformed_ids_and_codes_are_refused() {
    let cluster = Cluster::start("end-bad-ids", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    let v = version(router, &game).await;

    // A well-formed id no game has.
    let unknown = "nosuchgame23";
    assert_eq!(code(router.make_move(unknown, WHITE, "e2e4", 0).await), ErrorCode::NotFound);
    assert_eq!(code(try_state(router, unknown, WHITE).await), ErrorCode::NotFound);
    assert_eq!(code(send(router, unknown, WHITE, Rpc::Resign).await), ErrorCode::NotFound);

    // Malformed ids, on any shard, before anything else is looked at.
    let mut client = router.client(&router.any_addr().await);
    let owner = router.owner_addr(&GameId::parse(&game).unwrap()).await.unwrap();
    let mut owner_client = router.client(&owner);
    let too_long = "x".repeat(65);
    let bad_moves = [
        ("", WHITE),
        ("not a game!", WHITE),
        (too_long.as_str(), WHITE),
        (game.as_str(), ""),
        (game.as_str(), "al ice"),
    ];
    for (game_id, player_id) in bad_moves {
        let request = support::move_command(game_id, player_id, "e2e4", 0);
        for target in [&mut client, &mut owner_client] {
            let status = target.execute(request.clone()).await.expect_err("refused");
            assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "{game_id:?} {player_id:?}");
        }
    }
    for game_id in ["", "bad/id"] {
        let request = GetStateRequest { game_id: game_id.to_owned(), player_id: WHITE.to_owned() };
        let status = client.get_state(request).await.expect_err("refused");
        assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "{game_id:?}");
        let request = Command::new(game_id, WHITE, Action::Resign(Resign {}));
        let status = client.execute(request).await.expect_err("refused");
        assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "{game_id:?}");
    }
    let request = Command::new(game.clone(), BLACK, Action::draw(OfferAction::Unspecified));
    let status = owner_client.execute(request).await.expect_err("refused");
    assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "an offer needs an action");
    assert_eq!(version(router, &game).await, v, "malformed requests change nothing");

    // Join codes: one's own, unknown, malformed, already used.
    let open = router
        .create(CreateGameRequest {
            player_id: "carol".to_owned(),
            player_name: "carol".to_owned(),
            variant: WireVariant::Fog as i32,
            color: ColorChoice::ChooseRandom as i32,
            ..Default::default()
        })
        .await
        .expect("an open game");
    let open_v = version(router, &open.game_id).await;
    assert_eq!(code(router.join(&open.code, "carol").await), ErrorCode::Conflict, "own code");
    assert_eq!(code(router.join("ZZZZ2222", "dave").await), ErrorCode::NotFound, "unknown code");
    for bad in ["", "ABC", "ABCDEFGH!", "ABCD EFG"] {
        assert_eq!(code(router.join(bad, "dave").await), ErrorCode::BadRequest, "{bad:?}");
    }
    let request = JoinGameRequest {
        player_id: String::new(),
        player_name: "dave".to_owned(),
        code: open.code.clone(),
        ..Default::default()
    };
    let status = client.join_game(request).await.expect_err("refused");
    assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "a joiner needs an id");
    let state = router.state(&open.game_id, "carol").await;
    assert_eq!((state.version, state.status()), (open_v, Status::Waiting), "refused joins change nothing");

    router.join(&open.code.to_ascii_lowercase(), "dave").await.expect("codes are read case-blind");
    assert_eq!(code(router.join(&open.code, "erin").await), ErrorCode::Conflict, "a used code names a full game");
    assert_eq!(router.state(&open.game_id, "carol").await.status(), Status::Playing);
}

/// A command that names no action is refused as `bad_request` by any
/// shard, owner or not, and neither changes the game nor uses up its
/// request id: the same id then carries a real move, which is played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_without_an_action_is_refused_and_changes_nothing() {
    let cluster = Cluster::start("end-no-action", test_config()).await;
    let router = &cluster.router;
    let (game, _) = router.start_game(WireVariant::Standard, WHITE, BLACK, None).await;
    play(router, &game, 0, &["e2e4"]).await;
    let before = router.state(&game, BLACK).await;

    let empty = Command {
        game_id: game.clone(),
        player_id: BLACK.to_owned(),
        request_id: "bob-first-reply".to_owned(),
        action: None,
    };
    let owner = router.owner_addr(&GameId::parse(&game).unwrap()).await.unwrap();
    let other = if cluster._shards[0].addr == owner { &cluster._shards[1].addr } else { &cluster._shards[0].addr };
    for target in [&owner, other] {
        for _ in 0..2 {
            let status = router.client(target).execute(empty.clone()).await.expect_err("refused");
            let error = ServiceError::from_status(&status);
            assert_eq!(error.code, ErrorCode::BadRequest, "{target}: {error:?}");
        }
    }
    assert_eq!(code(router.execute(empty.clone()).await), ErrorCode::BadRequest, "through the router");
    let after = router.state(&game, BLACK).await;
    assert_eq!(
        (after.version, after.fen.as_str(), after.moves.len(), after.status()),
        (before.version, before.fen.as_str(), 1, Status::Playing),
        "a command without an action changes nothing"
    );
    assert_eq!(after.legal, before.legal, "it is still black's move");

    // The refused command's request id was not recorded: a move sent under
    // it is played, not answered as the refusal.
    let mut reply = support::move_command(&game, BLACK, "e7e5", 1);
    reply.request_id = empty.request_id.clone();
    let played = router.execute(reply).await.expect("the move is played").version;
    assert_eq!(played, before.version + 1);
    assert_eq!(router.state(&game, WHITE).await.moves.len(), 2);
}

/// Right after a shard joins, a shard that has not seen it yet still
/// serves (and writes) games the newcomer owns. The newcomer's copy of such
/// a game must not go stale: reads and refusals are checked against the
/// store, or the game answers from the past and refuses every move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_written_by_a_shard_with_a_lagging_view_is_served_fresh() {
    let backend = Backend::distributed("end-lagging-view");
    // A long lease, so `a` keeps serving with its old view while paused.
    let mut config = test_config();
    config.settings.lease_ms = 6_000;
    let a = ShardProcess::start(&backend, "a", config.clone()).await;
    // `a` neither renews nor reads membership again: it has not seen `b`.
    a.pause_heartbeat(true);
    a.freeze_view(true);
    let b = ShardProcess::start(&backend, "b", config).await;
    let router = Router::new(&backend).await;
    let mut on_a = router.client(&a.addr);
    let state_on_b = |game: String| {
        let mut on_b = router.client(&b.addr);
        async move {
            let request = GetStateRequest { game_id: game, player_id: WHITE.to_owned() };
            on_b.get_state(request).await.expect("b answers").into_inner()
        }
    };

    // `a` still believes it owns every game; find one that is `b`'s.
    let mut found = None;
    for _ in 0..32 {
        let request = CreateGameRequest {
            player_id: WHITE.to_owned(),
            player_name: WHITE.to_owned(),
            variant: WireVariant::Standard as i32,
            color: ColorChoice::ChooseWhite as i32,
            ..Default::default()
        };
        let created = on_a.create_game(request).await.expect("a creates").into_inner();
        if router.owner_addr(&GameId::parse(&created.game_id).unwrap()).await.as_deref() == Some(b.addr.as_str()) {
            found = Some(created);
            break;
        }
    }
    let created = found.expect("one of 32 games falls to b");
    let game = created.game_id.clone();
    assert_eq!(state_on_b(game.clone()).await.status(), Status::Waiting, "b reads the open game");

    // `a` seats black: `b` must read that, not its own earlier copy.
    let join = JoinGameRequest {
        player_id: BLACK.to_owned(),
        player_name: BLACK.to_owned(),
        code: created.code,
        ..Default::default()
    };
    on_a.join_game(join).await.expect("a seats black");
    let state = state_on_b(game.clone()).await;
    assert_eq!((state.status(), state.version), (Status::Playing, 2), "b serves the game as stored");

    // `a` plays white's move; `b`, holding the game at ply 0, takes
    // black's reply at ply 1 rather than refusing it as stale.
    let request = |player: &str, uci: &str, ply: u32| support::move_command(&game, player, uci, ply);
    on_a.execute(request(WHITE, "e2e4", 0)).await.expect("a plays white's move");
    let version = router
        .client(&b.addr)
        .execute(request(BLACK, "e7e5", 1))
        .await
        .expect("b plays black's reply")
        .into_inner()
        .version;
    assert_eq!(version, 4);
    let state = state_on_b(game.clone()).await;
    let moves: Vec<_> = state.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
    assert_eq!((state.version, moves), (4, vec!["e2e4".to_owned(), "e7e5".to_owned()]));
    a.pause_heartbeat(false);
}
