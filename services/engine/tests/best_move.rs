//! `BestMove` answers over real gRPC: legal moves at every level, a forced
//! win found, and every malformed request refused with a clear message.

mod support;

use fogblast_proto::engine::{BestMoveRequest, Clock, FogObservation, FogPly, Level, Side, Variant};
use fogblast_rules::{Color, Outcome, Position, Uci, Variant as RulesVariant, WinReason};
use support::{request, small_config, TestServer, ATOMIC_KIWIPETE};
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_level_answers_a_legal_move_from_the_atomic_start() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    let start = Position::new(RulesVariant::Atomic);
    for level in [Level::Easy, Level::Medium, Level::Hard] {
        let request = BestMoveRequest { budget_ms: 200, seed: 7, ..request(Variant::Atomic, level) };
        let answer = client.best_move(request).await.unwrap().into_inner();
        let uci: Uci = answer.uci.parse().unwrap();
        assert!(start.parse_uci(&uci).is_some(), "{level:?} answered {answer:?}");
        assert!(answer.depth >= 1 && answer.nodes > 0, "{level:?} answered {answer:?}");
        assert!(answer.elapsed_ms <= 1_000, "{level:?} took {} ms over its 200 ms budget", answer.elapsed_ms);
    }
    server.shutdown().await.unwrap();
}

