//! Puzzles for Fogblast's two variants, and the checks that make each one
//! fair: one solution and no other.
//!
//! * **Atomic** puzzles are positions cut from games where the side to move
//!   has a single winning line: blow up the king, win decisive material, or
//!   hold with the one defence (often connecting the kings). [`atomic`]
//!   checks with the engine that every move of the solver is the only good
//!   one at the check depth and that every reply is the engine's best.
//! * **Fog** puzzles show only what the solver sees ([`view`]). [`fog`]
//!   scores every move against the worst the fog could hide, so the
//!   solution is the move that wins (or is safe) whatever stands on the
//!   fogged squares, and every other move does clearly worse; then, against
//!   the game it came from, it must be the engine's clear best in every
//!   position the fog engine's belief allows ([`fog::verify_in_game`]).
//! * [`selfplay`] plays the seeded games puzzles are cut from.
//!
//! [`Puzzle::check_attempt`] is what a server needs to judge an answer.
//! The starter set ([`starter_set`]) was made by `fogblast-tools puzzles`.

pub mod atomic;
pub mod fog;
pub mod selfplay;
pub mod view;

use fogblast_rules::{CastlingMode, Color, Move, Position, Uci, Variant};
use serde::{Deserialize, Serialize};

/// One puzzle as stored and served.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Puzzle {
    /// Eight lowercase letters and digits, from the position and solution.
    pub id: String,
    /// `atomic` or `fog` ([`Variant::name`]).
    pub variant: String,
    /// Atomic: the position's FEN. Fog: the solver's view, a FEN with `*`
    /// on fogged squares and no halfmove field ([`view::parse_view`]).
    pub fen: String,
    /// The line in UCI, the solver's moves at even indices and the
    /// opponent's replies at odd ones; it ends with a solver move. A fog
    /// puzzle is one move: the replies would be hidden.
    pub solution: Vec<String>,
    pub themes: Vec<String>,
    /// The starting difficulty, on the Glicko scale players are rated on.
    pub rating: f64,
    /// Where the position comes from, e.g. `selfplay 7 ply 31`.
    pub source: String,
}

/// Why a puzzle, or an answer to it, is not usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PuzzleError {
    #[error("unknown puzzle variant `{0}`: puzzles are atomic or fog")]
    Variant(String),
    #[error("bad puzzle position: {0}")]
    Position(String),
    #[error("the attempt has no moves")]
    NoMoves,
    #[error("move {ply} `{text}` is not a legal move there: the answer is for another position")]
    IllegalMove { ply: usize, text: String },
    #[error("move {ply} `{text}` is not the puzzle's reply `{expected}`: the answer is for another line")]
    WrongReply { ply: usize, text: String, expected: String },
    #[error("the attempt goes on after the puzzle was decided at move {ply}")]
    TooLong { ply: usize },
    #[error("the attempt stops at move {ply}, before the puzzle is solved or failed")]
    Unfinished { ply: usize },
}

/// The verdict on a complete attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempt {
    Solved,
    /// The solver's move at this index (into the attempt) was wrong.
    Failed {
        ply: usize,
    },
}

impl Puzzle {
    /// The puzzle's variant; only atomic and fog puzzles exist.
    pub fn variant(&self) -> Result<Variant, PuzzleError> {
        match Variant::from_name(&self.variant) {
            Some(v @ (Variant::Atomic | Variant::Fog)) => Ok(v),
            _ => Err(PuzzleError::Variant(self.variant.clone())),
        }
    }

    /// The position the solver plays from. For a fog puzzle it holds only
    /// what the solver sees (the fogged squares empty).
    pub fn position(&self) -> Result<Position, PuzzleError> {
        match self.variant()? {
            Variant::Fog => view::parse_view(&self.fen).map(|view| view.position),
            variant => Position::from_fen(&self.fen, variant).map_err(|error| PuzzleError::Position(error.to_string())),
        }
    }

    /// The solver's colour.
    pub fn solver(&self) -> Result<Color, PuzzleError> {
        Ok(self.position()?.turn())
    }

    /// Judges `moves`, an attempt played from the start: the solver's moves
    /// and the puzzle's replies in turn, ending at the solution's end or at
    /// the solver's first wrong move. In atomic chess any move that wins at
    /// once (the enemy king blown up, or mate) also solves the puzzle.
    pub fn check_attempt(&self, moves: &[String]) -> Result<Attempt, PuzzleError> {
        if moves.is_empty() {
            return Err(PuzzleError::NoMoves);
        }
        let fog = self.variant()? == Variant::Fog;
        let mut pos = self.position()?;
        let visible = if fog { Some(view::parse_view(&self.fen)?.visible) } else { None };
        for (ply, text) in moves.iter().enumerate() {
            let m = parse_move(&pos, text, visible.filter(|_| ply == 0))
                .ok_or_else(|| PuzzleError::IllegalMove { ply, text: text.clone() })?;
            let expected = self.solution.get(ply).ok_or(PuzzleError::TooLong { ply: ply.saturating_sub(1) })?;
            let last = ply + 1 == moves.len();
            if ply % 2 == 1 {
                if text != expected {
                    return Err(PuzzleError::WrongReply { ply, text: text.clone(), expected: expected.clone() });
                }
            } else if text != expected {
                let won = !fog && wins_at_once(&pos, m);
                return match (last, won) {
                    (false, _) => Err(PuzzleError::TooLong { ply }),
                    (true, true) => Ok(Attempt::Solved),
                    (true, false) => Ok(Attempt::Failed { ply }),
                };
            }
            if fog && !last {
                return Err(PuzzleError::TooLong { ply });
            }
            pos.play_unchecked(m);
        }
        if moves.len() == self.solution.len() {
            Ok(Attempt::Solved)
        } else {
            Err(PuzzleError::Unfinished { ply: moves.len() - 1 })
        }
    }
}

