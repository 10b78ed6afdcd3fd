//! Games against the computer on a real shard and a real engine pool: the
//! shard asks the pool for every computer move (skipping a replica that is
//! down), the computer's clock runs like anyone's, a takeback undoes the
//! player's move and the computer's reply at once, and a game is played to
//! its end.

mod support;

use std::time::Duration;

use fogblast_engine_service::{EngineConfig, EngineSettings};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{
    ClockSettings, ColorChoice, Command, CreateGameRequest, GameState, Level, OfferAction, Resign, Status, Variant,
};
use fogblast_rules::{Fen, Position, Variant as RulesVariant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use support::{eventually, test_config, Backend, Router, ShardProcess};
use tokio::net::TcpListener;

const HUMAN: &str = "human";

/// A live engine pool and, first in the list, an address nobody answers.
async fn engines() -> Vec<String> {
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let live = format!("http://{}", grpc.local_addr().unwrap());
    let settings = EngineSettings { workers: 1, queue: 16, hash_mb: 1 };
    let config = EngineConfig { settings, ..EngineConfig::default() };
    tokio::spawn(fogblast_engine_service::run(config, grpc, metrics, std::future::pending()));
    let dead = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_addr = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    vec![dead_addr, live]
}

async fn setup(name: &str) -> (Backend, ShardProcess, Router) {
    let backend = Backend::distributed(name);
    let config = support::GameConfigExt::with_engines(test_config(), engines().await);
    let shard = ShardProcess::start(&backend, "s1", config).await;
    let router = Router::new(&backend).await;
    (backend, shard, router)
}

async fn create(router: &Router, variant: Variant, color: ColorChoice, clock: Option<ClockSettings>) -> String {
    let request = CreateGameRequest {
        player_id: HUMAN.into(),
        player_name: HUMAN.into(),
        variant: variant as i32,
        color: color as i32,
        clock,
        computer: true,
        level: Level::Easy as i32,
        ..Default::default()
    };
    router.create(request).await.unwrap().game_id
}

/// Waits for the human's turn (or the end) and returns the state then.
async fn my_turn(router: &Router, game: &str, human_white: bool) -> GameState {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let state = router.state(game, HUMAN).await;
        let white_to_move = state.moves.len() % 2 == 0;
        if state.status() == Status::Ended || white_to_move == human_white {
            return state;
        }
        assert!(tokio::time::Instant::now() < deadline, "the computer did not move");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn position(state: &GameState, variant: RulesVariant) -> Position {
    Position::from_fen(&state.fen, variant).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_computer_plays_a_game_to_its_end() {
    let (_backend, _shard, router) = setup("computer-end").await;
    let game = create(&router, Variant::Atomic, ColorChoice::ChooseBlack, None).await;
    let mut rng = StdRng::seed_from_u64(7);
    let mut state = my_turn(&router, &game, false).await;
    // The human takes whenever it can: in atomic every capture explodes
    // pieces, so most games end in a few dozen plies. A game that does not
    // is ended by the fifty-move rule, which bounds it: the counter of plies
    // since a capture or pawn move never passes 100.
    while state.status() != Status::Ended {
        let quiet_plies: u32 = state.fen.split(' ').nth(4).unwrap().parse().unwrap();
        assert!(quiet_plies < 100, "the fifty-move rule did not end the game: {}", state.fen);
        let position = position(&state, RulesVariant::Atomic);
        let moves = position.legal_moves();
        let captures: Vec<_> = moves.iter().copied().filter(|m| m.is_capture()).collect();
        let choices = if captures.is_empty() { &moves[..] } else { &captures[..] };
        let m = choices[rng.random_range(0..choices.len())];
        let uci = m.to_uci(fogblast_rules::CastlingMode::Standard).to_string();
        router.make_move(&game, HUMAN, &uci, state.moves.len() as u32).await.unwrap();
        state = my_turn(&router, &game, false).await;
    }
    assert!(state.moves.len() >= 2, "the computer opened the game");
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&state.result.as_str()), "{}", state.result);
    // Every move the computer made is legal in sequence: replaying them all reaches the final position.
    let mut replay = fogblast_rules::Game::new(Position::new(RulesVariant::Atomic));
    for m in &state.moves {
        replay.play_uci(m.uci.as_deref().unwrap()).unwrap();
    }
    assert_eq!(Fen::from_position(replay.position()).to_string(), state.fen);
    assert!(replay.outcome().is_some(), "the game ended by the rules: {:?}", state.reason());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeback_undoes_the_move_and_the_computers_reply() {
    let (_backend, _shard, router) = setup("computer-takeback").await;
    let game = create(&router, Variant::Standard, ColorChoice::ChooseWhite, None).await;
    router.make_move(&game, HUMAN, "e2e4", 0).await.unwrap();
    let state = my_turn(&router, &game, true).await;
    assert_eq!(state.moves.len(), 2);
    router.make_move(&game, HUMAN, "d2d4", 2).await.unwrap();
    let state = my_turn(&router, &game, true).await;
    assert_eq!(state.moves.len(), 4);
    router.execute(Command::new(game.clone(), HUMAN, Action::takeback(OfferAction::Offer))).await.unwrap();
    let state = router.state(&game, HUMAN).await;
    assert_eq!(state.moves.len(), 2, "the move and its reply are gone");
    assert_eq!(state.moves[0].uci.as_deref(), Some("e2e4"));
    assert_eq!(state.status(), Status::Playing);
    // The computer does not move again: it is the human's turn.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(router.state(&game, HUMAN).await.moves.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_computers_clock_runs_and_a_draw_offer_is_refused_without_a_commit() {
    let (_backend, _shard, router) = setup("computer-clock").await;
    let clock = ClockSettings { initial_ms: 60_000, increment_ms: 0 };
    let game = create(&router, Variant::Standard, ColorChoice::ChooseWhite, Some(clock)).await;
    let mut state = router.state(&game, HUMAN).await;
    for ply in [0u32, 2, 4] {
        let position = position(&state, RulesVariant::Standard);
        let moves = position.legal_moves();
        let quiet = ["e2e4", "g1f3", "b1c3", "d2d3", "a2a3", "h2h3"];
        let uci = quiet
            .iter()
            .map(|u| u.to_string())
            .find(|u| moves.iter().any(|m| m.to_uci(fogblast_rules::CastlingMode::Standard).to_string() == *u))
            .unwrap_or_else(|| moves[0].to_uci(fogblast_rules::CastlingMode::Standard).to_string());
        router.make_move(&game, HUMAN, &uci, ply).await.unwrap();
        state = my_turn(&router, &game, true).await;
    }
    assert_eq!(state.status(), Status::Playing);
    let clock = state.clock.expect("a clocked game reports its clocks");
    assert!(clock.black_ms < 60_000, "the computer's clock never ran: {clock:?}");
    assert_eq!(clock.running(), fogblast_proto::game::Color::White);

    let request = Command::new(game.clone(), HUMAN, Action::draw(OfferAction::Offer));
    let version = router.state(&game, HUMAN).await.version;
    // The computer plays every game out: an offer is refused at once and
    // commits nothing, however often it comes.
    for _ in 0..10 {
        let refused = router.execute(request.clone()).await.unwrap_err();
        assert_eq!(refused.code, fogblast_proto::error::ErrorCode::Conflict, "{refused:?}");
        assert!(refused.message.contains("plays every game out"), "{}", refused.message);
    }
    let after = router.state(&game, HUMAN).await;
    assert_eq!((after.status(), after.version), (Status::Playing, version), "nothing was committed");
    assert_eq!(after.draw_offer, 0, "no offer is left standing");

    // Resigning ends it for the computer.
    router.execute(Command::new(game.clone(), HUMAN, Action::Resign(Resign {}))).await.unwrap();
    eventually(Duration::from_secs(2), || async { router.state(&game, HUMAN).await.result == "0-1" }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_computer_plays_fog_of_war_to_its_end() {
    let (_backend, _shard, router) = setup("computer-fog").await;
    let game = create(&router, Variant::Fog, ColorChoice::ChooseWhite, None).await;
    let mut rng = StdRng::seed_from_u64(11);
    let mut state = my_turn(&router, &game, true).await;
    while state.status() != Status::Ended {
        assert!(state.moves.len() < 400, "the game did not end");
        // While the game runs the human never learns the computer's moves.
        for (ply, m) in state.moves.iter().enumerate() {
            assert_eq!(m.uci.is_some(), ply % 2 == 0, "ply {ply}: {m:?}");
        }
        assert!(!state.legal.is_empty(), "the human has moves");
        // Captures when there are any, so the game reaches its end soon.
        let view: Fen = state.fen.parse().unwrap();
        let theirs = view.0.board.by_color(fogblast_rules::Color::Black);
        let captures: Vec<&String> =
            state.legal.iter().filter(|uci| theirs.contains(uci[2..4].parse().unwrap())).collect();
        let uci = if !captures.is_empty() && rng.random_bool(0.7) {
            captures[rng.random_range(0..captures.len())].clone()
        } else {
            state.legal[rng.random_range(0..state.legal.len())].clone()
        };
        router.make_move(&game, HUMAN, &uci, state.moves.len() as u32).await.unwrap();
        state = my_turn(&router, &game, true).await;
    }
    assert!(state.moves.len() >= 2, "the computer answered");
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&state.result.as_str()), "{}", state.result);
    println!("fog game against the computer: {} plies, {} ({:?})", state.moves.len(), state.result, state.reason());
    // The fog has lifted: every move is shown, and replaying them (the
    // computer's included) by the rules reaches the final position and its end.
    let mut replay = fogblast_rules::Game::new(Position::new(RulesVariant::Fog));
    for m in &state.moves {
        replay.play_uci(m.uci.as_deref().expect("the fog lifts at the end")).unwrap();
    }
    assert_eq!(Fen::from_position(replay.position()).to_string(), state.fen);
    assert!(replay.outcome().is_some(), "the game ended by the rules: {:?}", state.reason());
}
