//! Atomic puzzles: finding a position's single winning line with the
//! engine, and checking a stored line the same way.
//!
//! A solver move is *unique* when, at the check depth, the engine's best
//! move is it, and either it wins by force (a king explosion or mate is in
//! its score) while no other move does, or it scores at least
//! [`Check::margin`] centipawns above the best other move (found by a
//! second search with the first move left out) and is not itself losing.
//! Each reply in a line must be the engine's best defence. A line stops
//! when the game ends, after [`Check::max_solver_moves`], or before a
//! solver move that is not unique; it always ends with a solver move.

use std::sync::atomic::AtomicBool;

use fogblast_engine::{Limits, SearchReport, Searcher, MATE};
use fogblast_rules::{Move, Position, Variant, WinReason};

use crate::{uci, Puzzle, PuzzleError};

/// Scores beyond this are forced wins or losses.
const FORCED: i32 = MATE - 1_000;

/// How hard the engine looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// Search depth in plies for every move of the line.
    pub depth: u32,
    /// Centipawns the solution must beat every other move by.
    pub margin: i32,
    /// The longest line, in solver moves.
    pub max_solver_moves: usize,
}

impl Check {
    /// The depth and margin the starter set was made and is verified with.
    pub const STANDARD: Check = Check { depth: 5, margin: 300, max_solver_moves: 3 };
}

/// What the engine found at one solver move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unique {
    pub best: Move,
    pub score: i32,
    /// The best other move's score (`-MATE` when there is none).
    pub second: i32,
}

/// Why a line is not a puzzle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotUnique {
    #[error("move {ply}: the engine prefers {best} to the line's {line}")]
    NotBest { ply: usize, best: String, line: String },
    #[error("move {ply}: {best} scores {score}, the next best {second}; not the only good move")]
    Ambiguous { ply: usize, best: String, score: i32, second: i32 },
    #[error("move {ply}: reply {line} is not the engine's best defence {best}")]
    WeakReply { ply: usize, best: String, line: String },
    #[error("the line is empty or ends with a reply")]
    Shape,
    #[error("the line stops at move {ply} though the next solver move is unique too")]
    Cut { ply: usize },
    #[error(transparent)]
    Puzzle(#[from] PuzzleError),
}

fn search(searcher: &mut Searcher, pos: &Position, depth: u32, excluded: Vec<Move>) -> SearchReport {
    let limits = Limits { depth: Some(depth), root_excluded: excluded, ..Limits::default() };
    searcher.search(pos, &[], &limits, &AtomicBool::new(false), &mut |_| {})
}

/// The solver's move at `pos` if it is unique (see the module's rule).
pub fn unique_move(searcher: &mut Searcher, pos: &Position, check: &Check) -> Result<Unique, (Option<Move>, i32, i32)> {
    let first = search(searcher, pos, check.depth, Vec::new());
    let Some(best) = first.best else {
        return Err((None, first.score, -MATE));
    };
    let second = if pos.legal_moves().len() > 1 { search(searcher, pos, check.depth, vec![best]).score } else { -MATE };
    let score = first.score;
    let unique =
        if score >= FORCED { second < FORCED } else { score - second >= check.margin && score > -check.margin };
    if unique {
        Ok(Unique { best, score, second })
    } else {
        Err((Some(best), score, second))
    }
}

/// The engine's best reply at `pos`.
fn best_reply(searcher: &mut Searcher, pos: &Position, check: &Check) -> Option<Move> {
    search(searcher, pos, check.depth, Vec::new()).best
}

/// The single winning line from `pos`, if its first move is unique.
pub fn find_line(pos: &Position, check: &Check) -> Option<Vec<Move>> {
    let mut searcher = Searcher::new(16);
    let mut pos = *pos;
    let mut line = Vec::new();
    for solver_move in 0..check.max_solver_moves {
        let Ok(found) = unique_move(&mut searcher, &pos, check) else {
            if solver_move > 0 {
                line.pop();
            }
            break;
        };
        line.push(found.best);
        pos.play_unchecked(found.best);
        if pos.outcome().is_some() || solver_move + 1 == check.max_solver_moves {
            break;
        }
        let reply = best_reply(&mut searcher, &pos, check)?;
        line.push(reply);
        pos.play_unchecked(reply);
        if pos.outcome().is_some() {
            line.pop();
            break;
        }
    }
    (!line.is_empty()).then_some(line)
}