/// `text` as a legal move of `pos`; with `visible`, only moves to squares
/// the solver sees (the fogged squares of a view are empty, but a pawn may
/// not step onto one, as it might be occupied).
pub fn parse_move(pos: &Position, text: &str, visible: Option<fogblast_rules::Bitboard>) -> Option<Move> {
    let uci: Uci = text.parse().ok()?;
    let m = pos.parse_uci(&uci)?;
    match visible {
        Some(visible) if !visible.contains(m.to()) => None,
        _ => Some(m),
    }
}

/// A move in UCI as puzzles write it (castling as king to its square).
pub fn uci(m: Move) -> String {
    m.to_uci(CastlingMode::Standard).text()
}

/// Whether `m` ends the game at once in the mover's favour.
pub fn wins_at_once(pos: &Position, m: Move) -> bool {
    let mut child = *pos;
    child.play_unchecked(m);
    child.outcome().and_then(|o| o.winner()) == Some(pos.turn())
}

/// A stable id for a puzzle: eight base-36 characters of a 64-bit FNV-1a
/// hash of its variant, position and solution.
pub fn puzzle_id(variant: &str, fen: &str, solution: &[String]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in variant.bytes().chain([0]).chain(fen.bytes()).chain([0]).chain(solution.join(" ").bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..8)
        .map(|_| {
            let digit = DIGITS[(hash % 36) as usize];
            hash /= 36;
            char::from(digit)
        })
        .collect()
}

/// The puzzles shipped with the server, made by
/// `fogblast-tools puzzles --out crates/puzzles/data/starter.jsonl`
/// (docs/puzzles.md), one JSON object a line.
pub const STARTER_SET: &str = include_str!("../data/starter.jsonl");

/// [`STARTER_SET`] read.
pub fn starter_set() -> Vec<Puzzle> {
    read_jsonl(STARTER_SET).expect("the starter set is valid JSON lines")
}

/// Puzzles from JSON lines (blank lines skipped).
pub fn read_jsonl(text: &str) -> Result<Vec<Puzzle>, serde_json::Error> {
    text.lines().filter(|line| !line.trim().is_empty()).map(serde_json::from_str).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_move_puzzle() -> Puzzle {
        let solution: Vec<String> = ["a1a7", "e8f8", "a7f7"].map(str::to_owned).to_vec();
        let fen = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1";
        Puzzle {
            id: puzzle_id("atomic", fen, &solution),
            variant: "atomic".into(),
            fen: fen.into(),
            solution,
            themes: vec![],
            rating: 1500.0,
            source: "test".into(),
        }
    }

    fn moves(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_line_solves_and_a_wrong_move_fails() {
        let puzzle = two_move_puzzle();
        assert_eq!(puzzle.check_attempt(&moves("a1a7 e8f8 a7f7")), Ok(Attempt::Solved));
        assert_eq!(puzzle.check_attempt(&moves("a1a6")), Ok(Attempt::Failed { ply: 0 }));
        assert_eq!(puzzle.check_attempt(&moves("a1a7 e8f8 a7a8")), Ok(Attempt::Failed { ply: 2 }));
    }

    #[test]
    fn answers_for_another_position_or_line_are_refused() {
        let puzzle = two_move_puzzle();
        assert_eq!(puzzle.check_attempt(&[]), Err(PuzzleError::NoMoves));
        assert!(matches!(puzzle.check_attempt(&moves("e2e4")), Err(PuzzleError::IllegalMove { ply: 0, .. })));
        assert!(matches!(puzzle.check_attempt(&moves("a1a7 e8d8 a7d7")), Err(PuzzleError::WrongReply { ply: 1, .. })));
        assert!(matches!(puzzle.check_attempt(&moves("a1a7 e8f8")), Err(PuzzleError::Unfinished { .. })));
        assert!(matches!(puzzle.check_attempt(&moves("a1a6 e8f8")), Err(PuzzleError::TooLong { ply: 0 })));
        assert!(matches!(puzzle.check_attempt(&moves("nonsense")), Err(PuzzleError::IllegalMove { .. })));
    }

    #[test]
    fn every_starter_puzzle_reads_and_its_id_matches() {
        let set = starter_set();
        for puzzle in &set {
            assert_eq!(puzzle.id, puzzle_id(&puzzle.variant, &puzzle.fen, &puzzle.solution));
            assert_eq!(puzzle.check_attempt(&puzzle.solution), Ok(Attempt::Solved), "{}", puzzle.id);
        }
    }
}
