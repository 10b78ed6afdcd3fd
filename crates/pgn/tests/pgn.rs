//! PGN as players and other tools see it: the exact text of known games
//! (tags, numbering, clocks, wrapping, each variant's check marks), tag
//! escaping, the PGN features the reader must understand or skip, and a
//! clear error, with game, line and move number, for each way PGN can be
//! wrong.

use fogblast_pgn::{
    read_game, read_games, write_game, GameRecord, GameResult, PgnError, PgnErrorKind, TimeControl, WriteError,
};
use fogblast_rules::{Position, SanError, Variant};

fn ucis(moves: &str) -> Vec<String> {
    moves.split_whitespace().map(str::to_owned).collect()
}

fn scholars_mate() -> GameRecord {
    GameRecord {
        event: "Rated blitz game".into(),
        site: "https://fogblast.example/g/AbCd1234".into(),
        started_at_ms: Some(1_714_566_896_789),
        white: "alice".into(),
        black: "bob".into(),
        result: GameResult::WhiteWins,
        variant: Variant::Standard,
        chess960: false,
        initial_fen: None,
        moves: ucis("e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7"),
        clocks_ms: vec![180_000, 180_000, 178_400, 176_900, 175_050, 170_999, 173_000],
        time_control: Some(TimeControl { initial_s: 180, increment_s: 2 }),
        termination: "Normal".into(),
        white_elo: Some(1500),
        black_elo: Some(1450),
        extra_tags: vec![("WhiteTitle".into(), "FM".into())],
        evals: Vec::new(),
    }
}

const SCHOLARS_MATE: &str = r#"[Event "Rated blitz game"]
[Site "https://fogblast.example/g/AbCd1234"]
[Date "2024.05.01"]
[Round "-"]
[White "alice"]
[Black "bob"]
[Result "1-0"]
[Variant "Standard"]
[TimeControl "180+2"]
[Termination "Normal"]
[UTCDate "2024.05.01"]
[UTCTime "12:34:56"]
[WhiteElo "1500"]
[BlackElo "1450"]
[WhiteTitle "FM"]

1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. Bc4 { [%clk 0:02:58] }
2... Nc6 { [%clk 0:02:56] } 3. Qh5 { [%clk 0:02:55] } 3... Nf6
{ [%clk 0:02:50] } 4. Qxf7# { [%clk 0:02:53] } 1-0
"#;

#[test]
fn writes_a_known_game_exactly() {
    assert_eq!(write_game(&scholars_mate()).unwrap(), SCHOLARS_MATE);
}

#[test]
fn reads_the_known_game_back() {
    let game = read_game(SCHOLARS_MATE).unwrap();
    let record = scholars_mate();
    assert_eq!(game.moves, record.moves);
    assert_eq!(
        game.clocks_ms,
        [180_000, 180_000, 178_000, 176_000, 175_000, 170_000, 173_000].map(Some).to_vec(),
        "clocks come back to the second"
    );
    assert_eq!(game.result, GameResult::WhiteWins);
    assert_eq!(game.variant, Variant::Standard);
    assert!(!game.chess960);
    assert_eq!(game.initial, Position::new(Variant::Standard));
    assert_eq!(game.time_control(), record.time_control);
    assert_eq!(game.started_at_ms(), Some(1_714_566_896_000));
    assert_eq!(game.tag("WhiteTitle"), Some("FM"));
    assert_eq!(game.tags.len(), 15);
}

/// The movetext of `record` as written, without tags.
fn movetext(record: &GameRecord) -> String {
    let pgn = write_game(record).unwrap_or_else(|e| panic!("{e}"));
    pgn.split_once("\n\n").unwrap().1.to_owned()
}

fn tag_lines(record: &GameRecord) -> Vec<String> {
    let pgn = write_game(record).unwrap();
    pgn.split_once("\n\n").unwrap().0.lines().map(str::to_owned).collect()
}

