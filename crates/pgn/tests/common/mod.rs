//! Random legal games for the PGN tests: seeded playouts with
//! `fogblast-rules` in every variant, from standard, Chess960 and mid-game
//! starts, biased towards the moves PGN finds hardest to write
//! (promotions, castling, en passant), with random clocks and tags.

#![allow(dead_code)]

use fogblast_pgn::{GameRecord, GameResult, TimeControl};
use fogblast_rules::{CastlingMode, Fen, Move, Position, Variant};
use rand::rngs::StdRng;
use rand::Rng;

/// Names with the characters tag values must escape or replace.
pub const NAMES: [&str; 8] =
    ["alice", "Bob \"the Rook\" Smith", r"C:\chess\", "Zoë Ω", "", "line\nbreak", "tab\there", "[brackets]"];

/// A random game and what it was generated from.
#[derive(Debug)]
pub struct RandomGame {
    pub record: GameRecord,
    /// The position the moves start from.
    pub start: Position,
    pub moves: Vec<Move>,
}

/// What the random games covered, so the tests can insist on each kind.
#[derive(Debug, Default)]
pub struct Coverage {
    pub promotions: usize,
    pub castles: usize,
    pub chess960_castles: usize,
    pub en_passant: usize,
    pub black_starts: usize,
    pub clocks: usize,
    pub finished: usize,
}

fn pick<T: Copy>(rng: &mut StdRng, items: &[T]) -> T {
    items[rng.random_range(0..items.len())]
}

/// Plays up to `max_plies` random legal moves from `start`, choosing a
/// promotion, castling or en passant move most of the time one is there.
pub fn playout(rng: &mut StdRng, start: Position, max_plies: usize) -> Vec<Move> {
    let mut pos = start;
    let mut moves = Vec::new();
    while moves.len() < max_plies && pos.outcome().is_none() {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let special: Vec<Move> =
            legal.iter().copied().filter(|m| m.promotion().is_some() || m.is_castle() || m.is_en_passant()).collect();
        let m = if !special.is_empty() && rng.random_bool(0.7) { pick(rng, &special) } else { pick(rng, &legal[..]) };
        pos.play_unchecked(m);
        moves.push(m);
    }
    moves
}

/// A random finished-or-not game of `variant`, its record filled with
/// random tags and clocks. `plain_tags` keeps names printable ASCII
/// without quotes (for tools with their own ideas about escaping).
pub fn random_game(rng: &mut StdRng, variant: Variant, plain_tags: bool, coverage: &mut Coverage) -> RandomGame {
    let chess960 = variant.allows_chess960() && rng.random_bool(0.4);
    let mut start = if chess960 {
        Position::chess960(rng.random_range(0..960), variant).expect("0..960 are Chess960 starts")
    } else {
        Position::new(variant)
    };
    // Sometimes start mid-game, which may leave black to move.
    if rng.random_bool(0.2) {
        let plies = rng.random_range(1..8);
        for m in playout(rng, start, plies) {
            start.play_unchecked(m);
        }
    }
    if start.turn() == fogblast_rules::Color::Black {
        coverage.black_starts += 1;
    }
    let max_plies = pick(rng, &[0, 1, 2, 10, 40, 120, 300]);
    let moves = playout(rng, start, max_plies);

    let mut end = start;
    for &m in &moves {
        coverage.promotions += usize::from(m.promotion().is_some());
        coverage.castles += usize::from(m.is_castle());
        coverage.en_passant += usize::from(m.is_en_passant());
        if m.is_castle() && chess960 {
            coverage.chess960_castles += 1;
        }
        end.play_unchecked(m);
    }
    let result = match end.outcome() {
        Some(outcome) => {
            coverage.finished += 1;
            GameResult::from(outcome)
        }
        None => pick(rng, &[GameResult::WhiteWins, GameResult::BlackWins, GameResult::Draw, GameResult::Unknown]),
    };
    let initial_fen = if chess960 || start != Position::new(variant) || rng.random_bool(0.2) {
        let fen = Fen::from_position(&start);
        Some(if rng.random_bool(0.5) { fen.to_string() } else { fen.to_shredder_string() })
    } else {
        None
    };
    let mode = if rng.random_bool(0.5) { CastlingMode::Standard } else { CastlingMode::Chess960 };
    let clocks_ms: Vec<u64> = match rng.random_range(0..3) {
        0 => Vec::new(),
        1 => moves.iter().map(|_| random_clock(rng)).collect(),
        _ => (0..rng.random_range(0..=moves.len())).map(|_| random_clock(rng)).collect(),
    };
    coverage.clocks += clocks_ms.len();
    let name = |rng: &mut StdRng| {
        if plain_tags {
            pick(rng, &["alice", "bob", "Carol Danvers", "x_1"]).to_owned()
        } else {
            pick(rng, &NAMES).to_owned()
        }
    };
    let mut extra_tags = Vec::new();
    if rng.random_bool(0.3) {
        extra_tags.push(("WhiteTitle".to_owned(), "GM".to_owned()));
        extra_tags.push(("Annotator".to_owned(), name(rng)));
    }
    let record = GameRecord {
        event: name(rng),
        site: name(rng),
        started_at_ms: rng.random_bool(0.8).then(|| rng.random_range(0..4_102_444_800_000)),
        white: name(rng),
        black: name(rng),
        result,
        variant,
        chess960,
        initial_fen,
        moves: moves.iter().map(|m| m.to_uci(mode).to_string()).collect(),
        clocks_ms,
        evals: Vec::new(),
        time_control: rng
            .random_bool(0.7)
            .then(|| TimeControl { initial_s: rng.random_range(0..10_800), increment_s: rng.random_range(0..60) }),
        termination: pick(rng, &["", "Normal", "Time forfeit", "Abandoned"]).to_owned(),
        white_elo: rng.random_bool(0.5).then(|| rng.random_range(600..3000)),
        black_elo: rng.random_bool(0.5).then(|| rng.random_range(600..3000)),
        extra_tags,
    };
    RandomGame { record, start, moves }
}

fn random_clock(rng: &mut StdRng) -> u64 {
    if rng.random_bool(0.05) {
        rng.random_range(36_000_000..400_000_000)
    } else {
        rng.random_range(0..3 * 3_600_000)
    }
}
