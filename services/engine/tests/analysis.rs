//! Analysis on the pool, over real gRPC: every position of a game gets a
//! score from white's side (a forced mate as moves to mate, a finished
//! position its result), a game that cannot be replayed is refused, and
//! computer moves are answered while an analysis backlog waits.

mod support;

use std::time::Duration;

use fogblast_engine_service::EngineConfig;
use fogblast_proto::engine::{AnalyseRequest, Level, Variant};
use fogblast_rules::{CastlingMode, Game, Position};
use support::{request, small_config, TestServer};
use tonic::Code;

fn analyse(variant: Variant, moves: &[&str], depth: u32) -> AnalyseRequest {
    AnalyseRequest {
        variant: variant.into(),
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        depth,
        ..Default::default()
    }
}

/// A game of up to `plies` moves, each chosen from the legal ones by a
/// fixed rule, so every run analyses the same game.
fn long_game(variant: fogblast_rules::Variant, plies: usize) -> Vec<String> {
    let mut game = Game::new(Position::new(variant));
    let mut seed = 0x9e37_79b9_u64;
    while game.ply() < plies && game.outcome().is_none() {
        let moves = game.position().legal_moves();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let m = moves[(seed >> 33) as usize % moves.len()];
        game.play(m).expect("a legal move");
    }
    game.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_atomic_game_is_scored_position_by_position_up_to_the_explosion() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    // The knight takes on f7 and the explosion takes black's king beside it.
    let moves = ["g1f3", "a7a6", "f3g5", "a6a5", "g5f7"];
    let answer = client.analyse(analyse(Variant::Atomic, &moves, 4)).await.unwrap().into_inner();
    assert_eq!(answer.positions.len(), moves.len() + 1);
    let before_the_blast = &answer.positions[4];
    assert_eq!(before_the_blast.best, "g5f7");
    assert_eq!(before_the_blast.mate, Some(1), "white mates in one: {before_the_blast:?}");
    assert_eq!(before_the_blast.line.first().map(String::as_str), Some("g5f7"));
    // Black to move and lost (f6 only delays it): white's side, so positive.
    assert!(answer.positions[3].mate.is_some_and(|mate| mate > 0), "{:?}", answer.positions[3]);
    let end = &answer.positions[5];
    assert_eq!((end.result.as_str(), end.cp, end.mate, end.best.as_str()), ("1-0", None, None, ""));
    assert!(answer.positions[0].cp.is_some_and(|cp| cp.abs() < 300), "{:?}", answer.positions[0]);
    for eval in &answer.positions[..5] {
        assert!(eval.cp.is_some() != eval.mate.is_some() && !eval.best.is_empty(), "{eval:?}");
        assert!(eval.result.is_empty(), "{eval:?}");
    }
    assert_eq!(server.sample("fogblast_engine_analyses_total{outcome=\"ok\"}").await, 1.0);
    assert_eq!(server.sample("fogblast_engine_analysis_positions_total").await, 5.0);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fog_game_is_analysed_on_the_true_board() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    // White's queen takes the king it could not see coming to f7 for: fog
    // of war is won by capturing the king.
    let moves = ["e2e4", "f7f6", "d1h5", "g7g6", "h5g6", "a7a6", "g6e8"];
    let answer = client.analyse(analyse(Variant::Fog, &moves, 3)).await.unwrap().into_inner();
    assert_eq!(answer.positions.len(), moves.len() + 1);
    assert_eq!(answer.positions[6].best, "g6e8", "{:?}", answer.positions[6]);
    assert_eq!(answer.positions[6].mate, Some(1), "{:?}", answer.positions[6]);
    assert_eq!(answer.positions[7].result, "1-0");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_that_cannot_be_replayed_is_refused_naming_the_move() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    let status = client.analyse(analyse(Variant::Standard, &["e2e4", "e2e4"], 4)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("moves[1]"), "{status:?}");
    let status = client.analyse(analyse(Variant::Standard, &[], 99)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("depth 99"), "{status:?}");
    let status = client.analyse(analyse(Variant::Unspecified, &[], 0)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(server.sample("fogblast_engine_analyses_total{outcome=\"ok\"}").await, 0.0);
    server.shutdown().await.unwrap();
}

/// Polls a sample until `check` holds, for up to a minute (CI shares two cores).
async fn wait_until(server: &TestServer, name: &str, check: impl Fn(f64) -> bool) -> f64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let now = server.sample(name).await;
        if check(now) {
            return now;
        }
        assert!(tokio::time::Instant::now() < deadline, "{name} stayed at {now}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computer_moves_are_answered_while_an_analysis_backlog_waits() {
    // One thread: analysis holds it, and every move has to take it back.
    let mut config: EngineConfig = small_config();
    config.settings.workers = 1;
    config.analysis.analysis_depth = 9;
    let mut server = TestServer::start(config).await;
    let client = server.client().await;
    let games = 4;
    let backlog: Vec<_> = (0..games)
        .map(|_| {
            let mut client = client.clone();
            let moves = long_game(fogblast_rules::Variant::Standard, 80);
            tokio::spawn(async move {
                let request = AnalyseRequest { variant: Variant::Standard.into(), moves, ..Default::default() };
                client.analyse(request).await
            })
        })
        .collect();
    wait_until(&server, "fogblast_engine_analysis_busy_workers", |busy| busy == 1.0).await;
    wait_until(&server, "fogblast_engine_analysis_queue_depth", |depth| depth == f64::from(games - 1)).await;

    let moves = 6;
    for _ in 0..moves {
        let mut client = client.clone();
        let answer = client.best_move(request(Variant::Atomic, Level::Medium)).await.expect("a computer move");
        assert!(!answer.into_inner().uci.is_empty());
        // Answered with the backlog still waiting behind the running analysis.
        assert_eq!(server.sample("fogblast_engine_analysis_queue_depth").await, f64::from(games - 1));
        assert_eq!(server.sample("fogblast_engine_analyses_total{outcome=\"ok\"}").await, 0.0);
    }
    assert_eq!(server.sample("fogblast_engine_requests_total{outcome=\"ok\"}").await, f64::from(moves));

    // Shutting down stops the analyses unfinished: a durable queue gives them
    // to another replica.
    server.shutdown().await.unwrap();
    for call in backlog {
        let status = call.await.unwrap().expect_err("stopped by the shutdown");
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    }
}
