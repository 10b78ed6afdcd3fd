//! Round trips: random legal games of every variant, from standard,
//! Chess960 and mid-game starts, written as PGN and read back, return the
//! same start, moves, clocks (to the second), result and tags; and writing
//! what was read gives the very same text again.

mod common;

use common::{random_game, Coverage, RandomGame};
use fogblast_pgn::{read_game, read_games, write_game, write_games, GameRecord, PgnGame};
use fogblast_rules::{CastlingMode, Variant};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// The tags the writer writes itself; the rest are a record's extra tags.
const OWN_TAGS: [&str; 16] = [
    "Event",
    "Site",
    "Date",
    "Round",
    "White",
    "Black",
    "Result",
    "Variant",
    "TimeControl",
    "Termination",
    "UTCDate",
    "UTCTime",
    "WhiteElo",
    "BlackElo",
    "FEN",
    "SetUp",
];

/// A tag value as it reads back: control characters become spaces.
fn read_back(value: &str) -> String {
    value.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A roster tag as it reads back: an empty one says `?`.
fn roster_read_back(value: &str) -> String {
    let value = read_back(value);
    if value.is_empty() {
        "?".to_owned()
    } else {
        value
    }
}

/// The record a reader of `game` would make: writing it must give the
/// text `game` was read from.
fn record_of(game: &PgnGame, chess960: bool) -> GameRecord {
    let tag = |name: &str| game.tag(name).unwrap_or_else(|| panic!("no {name} tag")).to_owned();
    GameRecord {
        event: tag("Event"),
        site: tag("Site"),
        started_at_ms: game.started_at_ms(),
        white: tag("White"),
        black: tag("Black"),
        result: game.result,
        variant: game.variant,
        chess960,
        initial_fen: game.tag("FEN").map(str::to_owned),
        moves: game.moves.clone(),
        clocks_ms: game.clocks_ms.iter().map_while(|clock| *clock).collect(),
        evals: Vec::new(),
        time_control: game.time_control(),
        termination: game.tag("Termination").unwrap_or_default().to_owned(),
        white_elo: game.tag("WhiteElo").map(|elo| elo.parse().unwrap()),
        black_elo: game.tag("BlackElo").map(|elo| elo.parse().unwrap()),
        extra_tags: game.tags.iter().filter(|(name, _)| !OWN_TAGS.contains(&name.as_str())).cloned().collect(),
    }
}

/// Checks that `read` is what `game` was written as.
fn check_read_back(game: &RandomGame, pgn: &str, read: &PgnGame) {
    let record = &game.record;
    let context = || format!("\n{pgn}");
    assert_eq!(read.variant, record.variant, "{}", context());
    // Standard Chess960 says so in its Variant tag; atomic from a Chess960
    // start only where its castling rights show it.
    if record.variant == Variant::Standard || !record.chess960 {
        assert_eq!(read.chess960, record.chess960, "{}", context());
    }
    assert_eq!(read.initial, game.start, "{}", context());

    let mode = if read.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let moves: Vec<String> = game.moves.iter().map(|m| m.to_uci(mode).to_string()).collect();
    assert_eq!(read.moves, moves, "{}", context());
    let clocks: Vec<Option<u64>> =
        (0..moves.len()).map(|i| record.clocks_ms.get(i).map(|ms| ms / 1000 * 1000)).collect();
    assert_eq!(read.clocks_ms, clocks, "{}", context());
    assert_eq!(read.result, record.result, "{}", context());

    assert_eq!(read.tag("Event"), Some(roster_read_back(&record.event).as_str()));
    assert_eq!(read.tag("Site"), Some(roster_read_back(&record.site).as_str()));
    assert_eq!(read.tag("Round"), Some("-"));
    assert_eq!(read.tag("White"), Some(roster_read_back(&record.white).as_str()));
    assert_eq!(read.tag("Black"), Some(roster_read_back(&record.black).as_str()));
    assert_eq!(read.tag("Result"), Some(record.result.as_str()));
    assert_eq!(read.started_at_ms(), record.started_at_ms.map(|ms| ms / 1000 * 1000));
    assert_eq!(read.time_control(), record.time_control);
    assert_eq!(read.tag("TimeControl").is_some_and(|tc| tc == "-"), record.time_control.is_none());
    assert_eq!(read.tag("WhiteElo"), record.white_elo.map(|elo| elo.to_string()).as_deref());
    assert_eq!(read.tag("BlackElo"), record.black_elo.map(|elo| elo.to_string()).as_deref());
    assert_eq!(read.tag("Termination").unwrap_or_default(), record.termination);
    assert_eq!(read.tag("SetUp").is_some(), read.tag("FEN").is_some());
    for (name, value) in &record.extra_tags {
        assert_eq!(read.tag(name), Some(read_back(value).as_str()));
    }

    let again = write_game(&record_of(read, record.chess960)).unwrap();
    assert_eq!(again, pgn, "writing what was read changed the text");
}

fn check_movetext_width(pgn: &str) {
    let (_, movetext) = pgn.split_once("\n\n").expect("a blank line after the tags");
    for line in movetext.lines() {
        assert!(line.chars().count() <= 80, "{} columns: {line:?}", line.chars().count());
    }
}

#[test]
fn random_games_round_trip_in_every_variant() {
    let mut rng = StdRng::seed_from_u64(2024);
    for variant in Variant::ALL {
        let mut coverage = Coverage::default();
        let mut plies = 0;
        for _ in 0..150 {
            let game = random_game(&mut rng, variant, false, &mut coverage);
            let pgn = write_game(&game.record).unwrap_or_else(|e| panic!("{e}: {:?}", game.record));
            check_movetext_width(&pgn);
            let read = read_game(&pgn).unwrap_or_else(|e| panic!("{e}\n{pgn}"));
            check_read_back(&game, &pgn, &read);
            plies += game.moves.len();
        }
        eprintln!("{variant}: {plies} plies, {coverage:?}");
        assert!(plies > 5000, "{variant}: only {plies} plies");
        assert!(coverage.promotions > 0, "{variant}: {coverage:?}");
        assert!(coverage.castles > 0, "{variant}: {coverage:?}");
        assert!(coverage.en_passant > 0, "{variant}: {coverage:?}");
        assert!(coverage.black_starts > 0, "{variant}: {coverage:?}");
        assert!(coverage.clocks > 0, "{variant}: {coverage:?}");
        assert!(coverage.finished > 0, "{variant}: {coverage:?}");
        if variant.allows_chess960() {
            assert!(coverage.chess960_castles > 0, "{variant}: {coverage:?}");
        }
    }
}

#[test]
fn many_games_in_one_file_read_back_in_order() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut coverage = Coverage::default();
    let games: Vec<RandomGame> =
        (0..30).map(|i| random_game(&mut rng, Variant::ALL[i % 3], false, &mut coverage)).collect();
    let text = write_games(games.iter().map(|game| &game.record)).unwrap();
    let read = read_games(&text).unwrap();
    assert_eq!(read.len(), games.len());
    for (game, read) in games.iter().zip(&read) {
        check_read_back(game, &write_game(&game.record).unwrap(), read);
    }
}