fn fog_white_start() -> FogObservation {
    FogObservation { side: Side::White.into(), plies: Vec::new() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_level_answers_a_fog_game_from_its_observations() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    // A short game; black asks from what it has seen.
    let mut game = fogblast_rules::Game::new(Position::new(RulesVariant::Fog));
    for uci in ["e2e4", "d7d5", "f1b5", "c7c6", "b5c6"] {
        game.play_uci(uci).unwrap();
    }
    let obs = fogblast_engine::FogObservation::from_game(&game, Color::Black);
    let plies = obs
        .plies()
        .iter()
        .map(|ply| match ply {
            fogblast_engine::fog::ObservedPly::Own { uci, after } => {
                FogPly { own_move: uci.to_string(), view: after.board_text(), ..Default::default() }
            }
            fogblast_engine::fog::ObservedPly::Opponent { after, lost } => FogPly {
                view: after.board_text(),
                en_passant: after.ep_square().map(|sq| sq.to_string()).unwrap_or_default(),
                lost: lost.into_iter().map(|sq| sq.to_string()).collect(),
                ..Default::default()
            },
        })
        .collect();
    for level in [Level::Easy, Level::Medium, Level::Hard] {
        let request = BestMoveRequest {
            budget_ms: 300,
            seed: 3,
            fog: Some(FogObservation { side: Side::Black.into(), plies: Vec::clone(&plies) }),
            ..request(Variant::Fog, level)
        };
        let answer = client.best_move(request).await.unwrap().into_inner();
        let uci: Uci = answer.uci.parse().unwrap();
        assert!(game.position().parse_uci(&uci).is_some(), "{level:?} answered {answer:?}");
        assert!(answer.nodes > 0, "{level:?} answered {answer:?}");
        assert!(answer.elapsed_ms <= 1_000, "{level:?} took {} ms over its 300 ms budget", answer.elapsed_ms);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_and_clock_lead_to_the_position_searched() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    let moves = ["e2e4", "e7e5", "g1f3", "b8c6"];
    let request = BestMoveRequest {
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        clock: Some(Clock { remaining_ms: 3_000, increment_ms: 0 }),
        ..request(Variant::Standard, Level::Medium)
    };
    let answer = client.best_move(request).await.unwrap().into_inner();
    let mut position = Position::new(RulesVariant::Standard);
    for m in moves {
        let m = position.parse_uci(&m.parse().unwrap()).unwrap();
        position.play_unchecked(m);
    }
    assert!(position.parse_uci(&answer.uci.parse().unwrap()).is_some(), "{answer:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finds_the_explosion_that_wins_at_once() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    // In atomic kiwipete three captures beside the black king blow it up:
    // Qxf7, Nxf7 and Nxd7. Any of them is a mate in one.
    let kiwipete = Position::from_fen(ATOMIC_KIWIPETE, RulesVariant::Atomic).unwrap();
    // Here only Qxe7 does.
    let lone_queen = "4k3/4p3/8/8/7Q/8/8/4K3 w - - 0 1";
    // Easy overlooks most wins at once by design (docs/engine.md, Levels),
    // so a newcomer can beat it; the stronger levels never do.
    for level in [Level::Medium, Level::Hard] {
        let ask = BestMoveRequest { initial_fen: ATOMIC_KIWIPETE.to_owned(), ..request(Variant::Atomic, level) };
        let answer = client.best_move(ask).await.unwrap().into_inner();
        assert!(["f3f7", "e5f7", "e5d7"].contains(&answer.uci.as_str()), "{level:?}: {answer:?}");
        assert_eq!(answer.mate_in, Some(1), "{level:?}: {answer:?}");
        let m = kiwipete.parse_uci(&answer.uci.parse().unwrap()).unwrap();
        let (after, _) = kiwipete.play(m).unwrap();
        assert_eq!(after.outcome(), Some(Outcome::Decisive { winner: Color::White, reason: WinReason::KingExploded }));

        let ask = BestMoveRequest { initial_fen: lone_queen.to_owned(), ..request(Variant::Atomic, level) };
        let answer = client.best_move(ask).await.unwrap().into_inner();
        assert_eq!((answer.uci.as_str(), answer.mate_in), ("h4e7", Some(1)), "{level:?}: {answer:?}");
    }
    let ask = BestMoveRequest { initial_fen: ATOMIC_KIWIPETE.to_owned(), ..request(Variant::Atomic, Level::Easy) };
    let answer = client.best_move(ask).await.unwrap().into_inner();
    assert!(kiwipete.parse_uci(&answer.uci.parse().unwrap()).is_some(), "Easy answers a legal move: {answer:?}");
    server.shutdown().await.unwrap();
}

/// A request that cannot be searched, and words its refusal must contain.
fn invalid_requests() -> Vec<(&'static str, BestMoveRequest, Vec<&'static str>)> {
    let atomic = || request(Variant::Atomic, Level::Easy);
    let standard = || request(Variant::Standard, Level::Easy);
    let moves = |list: &[&str]| list.iter().map(|m| (*m).to_owned()).collect::<Vec<_>>();
    let fools_mate = ["f2f3", "e7e5", "g2g4", "d8h4"];
    vec![
        ("unspecified variant", request(Variant::Unspecified, Level::Easy), vec!["variant is unspecified"]),
        ("unknown variant", BestMoveRequest { variant: 9, ..atomic() }, vec!["unknown variant 9"]),
        ("fog without observations", request(Variant::Fog, Level::Easy), vec!["FOG", "`fog`"]),
        (
            "fog with the moves",
            BestMoveRequest {
                moves: moves(&["e2e4"]),
                fog: Some(fog_white_start()),
                ..request(Variant::Fog, Level::Easy)
            },
            vec!["must not carry", "moves"],
        ),
        (
            "fog with an impossible own move",
            BestMoveRequest {
                fog: Some(FogObservation {
                    side: Side::White.into(),
                    plies: vec![
                        FogPly {
                            own_move: "e2e5".into(),
                            view: Position::new(RulesVariant::Fog).fog_view(Color::White).board_fen(),
                            ..Default::default()
                        },
                        FogPly {
                            view: Position::new(RulesVariant::Fog).fog_view(Color::White).board_fen(),
                            ..Default::default()
                        },
                    ],
                }),
                ..request(Variant::Fog, Level::Easy)
            },
            vec!["e2e5", "not legal"],
        ),
        ("unspecified level", request(Variant::Atomic, Level::Unspecified), vec!["level is unspecified"]),
        ("unknown level", BestMoveRequest { level: 4, ..atomic() }, vec!["unknown level 4"]),
        (
            "bad FEN",
            BestMoveRequest { initial_fen: "not a fen".to_owned(), ..atomic() },
            vec!["initial_fen", "not a fen"],
        ),
        (
            "impossible FEN",
            BestMoveRequest { initial_fen: "8/8/8/8/8/8/8/8 w - - 0 1".to_owned(), ..standard() },
            vec!["initial_fen", "king"],
        ),
        ("move syntax", BestMoveRequest { moves: moves(&["e2e4", "e7"]), ..atomic() }, vec!["moves[1]", "\"e7\""]),
        (
            "illegal move",
            BestMoveRequest { moves: moves(&["e2e4", "e7e5", "e1e3"]), ..atomic() },
            vec!["moves[2] e1e3 is not a legal move"],
        ),
        (
            "move after the end",
            BestMoveRequest { moves: moves(&[&fools_mate[..], &["e2e4"]].concat()), ..standard() },
            vec!["moves[4] e2e4", "after the game ended", "checkmate"],
        ),
        (
            "game over",
            BestMoveRequest { moves: moves(&fools_mate), ..standard() },
            vec!["already over", "0-1", "white is checkmated"],
        ),
        (
            "exploded king",
            BestMoveRequest {
                initial_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 1".to_owned(),
                ..atomic()
            },
            vec!["already over", "white's king exploded"],
        ),
        ("absurd budget", BestMoveRequest { budget_ms: 86_400_000, ..atomic() }, vec!["budget_ms 86400000"]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_each_invalid_request_with_its_reason() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    let cases = invalid_requests();
    for (name, request, words) in &cases {
        let status = client.best_move(request.clone()).await.expect_err(name);
        assert_eq!(status.code(), Code::InvalidArgument, "{name}: {status:?}");
        for word in words {
            assert!(status.message().contains(word), "{name}: {:?} lacks {word:?}", status.message());
        }
    }
    let refused = server.sample("fogblast_engine_requests_total{outcome=\"invalid_argument\"}").await;
    assert_eq!(refused, cases.len() as f64);
    assert_eq!(server.sample("fogblast_engine_search_seconds_count{level=\"easy\"}").await, 0.0);
    server.shutdown().await.unwrap();
}