/// Checks a stored atomic puzzle: the engine, searching afresh, finds
/// exactly its line ([`find_line`]'s rule, move by move).
pub fn verify(puzzle: &Puzzle, check: &Check) -> Result<(), NotUnique> {
    if puzzle.variant()? != Variant::Atomic {
        return Err(PuzzleError::Variant(puzzle.variant.clone()).into());
    }
    if puzzle.solution.len().is_multiple_of(2) || puzzle.solution.len() > 2 * check.max_solver_moves - 1 {
        return Err(NotUnique::Shape);
    }
    let mut searcher = Searcher::new(16);
    let mut pos = puzzle.position()?;
    for (ply, text) in puzzle.solution.iter().enumerate() {
        let m =
            crate::parse_move(&pos, text, None).ok_or_else(|| PuzzleError::IllegalMove { ply, text: text.clone() })?;
        if ply % 2 == 0 {
            match unique_move(&mut searcher, &pos, check) {
                Ok(found) if found.best == m => {}
                Ok(found) => return Err(NotUnique::NotBest { ply, best: uci(found.best), line: text.clone() }),
                Err((best, score, second)) => {
                    let best = best.map(uci).unwrap_or_default();
                    return Err(NotUnique::Ambiguous { ply, best, score, second });
                }
            }
        } else {
            let best = best_reply(&mut searcher, &pos, check);
            if best != Some(m) {
                return Err(NotUnique::WeakReply { ply, best: best.map(uci).unwrap_or_default(), line: text.clone() });
            }
        }
        pos.play_unchecked(m);
    }
    Ok(())
}

/// The themes of a line from `start`: how it ends (`kingExplosion`,
/// `mate`, else `advantage` when it wins at least a piece's worth or
/// `defence` when the unique move only holds), whether a solver move
/// connects the kings (`connectedKings`), and its length (`oneMove`,
/// `short`, `long`).
pub fn themes(start: &Position, line: &[Move], first: &Unique) -> Vec<String> {
    let mut themes = Vec::new();
    let mut pos = *start;
    let mut connects = false;
    for (ply, &m) in line.iter().enumerate() {
        let was_connected = pos.kings_connected();
        pos.play_unchecked(m);
        connects |= ply % 2 == 0 && pos.kings_connected() && !was_connected;
    }
    let ending = match pos.outcome() {
        Some(fogblast_rules::Outcome::Decisive { reason: WinReason::KingExploded, .. }) => "kingExplosion",
        Some(fogblast_rules::Outcome::Decisive { reason: WinReason::Checkmate, .. }) => "mate",
        _ if first.score >= 300 => "advantage",
        _ => "defence",
    };
    themes.push(ending.to_owned());
    if connects {
        themes.push("connectedKings".to_owned());
    }
    if !line[0].is_capture() {
        themes.push("quietMove".to_owned());
    }
    themes.push(
        match line.len().div_ceil(2) {
            1 => "oneMove",
            2 => "short",
            _ => "long",
        }
        .to_owned(),
    );
    themes
}

/// A starting difficulty: longer lines, quiet first moves, defences and
/// positions with many moves to choose from are harder.
pub fn initial_rating(start: &Position, line: &[Move], themes: &[String]) -> f64 {
    let solver_moves = line.len().div_ceil(2) as f64;
    let mut rating = 1000.0 + 250.0 * (solver_moves - 1.0);
    if themes.iter().any(|t| t == "quietMove") {
        rating += 200.0;
    }
    if themes.iter().any(|t| t == "defence" || t == "connectedKings") {
        rating += 150.0;
    }
    rating += 4.0 * start.legal_moves().len() as f64;
    rating.round()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(fen: &str) -> Position {
        Position::from_fen(fen, Variant::Atomic).unwrap()
    }

    #[test]
    fn a_lone_king_explosion_is_found_as_a_one_move_puzzle() {
        // The knight takes on f7, next to e8: the explosion takes the king.
        let start = position("4k3/5p2/8/6N1/8/8/8/4K3 w - - 0 1");
        let line = find_line(&start, &Check::STANDARD).expect("a winning line");
        assert_eq!(uci(line[0]), "g5f7");
        assert_eq!(line.len(), 1);
    }

    #[test]
    fn a_king_stepping_beside_the_other_is_the_connected_kings_theme() {
        let start = position("8/8/8/3k4/8/3K4/8/8 w - - 0 1");
        let step = crate::parse_move(&start, "d3d4", None).unwrap();
        let first = Unique { best: step, score: 0, second: -400 };
        let themes = themes(&start, &[step], &first);
        assert_eq!(themes, ["defence", "connectedKings", "quietMove", "oneMove"]);
        let aside = crate::parse_move(&start, "d3c2", None).unwrap();
        assert!(!super::themes(&start, &[aside], &first).contains(&"connectedKings".to_owned()));
    }

    #[test]
    fn the_start_position_has_no_puzzle() {
        assert_eq!(find_line(&Position::new(Variant::Atomic), &Check::STANDARD), None);
    }

    #[test]
    fn a_line_with_another_first_move_is_refused() {
        let start = "4k3/5p2/8/6N1/8/8/8/4K3 w - - 0 1";
        let puzzle = Puzzle {
            id: "x".into(),
            variant: "atomic".into(),
            fen: start.into(),
            solution: vec!["e1d1".into()],
            themes: vec![],
            rating: 1500.0,
            source: "test".into(),
        };
        assert!(matches!(verify(&puzzle, &Check::STANDARD), Err(NotUnique::NotBest { .. })));
        let puzzle = Puzzle { solution: vec!["g5f7".into()], ..puzzle };
        assert_eq!(verify(&puzzle, &Check::STANDARD), Ok(()));
    }
}
