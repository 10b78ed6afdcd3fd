//! python-chess as an outside judge of the PGN we write: it must read
//! every standard, Chess960 and atomic game without errors, with the same
//! mainline, start, clocks and tags. (It has no fog of war.)
//!
//! Needs `python3` with python-chess (`pip install chess`), which CI may
//! lack, so the test is ignored by default. Run it with
//! `cargo test -p fogblast-pgn --test python_chess -- --ignored`.

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};

use common::{random_game, Coverage, RandomGame};
use fogblast_pgn::{write_games, GameRecord, GameResult, TimeControl};
use fogblast_rules::{Position, Variant};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Reads PGN from stdin; prints one tab-separated line per game: its
/// errors, variant, Chess960 flag, start FEN, mainline in UCI, clocks in
/// ms (`-` for none), and the Result, Event and White tags.
const SCRIPT: &str = r#"
import sys, chess, chess.pgn, chess.variant
while True:
    game = chess.pgn.read_game(sys.stdin)
    if game is None:
        break
    board = game.board()
    start = board.fen()
    moves, clocks = [], []
    for node in game.mainline():
        moves.append(board.uci(node.move))
        board.push(node.move)
        clock = node.clock()
        clocks.append("-" if clock is None else str(round(clock * 1000)))
    errors = "; ".join(str(e) for e in game.errors)
    print("\t".join([errors, board.uci_variant, str(board.chess960), start, " ".join(moves), " ".join(clocks),
                     game.headers.get("Result", "?"), game.headers.get("Event", "?"), game.headers.get("White", "?")]))
"#;

/// What python-chess made of each game in `pgn`.
fn python_chess(pgn: &str) -> Vec<Vec<String>> {
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (this test needs python3 with python-chess: pip install chess)");
    child.stdin.take().unwrap().write_all(pgn.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "python-chess failed (pip install chess?): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.lines().map(|line| line.split('\t').map(str::to_owned).collect()).collect()
}

/// The tag value python-chess should read for `value`.
fn roster(value: &str) -> String {
    let value: String = value.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if value.is_empty() {
        "?".to_owned()
    } else {
        value
    }
}

#[test]
#[ignore = "needs python3 with python-chess (pip install chess); run with -- --ignored"]
fn python_chess_reads_standard_and_atomic_games() {
    let mut rng = StdRng::seed_from_u64(42);
    let mut coverage = Coverage::default();
    let mut games: Vec<RandomGame> = Vec::new();
    for i in 0..160 {
        let variant = if i % 2 == 0 { Variant::Standard } else { Variant::Atomic };
        games.push(random_game(&mut rng, variant, false, &mut coverage));
    }
    assert!(coverage.chess960_castles > 0 && coverage.promotions > 0 && coverage.en_passant > 0, "{coverage:?}");
    // And a known game with clocks.
    let start = Position::new(Variant::Standard);
    let moves = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"];
    let mut pos = start;
    let known_moves = moves
        .iter()
        .map(|uci| {
            let m = pos.parse_uci(&uci.parse().unwrap()).unwrap();
            pos.play_unchecked(m);
            m
        })
        .collect();
    games.push(RandomGame {
        record: GameRecord {
            event: "Rated blitz game".into(),
            white: "alice".into(),
            black: "bob".into(),
            started_at_ms: Some(1_714_566_896_789),
            result: GameResult::WhiteWins,
            variant: Variant::Standard,
            moves: moves.map(String::from).to_vec(),
            clocks_ms: vec![180_000, 180_000, 178_400, 176_900, 175_050, 170_999, 173_000],
            time_control: Some(TimeControl { initial_s: 180, increment_s: 2 }),
            ..GameRecord::default()
        },
        start,
        moves: known_moves,
    });

    let pgn = write_games(games.iter().map(|game| &game.record)).unwrap();
    let read = python_chess(&pgn);
    assert_eq!(read.len(), games.len(), "python-chess read {} games of {}", read.len(), games.len());
    for (game, fields) in games.iter().zip(&read) {
        let record = &game.record;
        let context = format!("{fields:?}\n{}", fogblast_pgn::write_game(record).unwrap());
        let [errors, variant, chess960, start, moves, clocks, result, event, white] = &fields[..] else {
            panic!("unexpected output: {context}");
        };
        assert_eq!(errors, "", "{context}");
        let expected_variant = if record.variant == Variant::Atomic { "atomic" } else { "chess" };
        assert_eq!(variant, expected_variant, "{context}");
        if record.variant == Variant::Standard {
            assert_eq!(chess960 == "True", record.chess960, "{context}");
        }
        assert_eq!(Position::from_fen(start, record.variant).unwrap(), game.start, "{context}");

        // The same moves, whichever castling form python-chess prints.
        let mut pos = game.start;
        let python_moves: Vec<&str> = moves.split_whitespace().collect();
        assert_eq!(python_moves.len(), game.moves.len(), "{context}");
        for (uci, &m) in python_moves.iter().zip(&game.moves) {
            assert_eq!(pos.parse_uci(&uci.parse().unwrap()), Some(m), "{uci}: {context}");
            pos.play_unchecked(m);
        }

        let expected_clocks: Vec<String> = (0..game.moves.len())
            .map(|i| record.clocks_ms.get(i).map_or_else(|| "-".to_owned(), |ms| (ms / 1000 * 1000).to_string()))
            .collect();
        assert_eq!(clocks.split_whitespace().collect::<Vec<_>>(), expected_clocks, "{context}");
        assert_eq!(result, record.result.as_str(), "{context}");
        assert_eq!(event, &roster(&record.event), "{context}");
        assert_eq!(white, &roster(&record.white), "{context}");
    }
}