#[test]
fn writes_atomic_explosions_as_mate() {
    let record = GameRecord {
        variant: Variant::Atomic,
        result: GameResult::WhiteWins,
        moves: ucis("g1f3 a7a6 f3e5 a6a5 e5f7"),
        ..GameRecord::default()
    };
    assert_eq!(movetext(&record), "1. Nf3 a6 2. Ne5 a5 3. Nxf7# 1-0\n");
    assert!(tag_lines(&record).contains(&r#"[Variant "Atomic"]"#.to_owned()));
    assert!(!tag_lines(&record).iter().any(|line| line.starts_with("[FEN") || line.starts_with("[SetUp")));
}

#[test]
fn writes_fog_of_war_without_checks() {
    let record = GameRecord {
        variant: Variant::Fog,
        result: GameResult::WhiteWins,
        moves: ucis("e2e4 f7f6 d1h5 a7a6 h5e8"),
        ..GameRecord::default()
    };
    // Qh5 would be check in standard chess; fog of war has none, and
    // taking the king ends the game.
    assert_eq!(movetext(&record), "1. e4 f6 2. Qh5 a6 3. Qxe8# 1-0\n");
    assert!(tag_lines(&record).contains(&r#"[Variant "Fog of War"]"#.to_owned()));
    let game = read_game(&write_game(&record).unwrap()).unwrap();
    assert_eq!(game.variant, Variant::Fog);
    assert_eq!(game.moves, record.moves);
}

#[test]
fn writes_chess960_with_its_start() {
    // Start 0 is BBQNNRKR: the king castles with the h-rook without moving.
    let start = Position::chess960(0, Variant::Standard).unwrap();
    let record = GameRecord {
        variant: Variant::Standard,
        chess960: true,
        initial_fen: Some(start.fen()),
        moves: ucis("f2f4 g7g6 f1f3 e8f6 g1h1"),
        ..GameRecord::default()
    };
    let tags = tag_lines(&record);
    assert!(tags.contains(&r#"[Variant "Chess960"]"#.to_owned()), "{tags:?}");
    assert!(tags.contains(&r#"[FEN "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1"]"#.to_owned()));
    assert!(tags.contains(&r#"[SetUp "1"]"#.to_owned()));
    assert!(movetext(&record).starts_with("1. f4 g6 2. Rf3 Nf6 3. O-O "), "{}", movetext(&record));
    let game = read_game(&write_game(&record).unwrap()).unwrap();
    assert!(game.chess960);
    assert_eq!(game.moves, record.moves);

    // Atomic has no Chess960 name: the FEN tells.
    let atomic = GameRecord {
        variant: Variant::Atomic,
        initial_fen: Some(Position::chess960(0, Variant::Atomic).unwrap().fen()),
        ..record
    };
    let tags = tag_lines(&atomic);
    assert!(tags.contains(&r#"[Variant "Atomic"]"#.to_owned()), "{tags:?}");
    assert!(tags.contains(&r#"[SetUp "1"]"#.to_owned()));
    let game = read_game(&write_game(&atomic).unwrap()).unwrap();
    assert_eq!((game.variant, game.chess960), (Variant::Atomic, true));
    assert_eq!(game.moves, atomic.moves);
}

#[test]
fn numbers_moves_from_the_fen() {
    let record = GameRecord {
        variant: Variant::Standard,
        initial_fen: Some("4k3/P7/8/8/8/8/8/4K3 b - - 3 41".into()),
        moves: ucis("e8d7 a7a8n"),
        clocks_ms: vec![5_000],
        ..GameRecord::default()
    };
    assert_eq!(movetext(&record), "41... Kd7 { [%clk 0:00:05] } 42. a8=N *\n");
    assert!(tag_lines(&record).contains(&r#"[FEN "4k3/P7/8/8/8/8/8/4K3 b - - 3 41"]"#.to_owned()));
}

#[test]
fn wraps_long_games_at_80_columns() {
    // Knights back and forth: many short moves.
    let moves = "g1f3 g8f6 f3g1 f6g8 ".repeat(20);
    let record = GameRecord { variant: Variant::Standard, moves: ucis(&moves), ..GameRecord::default() };
    let text = movetext(&record);
    assert!(text.lines().count() > 5);
    assert!(text.lines().all(|line| line.len() <= 80 && !line.ends_with(' ')), "{text}");
    assert!(text.lines().take(text.lines().count() - 1).all(|line| line.len() > 70), "{text}");
    assert_eq!(read_game(&write_game(&record).unwrap()).unwrap().moves, record.moves);
}

#[test]
fn writes_unknown_values_as_pgn_does() {
    let record = GameRecord { variant: Variant::Standard, ..GameRecord::default() };
    assert_eq!(
        write_game(&record).unwrap(),
        "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"-\"]\n[White \"?\"]\n[Black \"?\"]\n\
         [Result \"*\"]\n[Variant \"Standard\"]\n[TimeControl \"-\"]\n\n*\n"
    );
}

#[test]
fn escapes_tag_values() {
    let record = GameRecord {
        variant: Variant::Standard,
        event: r#"He said "hi" \ bye"#.into(),
        white: "two\nlines".into(),
        black: r#"\""#.into(),
        extra_tags: vec![("Annotator".into(), r#"C:\pgn\"#.into())],
        ..GameRecord::default()
    };
    let tags = tag_lines(&record);
    assert_eq!(tags[0], r#"[Event "He said \"hi\" \\ bye"]"#);
    assert_eq!(tags[4], r#"[White "two lines"]"#);
    assert_eq!(tags[5], r#"[Black "\\\""]"#);
    assert_eq!(tags.last().unwrap(), r#"[Annotator "C:\\pgn\\"]"#);
    let game = read_game(&write_game(&record).unwrap()).unwrap();
    assert_eq!(game.tag("Event"), Some(r#"He said "hi" \ bye"#));
    assert_eq!(game.tag("White"), Some("two lines"));
    assert_eq!(game.tag("Black"), Some(r#"\""#));
    assert_eq!(game.tag("Annotator"), Some(r#"C:\pgn\"#));
}

#[test]
fn refuses_records_it_cannot_write() {
    let base = GameRecord { variant: Variant::Standard, ..GameRecord::default() };
    let err = |record: GameRecord| write_game(&record).unwrap_err();

    let illegal = err(GameRecord { moves: ucis("e2e4 e7e5 e1e3"), ..base.clone() });
    assert!(matches!(&illegal, WriteError::IllegalMove { ply: 3, number, uci, .. } if number == "2." && uci == "e1e3"));
    assert!(illegal.to_string().starts_with("move 2. e1e3 (ply 3) is not legal in rnbqkbnr/"), "{illegal}");

    let syntax = err(GameRecord { moves: ucis("e2e4 e7e9"), ..base.clone() });
    assert!(matches!(&syntax, WriteError::MoveSyntax { ply: 2, number, .. } if number == "1..."), "{syntax}");

    assert_eq!(
        err(GameRecord { moves: ucis("e2e4"), clocks_ms: vec![1, 2], ..base.clone() }),
        WriteError::TooManyClocks { clocks: 2, moves: 1 }
    );
    assert_eq!(
        err(GameRecord { extra_tags: vec![("Bad Name".into(), "x".into())], ..base.clone() }),
        WriteError::InvalidTagName("Bad Name".into())
    );
    assert_eq!(
        err(GameRecord { extra_tags: vec![("FEN".into(), "x".into())], ..base.clone() }),
        WriteError::DuplicateTag("FEN".into())
    );
    assert_eq!(
        err(GameRecord { extra_tags: vec![("A".into(), "x".into()), ("A".into(), "y".into())], ..base.clone() }),
        WriteError::DuplicateTag("A".into())
    );
    assert_eq!(
        err(GameRecord { variant: Variant::Fog, chess960: true, ..base.clone() }),
        WriteError::Chess960Variant(Variant::Fog)
    );
    assert!(matches!(
        err(GameRecord { initial_fen: Some("8/8/8/8/8/8/8/8 w - - 0 1".into()), ..base }),
        WriteError::InitialFen { .. }
    ));
}

/// A lichess-like export with everything the reader must skip or use.
const ANNOTATED: &str = r#"% an escaped line
[Event "Casual"]
[Site "?"]
[Result "1-0"]

; a line comment
{ A game comment [%clk 0:00:01] } 1.e4!? $1 {[%clk 0:10:00]} 1...c5 ( 1... e5 2. Nf3
( 2. f4 exf4 ) Nc6 { in a variation [%clk 1:00:00] } ) 2.Nf3 d6?! { [%eval 0.3] [%clk 0:09:59.5] }
3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5 7. Nb3 Be6 8. f3 Be7 9. Qd2 0-0 10. O-O-O Nbd7 $14 1-0

1. d4 d5 2. c4 e6 *
[Event "No result token"]

1. e4 e5
[Event "Next"]
[FEN "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1"]

1. e8Q Kf6 2. Qe2 1/2-1/2
"#;

#[test]
fn reads_annotated_and_tagless_games() {
    let games = read_games(ANNOTATED).unwrap();
    assert_eq!(games.len(), 4);

    let najdorf = &games[0];
    assert_eq!(
        najdorf.moves,
        ucis(
            "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6 c1e3 e7e5 d4b3 c8e6 f2f3 f8e7 d1d2 e8g8 \
             e1c1 b8d7"
        )
    );
    let mut clocks = vec![None; 20];
    clocks[0] = Some(600_000);
    clocks[3] = Some(599_500);
    assert_eq!(najdorf.clocks_ms, clocks);
    assert_eq!(najdorf.result, GameResult::WhiteWins);

    let tagless = &games[1];
    assert!(tagless.tags.is_empty());
    assert_eq!(tagless.moves, ucis("d2d4 d7d5 c2c4 e7e6"));
    assert_eq!(tagless.result, GameResult::Unknown);

    let unfinished = &games[2];
    assert_eq!(unfinished.tag("Event"), Some("No result token"));
    assert_eq!(unfinished.moves, ucis("e2e4 e7e5"));
    assert_eq!(unfinished.result, GameResult::Unknown);

    let promotion = &games[3];
    assert_eq!(promotion.moves, ucis("e7e8q g7f6 e8e2"));
    assert_eq!(promotion.result, GameResult::Draw);
}

#[test]
fn reads_en_passant_and_both_castling_spellings() {
    let game = read_game("1. e4 a6 2. e5 d5 3. exd6 Nf6 4. Nf3 g6 5. Bd3 Bg7 6. 0-0 O-O *").unwrap();
    assert_eq!(game.moves, ucis("e2e4 a7a6 e4e5 d7d5 e5d6 g8f6 g1f3 g7g6 f1d3 f8g7 e1g1 e8g8"));
}

#[test]
fn reads_empty_input_as_no_games() {
    assert_eq!(read_games("").unwrap(), []);
    assert_eq!(read_games(" \n; nothing\n{ just a comment }\n").unwrap(), []);
    assert_eq!(read_game("\n").unwrap_err().kind, PgnErrorKind::NoGame);
}

/// The error reading `text` gives, after checking where it points.
fn error(text: &str, game: usize, line: usize) -> PgnErrorKind {
    let err: PgnError = read_games(text).expect_err(text);
    assert_eq!((err.game, err.line), (game, line), "{text:?}: {err}");
    err.kind
}

#[test]
fn names_the_move_of_illegal_and_ambiguous_san() {
    let illegal = read_games("[Event \"x\"]\n\n1. e4 e5\n2. Ke3 *\n").unwrap_err();
    assert_eq!((illegal.game, illegal.line), (1, 4));
    assert!(
        matches!(&illegal.kind, PgnErrorKind::Move { number, san, error: SanError::Illegal { .. } }
            if number == "2." && san == "Ke3"),
        "{illegal}"
    );
    assert!(illegal.to_string().starts_with("PGN game 1, line 4: move 2. Ke3: illegal move \"Ke3\""), "{illegal}");

    let ambiguous = "[FEN \"4k3/8/8/8/8/8/8/1N2KN2 b - - 0 7\"]\n\n7... Kd8 8. Nd2 *";
    let kind = error(ambiguous, 1, 3);
    assert!(
        matches!(&kind, PgnErrorKind::Move { number, san, error: SanError::Ambiguous { .. } }
            if number == "8." && san == "Nd2"),
        "{kind}"
    );

    let kind = error("1. e4 *\n\n1. e4 e5 2. Nf9 *", 2, 3);
    assert!(matches!(&kind, PgnErrorKind::Move { error: SanError::Syntax(_), .. }), "{kind}");

    // Atomic rules: the knight that took on d5 exploded with the pawn.
    assert!(read_game("1. Nc3 d5 2. Nxd5 Nc6 3. Ne3 *").is_ok());
    let kind = error("[Variant \"Atomic\"]\n\n1. Nc3 d5 2. Nxd5 Nc6 3. Ne3 *", 1, 3);
    assert!(matches!(&kind, PgnErrorKind::Move { number, .. } if number == "3."), "{kind}");
}

#[test]
fn names_each_kind_of_malformed_pgn() {
    assert_eq!(error("1. e4 { never closed", 1, 1), PgnErrorKind::UnterminatedComment);
    assert_eq!(error("1. e4 (1. d4 d5\n", 1, 2), PgnErrorKind::UnclosedVariation);
    assert_eq!(error("1. e4 (1. d4 1-0) *", 1, 1), PgnErrorKind::UnclosedVariation);
    assert_eq!(error("1. e4 ) *", 1, 1), PgnErrorKind::UnexpectedChar(')'));
    assert_eq!(error("1. e4 <> *", 1, 1), PgnErrorKind::UnexpectedChar('<'));
    assert_eq!(error("1. e4 € *", 1, 1), PgnErrorKind::UnexpectedChar('€'));
    assert_eq!(error("1. e4 $ *", 1, 1), PgnErrorKind::MalformedNag);
    assert!(matches!(error("[Event x]\n", 1, 1), PgnErrorKind::MalformedTag(_)));
    assert!(matches!(error("[Event \"x\"\n1. e4 *", 1, 1), PgnErrorKind::MalformedTag(_)));
    assert!(matches!(error("[Event \"x]\n1. e4 *", 1, 1), PgnErrorKind::MalformedTag(_)));
    assert!(matches!(error("[\"x\"]", 1, 1), PgnErrorKind::MalformedTag(_)));
    assert_eq!(error("[A \"1\"]\n[A \"2\"]\n*", 1, 2), PgnErrorKind::DuplicateTag("A".into()));
    assert_eq!(error("*\n\n[Variant \"Crazyhouse\"]\n*", 2, 3), PgnErrorKind::UnsupportedVariant("Crazyhouse".into()));
    assert!(matches!(error("[FEN \"8/8/8/8 w - -\"]\n*", 1, 1), PgnErrorKind::Fen { .. }));
    assert_eq!(error("[Result \"2-0\"]\n*", 1, 1), PgnErrorKind::ResultTag("2-0".into()));
    assert_eq!(
        error("[Result \"1-0\"]\n\n1. e4 0-1", 1, 1),
        PgnErrorKind::ResultMismatch { tag: GameResult::WhiteWins, movetext: GameResult::BlackWins }
    );
    assert_eq!(error("1. e4 { [%clk 9:58] } *", 1, 1), PgnErrorKind::Clock("9:58".into()));
    let message = read_games("\n\n1. e4 { [%clk soon] } *").unwrap_err().to_string();
    assert_eq!(message, "PGN game 1, line 3: clock comment [%clk soon]: expected H:MM:SS");
}

#[test]
fn reads_the_variant_names_of_other_tools() {
    for (name, variant, chess960) in [
        ("Standard", Variant::Standard, false),
        ("From Position", Variant::Standard, false),
        ("Chess960", Variant::Standard, true),
        ("fischerandom", Variant::Standard, true),
        ("Atomic", Variant::Atomic, false),
        ("Fog of War", Variant::Fog, false),
        ("fog", Variant::Fog, false),
    ] {
        let game = read_game(&format!("[Variant \"{name}\"]\n\n1. e4 *")).unwrap();
        assert_eq!((game.variant, game.chess960), (variant, chess960), "{name}");
    }
}
