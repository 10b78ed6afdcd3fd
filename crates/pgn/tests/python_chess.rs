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
    // Write from another thread: python-chess answers while it reads, and
    // a full stdout pipe would otherwise block both sides.
    let mut stdin = child.stdin.take().unwrap();
    let input = pgn.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "python-chess failed (pip install chess?): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.lines().map(|line| line.split('\t').map(str::to_owned).collect()).collect()
}

/// The tag value python-chess should read for the roster value `value`.
/// python-chess neither escapes nor unescapes tag values: it returns the
/// PGN standard's `\\` and `\"` escapes as written.
fn roster(value: &str) -> String {
    let value: String = value.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if value.is_empty() {
        "?".to_owned()
    } else {
        value.replace('\\', "\\\\").replace('"', "\\\"")
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

/// Prints random standard, Chess960 and atomic games as python-chess
/// exports them, with clocks, NAGs, comments and side variations; each
/// game's `Uci` and `Clocks` tags say what the reader must find.
const EXPORT_SCRIPT: &str = r#"
import random, chess, chess.pgn, chess.variant
random.seed(7)
for i in range(80):
    cls = chess.variant.AtomicBoard if i % 2 else chess.Board
    board = cls.from_chess960_pos(random.randrange(960)) if i % 3 == 0 else cls()
    game = chess.pgn.Game()
    game.setup(board)
    node, ucis, clocks = game, [], []
    for ply in range(random.randrange(160)):
        if board.is_game_over():
            break
        moves = list(board.legal_moves)
        move = random.choice(moves)
        ucis.append(board.uci(move))
        parent, node = node, node.add_variation(move)
        if len(moves) > 1 and random.random() < 0.1:
            side = parent.add_variation(next(m for m in moves if m != move))
            side.comment = "a side line"
            side.add_variation(list(side.board().legal_moves)[0]) if not side.board().is_game_over() else None
        if random.random() < 0.1:
            node.nags.add(random.choice([1, 2, 3, 4, 5, 6, 14]))
        if random.random() < 0.8:
            ms = random.randrange(0, 4 * 3600 * 1000)
            node.set_clock(ms / 1000)
            clocks.append(str(ms))
        else:
            clocks.append("-")
        board.push(move)
    game.headers["Result"] = board.result(claim_draw=False)
    game.headers["Uci"] = " ".join(ucis)
    game.headers["Clocks"] = " ".join(clocks)
    print(game, end="\n\n")
"#;

#[test]
#[ignore = "needs python3 with python-chess (pip install chess); run with -- --ignored"]
fn reads_what_python_chess_writes() {
    let output = Command::new("python3")
        .args(["-c", EXPORT_SCRIPT])
        .output()
        .expect("python3 runs (this test needs python3 with python-chess: pip install chess)");
    assert!(output.status.success(), "python-chess failed: {}", String::from_utf8_lossy(&output.stderr));
    let pgn = String::from_utf8(output.stdout).unwrap();
    let games = fogblast_pgn::read_games(&pgn).unwrap_or_else(|e| panic!("{e}\n{pgn}"));
    assert_eq!(games.len(), 80);
    let (mut castles, mut chess960) = (0, 0);
    for game in &games {
        let context = format!("{game:?}");
        let expected: Vec<&str> = game.tag("Uci").unwrap().split_whitespace().collect();
        assert_eq!(game.moves.len(), expected.len(), "{context}");
        let mut pos = game.initial;
        for (ours, theirs) in game.moves.iter().zip(&expected) {
            let m = pos.parse_uci(&ours.parse().unwrap()).unwrap();
            assert_eq!(pos.parse_uci(&theirs.parse().unwrap()), Some(m), "{ours} vs {theirs}: {context}");
            castles += usize::from(m.is_castle());
            pos.play_unchecked(m);
        }
        chess960 += usize::from(game.chess960);
        let clocks: Vec<String> =
            game.clocks_ms.iter().map(|clock| clock.map_or_else(|| "-".to_owned(), |ms| ms.to_string())).collect();
        assert_eq!(clocks.join(" "), game.tag("Clocks").unwrap(), "{context}");
        assert_eq!(game.result.as_str(), game.tag("Result").unwrap());
    }
    assert!(castles > 0 && chess960 > 0, "{castles} castles, {chess960} Chess960 games");
}
