//! The search finds forced wins, respects its limits, and repeats itself
//! exactly for the same seed.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use fogblast_engine::{Clock, Level, Limits, SearchReport, Searcher, MATE};
use fogblast_rules::{CastlingMode, Position, Variant};

fn search(fen: &str, variant: Variant, limits: &Limits) -> (Position, SearchReport) {
    let pos = Position::from_fen(fen, variant).unwrap();
    let report = Searcher::new(4).search(&pos, &[], limits, &AtomicBool::new(false), &mut |_| {});
    (pos, report)
}

fn uci(report: &SearchReport) -> String {
    report.best.expect("a best move").to_uci(CastlingMode::Standard).to_string()
}

fn depth(d: u32) -> Limits {
    Limits { depth: Some(d), ..Limits::default() }
}

#[test]
fn explodes_the_king_when_it_can() {
    // Nxf7 or Nxd7 take a pawn beside the black king: the blast removes it.
    let (pos, report) =
        search("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Variant::Atomic, &depth(4));
    assert!(["e5f7", "e5d7"].contains(&uci(&report).as_str()), "{}", uci(&report));
    assert_eq!(report.mate_in_plies(), Some(1));
    assert_eq!(report.score, MATE - 1);
    let (after, _) = pos.play(report.best.unwrap()).unwrap();
    assert_eq!(after.board().king_of(fogblast_rules::Color::Black), None);
}

#[test]
fn sees_a_threatened_explosion_and_defends() {
    // White threatens Qxf7, whose blast takes the king on e8.
    let fen = "rnbqkbnr/pppppppp/8/7Q/8/4P3/PPPP1PPP/RNB1KBNR b KQkq - 1 2";
    let (pos, report) = search(fen, Variant::Atomic, &depth(5));
    // The threat is real: a careless move loses the king at once.
    let careless = pos.play(pos.parse_uci(&"a7a6".parse().unwrap()).unwrap()).unwrap().0;
    let (_, punished) = search(&careless.fen(), Variant::Atomic, &depth(3));
    assert_eq!(uci(&punished), "h5f7");
    assert_eq!(punished.mate_in_plies(), Some(1));
    // The engine's move meets it.
    let (after, _) = pos.play(report.best.unwrap()).unwrap();
    let (_, reply) = search(&after.fen(), Variant::Atomic, &depth(3));
    assert!(reply.mate_in_plies().is_none_or(|n| n > 1), "{} allows an explosion", uci(&report));
}

#[test]
fn finds_standard_mate_in_two() {
    // 1. Re8+ Rxe8 2. Rxe8# (python-chess confirms no mate in one).
    let (pos, report) = search("1r4k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1", Variant::Standard, &depth(5));
    assert_eq!(uci(&report), "e2e8");
    assert_eq!(report.mate_in_plies(), Some(3));
    // The reported line really mates.
    let end = report.pv.iter().fold(pos, |p, &m| p.play(m).unwrap().0);
    assert_eq!(report.pv.len(), 3);
    assert!(end.outcome().is_some_and(|o| o.winner() == Some(fogblast_rules::Color::White)));
}

#[test]
fn reports_no_move_when_there_is_none() {
    // Stalemate.
    let (_, report) = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Variant::Standard, &depth(3));
    assert_eq!(report.best, None);
}

#[test]
fn same_seed_same_game() {
    let fen = "rn1qkb1r/p5pp/2p5/3p4/N3P3/5P2/PPP4P/R1BQK3 w Qkq - 0 1";
    for level in [Level::Easy, Level::Medium] {
        let mut limits = level.limits(None, None, 42);
        limits.movetime = None; // only the node and depth caps: fully repeatable
        let (_, a) = search(fen, Variant::Atomic, &limits);
        let (_, b) = search(fen, Variant::Atomic, &limits);
        assert_eq!((a.best, a.nodes, a.score), (b.best, b.nodes, b.score), "{level}");
    }
}

#[test]
fn respects_node_and_depth_caps() {
    let limits = Limits { nodes: Some(5_000), ..Limits::default() };
    let (_, report) = search(fogblast_rules::STARTING_FEN, Variant::Atomic, &limits);
    assert!(report.nodes <= 5_001, "{} nodes", report.nodes);
    assert!(report.best.is_some());
    let (_, report) = search(fogblast_rules::STARTING_FEN, Variant::Standard, &depth(3));
    assert_eq!(report.depth, 3);
}

#[test]
fn stops_near_the_deadline() {
    let limits = Limits { movetime: Some(Duration::from_millis(100)), ..Limits::default() };
    let started = Instant::now();
    let (_, report) = search(fogblast_rules::STARTING_FEN, Variant::Standard, &limits);
    assert!(report.best.is_some());
    // Generous: the check runs every 1024 nodes.
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[test]
fn a_raised_stop_flag_ends_the_search() {
    let pos = Position::new(Variant::Atomic);
    let stop = AtomicBool::new(true);
    let report = Searcher::new(1).search(&pos, &[], &Limits::default(), &stop, &mut |_| {});
    assert!(report.best.is_some_and(|m| pos.is_legal(m)));
    assert!(report.depth <= 1);
}

#[test]
fn clock_budget_is_a_small_share_of_the_clock() {
    let clock = Clock { remaining: Duration::from_secs(3), increment: Duration::ZERO, moves_to_go: None };
    let limits = Limits { clock: Some(clock), ..Limits::default() };
    let started = Instant::now();
    let (_, report) = search(fogblast_rules::STARTING_FEN, Variant::Atomic, &limits);
    assert!(report.best.is_some());
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?} of a 3 s clock", started.elapsed());
}

#[test]
fn repetition_counts_as_a_draw() {
    // A rook down, white may step back into a position the game has seen:
    // the search takes the draw.
    let fen = "6k1/8/8/8/8/8/r7/6K1 w - - 10 40";
    let pos = Position::from_fen(fen, Variant::Standard).unwrap();
    let seen = pos.play(pos.parse_uci(&"g1h1".parse().unwrap()).unwrap()).unwrap().0;
    let history = [pos.zobrist_hash(), seen.zobrist_hash()];
    let report = Searcher::new(1).search(&pos, &history, &depth(4), &AtomicBool::new(false), &mut |_| {});
    assert_eq!(uci(&report), "g1h1");
    assert_eq!(report.score, 0);
    // Without that history the same move is just a rook down.
    let report = Searcher::new(1).search(&pos, &[], &depth(4), &AtomicBool::new(false), &mut |_| {});
    assert!(report.score < -300, "{}", report.score);
}
