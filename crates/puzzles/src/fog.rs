//! Fog puzzles, decided from the solver's view alone.
//!
//! A fog puzzle shows the solver's view: its own pieces and the squares
//! they reach; any fogged square may hold any enemy piece, or none. Every
//! move the solver may make is scored against the worst the fog could
//! hide, one reply deep:
//!
//! * taking the enemy king wins outright;
//! * otherwise the move gains the piece it takes (and a promotion's worth),
//!   less the most valuable piece the opponent could then take: the moved
//!   piece if any visible enemy piece attacks its square or any fogged
//!   square could hold an attacker of it (a queen's lines through empty and
//!   fogged squares, a knight's jumps); any other piece a visible enemy
//!   attacks; and any other piece the move newly opens to the fog. A piece
//!   the fog could already reach before the move is left out for every
//!   move alike: no move of another piece changes that.
//!
//! Since the fogged squares are treated as holding whatever hurts most,
//! the score is a floor over every position consistent with the view. The
//! solution must be the best move by [`MARGIN`] over every other, and
//! either take the king (`kingCapture`), win at least a minor piece whatever
//! the fog holds (`safeCapture`), or save a piece a visible enemy attacks
//! (`trade`, `escape`).
//!
//! [`verify_in_game`] then checks the move deeper, against the game the
//! view was cut from: in positions the fog engine's belief holds
//! consistent with all the solver saw, the engine must find it best.

use fogblast_rules::attacks::{knight_attacks, queen_attacks};
use fogblast_rules::{Bitboard, Move, Role, Variant};

use crate::view::{parse_view, ParsedView};
use crate::{uci, Puzzle, PuzzleError};

/// What taking the king is worth: the game.
pub const KING: i32 = 10_000;
/// Centipawns the solution must beat every other move by, worst case.
pub const MARGIN: i32 = 200;
/// A minor piece: the least a `safeCapture` wins.
const MINOR: i32 = 300;

/// Material values in centipawns.
pub fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight | Role::Bishop => 300,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => KING,
    }
}

/// The moves the solver may make: the view position's moves to squares it
/// sees (a pawn may not step into the fog, which might be occupied).
pub fn candidate_moves(view: &ParsedView) -> Vec<Move> {
    view.position.legal_moves().into_iter().filter(|m| view.visible.contains(m.to())).collect()
}

/// Whether any fogged square could hold a piece attacking `square`.
fn reachable_from_fog(square: fogblast_rules::Square, occupied: Bitboard, fogged: Bitboard) -> bool {
    ((queen_attacks(square, occupied) | knight_attacks(square)) & fogged).any()
}

/// The largest value among our pieces a visible enemy piece attacks.
pub fn visible_threat(view: &ParsedView) -> i32 {
    let board = view.position.board();
    let us = view.position.turn();
    let occupied = board.occupied() & view.visible;
    board
        .by_color(us)
        .into_iter()
        .filter(|&sq| (board.attackers(sq, !us, occupied) & view.visible).any())
        .filter_map(|sq| board.role_at(sq).map(value))
        .max()
        .unwrap_or(0)
}

/// `m`'s worst-case score in centipawns (see the module).
pub fn worst_case_score(view: &ParsedView, m: Move) -> i32 {
    if m.capture() == Some(Role::King) {
        return KING;
    }
    let pos = &view.position;
    let us = pos.turn();
    let fogged = !view.visible;
    let gain = m.capture().map_or(0, value) + m.promotion().map_or(0, |role| value(role) - value(Role::Pawn));
    let mut after = *pos;
    after.play_unchecked(m);
    // Only what the solver sees: not the stand-in king of a view whose
    // enemy king is in the fog.
    let board = after.board();
    let occupied = board.occupied() & view.visible;
    let moved = board.by_color(us) - pos.board().by_color(us);
    let before = pos.board().occupied() & view.visible;
    let loss = board
        .by_color(us)
        .into_iter()
        .filter(|&sq| {
            let fog_now = reachable_from_fog(sq, occupied, fogged);
            let exposed = if moved.contains(sq) { fog_now } else { fog_now && !reachable_from_fog(sq, before, fogged) };
            exposed || (board.attackers(sq, !us, occupied) & view.visible).any()
        })
        .filter_map(|sq| board.role_at(sq).map(value))
        .max()
        .unwrap_or(0);
    gain - loss
}

/// A fog puzzle's solution and why it is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FogSolution {
    pub best: Move,
    pub score: i32,
    /// The next best move's score.
    pub second: i32,
    /// `kingCapture`, `safeCapture`, `trade` or `escape`.
    pub kind: &'static str,
    /// How many moves the solver could choose from.
    pub choices: usize,
}

/// The view's unique solution, if it has one.
pub fn unique_move(view: &ParsedView) -> Option<FogSolution> {
    let mut scored: Vec<(Move, i32)> =
        candidate_moves(view).into_iter().map(|m| (m, worst_case_score(view, m))).collect();
    scored.sort_by_key(|&(_, score)| -score);
    let &(best, score) = scored.first()?;
    let second = scored.get(1).map_or(-KING, |&(_, s)| s);
    if score - second < MARGIN {
        return None;
    }
    let kind = if score == KING {
        "kingCapture"
    } else if best.is_capture() && score >= MINOR {
        "safeCapture"
    } else if score >= 0 && visible_threat(view) >= MINOR {
        if best.is_capture() {
            "trade"
        } else {
            "escape"
        }
    } else {
        return None;
    };
    Some(FogSolution { best, score, second, kind, choices: scored.len() })
}

/// Why a stored fog puzzle is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FogNotUnique {
    #[error("no move wins clearly whatever the fog hides")]
    NoSolution,
    #[error("the view's unique solution is {best}, not {line}")]
    OtherSolution { best: String, line: String },
    #[error("a fog puzzle is one move")]
    Shape,
    #[error(transparent)]
    Puzzle(#[from] PuzzleError),
}

/// Checks a stored fog puzzle from its view alone.
pub fn verify(puzzle: &Puzzle) -> Result<FogSolution, FogNotUnique> {
    if puzzle.variant()? != Variant::Fog {
        return Err(PuzzleError::Variant(puzzle.variant.clone()).into());
    }
    let [line] = puzzle.solution.as_slice() else {
        return Err(FogNotUnique::Shape);
    };
    let view = parse_view(&puzzle.fen)?;
    let found = unique_move(&view).ok_or(FogNotUnique::NoSolution)?;
    if &uci(found.best) != line {
        return Err(FogNotUnique::OtherSolution { best: uci(found.best), line: line.clone() });
    }
    Ok(found)
}

/// How deep [`verify_in_game`] looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeepCheck {
    /// Most positions the fog engine's belief keeps.
    pub belief_cap: usize,
    /// Positions of the belief searched (spread evenly over it).
    pub samples: usize,
    /// Search depth in plies in each (captures followed further).
    pub depth: u32,
    /// Centipawns the solution must beat every other move by in each.
    pub margin: i32,
}

impl DeepCheck {
    /// What the starter set is made and verified with.
    pub const STANDARD: DeepCheck = DeepCheck { belief_cap: 256, samples: 16, depth: 3, margin: 100 };
}

/// What the deeper check found: the positions searched and the solution's
/// smallest lead over the best other move among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeepFinding {
    pub positions: usize,
    pub least_lead: i32,
}

/// Why a fog puzzle fails the deeper check.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeepFailure {
    #[error("the fog engine's belief has no position: {0}")]
    Belief(String),
    #[error("in a position the solver could be in ({fen}) the engine prefers {best}")]
    NotBest { fen: String, best: String },
    #[error("in a position the solver could be in ({fen}) the solution leads the next move by only {lead}")]
    Narrow { fen: String, lead: i32 },
}

/// Checks a fog puzzle's move deeper than [`worst_case_score`], against the
/// game it was cut from: the fog engine's belief
/// ([`fogblast_engine::fog::Belief`]) gathers the positions consistent with
/// everything the solver saw from the start of `game` (the moves before the
/// puzzle), and in each of up to [`DeepCheck::samples`] of them the engine,
/// searching `depth` plies with the true position in hand, must find
/// `solution` best by at least [`DeepCheck::margin`]. A move that wins
/// material but walks into a fork the fog hides fails here.
pub fn verify_in_game(game: &[Move], solution: Move, check: &DeepCheck) -> Result<DeepFinding, DeepFailure> {
    use fogblast_engine::fog::{Belief, FogObservation};
    let mut pos = fogblast_rules::Position::new(Variant::Fog);
    let solver = if game.len().is_multiple_of(2) { fogblast_rules::Color::White } else { fogblast_rules::Color::Black };
    let mut observation = FogObservation::new(solver);
    for &m in game {
        observation.observe_move(&mut pos, m);
    }
    let belief =
        Belief::track(&observation, check.belief_cap, 1).map_err(|error| DeepFailure::Belief(error.to_string()))?;
    let particles = belief.particles();
    if particles.is_empty() {
        return Err(DeepFailure::Belief("no candidates".to_owned()));
    }
    let step = particles.len().div_ceil(check.samples.max(1));
    let mut searcher = fogblast_engine::Searcher::new(4);
    let mut least_lead = i32::MAX;
    let mut positions = 0;
    // The true position is one of them whatever the sample keeps.
    for candidate in std::iter::once(&pos).chain(particles.iter().step_by(step)) {
        let lead = solution_lead(&mut searcher, candidate, solution, check)?;
        least_lead = least_lead.min(lead);
        positions += 1;
    }
    Ok(DeepFinding { positions, least_lead })
}

/// How far `solution` leads the best other move at `pos`, if it is best.
fn solution_lead(
    searcher: &mut fogblast_engine::Searcher,
    pos: &fogblast_rules::Position,
    solution: Move,
    check: &DeepCheck,
) -> Result<i32, DeepFailure> {
    let search = |searcher: &mut fogblast_engine::Searcher, excluded: Vec<Move>| {
        let limits =
            fogblast_engine::Limits { depth: Some(check.depth), root_excluded: excluded, ..Default::default() };
        searcher.search(pos, &[], &limits, &std::sync::atomic::AtomicBool::new(false), &mut |_| {})
    };
    let first = search(searcher, Vec::new());
    if first.best != Some(solution) {
        let best = first.best.map(uci).unwrap_or_default();
        return Err(DeepFailure::NotBest { fen: pos.fen(), best });
    }
    if pos.legal_moves().len() == 1 {
        return Ok(KING);
    }
    let lead = first.score - search(searcher, vec![solution]).score;
    if lead < check.margin {
        return Err(DeepFailure::Narrow { fen: pos.fen(), lead });
    }
    Ok(lead)
}

/// The themes of a fog puzzle.
pub fn themes(found: &FogSolution) -> Vec<String> {
    vec![found.kind.to_owned(), "fog".to_owned(), "oneMove".to_owned()]
}

/// A starting difficulty: a visible king is easiest, a piece to save
/// hardest; more moves to choose from make any of them harder.
pub fn initial_rating(found: &FogSolution) -> f64 {
    let base = match found.kind {
        "kingCapture" => 700.0,
        "safeCapture" => 1000.0,
        "trade" => 1100.0,
        _ => 1200.0,
    };
    base + 8.0 * found.choices as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_rules::{Color, Position};

    fn view_of(fen: &str) -> ParsedView {
        let pos = Position::from_fen(fen, Variant::Fog).unwrap();
        parse_view(&pos.fog_view(Color::White).fen()).unwrap()
    }

    #[test]
    fn a_visible_king_is_taken() {
        let view = view_of("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
        // The rook on a1 sees along the first rank and the a-file only.
        assert!(unique_move(&view).is_none());
        let view = view_of("4k3/8/8/8/8/8/8/4K2R w - - 0 1");
        let found = unique_move(&view);
        assert_eq!(found, None, "the h-rook does not see e8");
        let view = view_of("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1");
        let found = unique_move(&view).expect("the rook takes the king");
        assert_eq!((uci(found.best).as_str(), found.kind), ("e1e8", "kingCapture"));
    }

    #[test]
    fn a_capture_the_fog_could_answer_is_not_safe() {
        // The knight on c3 takes on d5; nothing the white side sees can
        // retake, and every line to d5 ends at a square it sees.
        let fen = "4k3/8/8/3q4/8/2N5/8/4K3 w - - 0 1";
        let view = view_of(fen);
        let m = crate::parse_move(&view.position, "c3d5", Some(view.visible)).unwrap();
        let score = worst_case_score(&view, m);
        // d5's lines run on into the fog: a hidden piece could retake.
        assert_eq!(score, value(Role::Queen) - value(Role::Knight));
        let found = unique_move(&view).expect("winning the queen for a knight at worst");
        assert_eq!((uci(found.best).as_str(), found.kind), ("c3d5", "safeCapture"));
    }

    #[test]
    fn the_stand_in_for_a_fogged_king_threatens_nothing() {
        // Black's king is in the fog; the view stands it on the first
        // fogged square, a4, beside the knight on a3.
        let view = parse_view("********/*******p/*******1/*1*****1/*7/N7/PPPPPPPR/R1BQKBN1 w Q - 5").unwrap();
        assert_eq!(view.position.board().role_at("a4".parse().unwrap()), Some(Role::King));
        assert_eq!(visible_threat(&view), 0);
        let m = crate::parse_move(&view.position, "a3b1", Some(view.visible)).unwrap();
        assert_eq!(worst_case_score(&view, m), 0, "b1 is seen and out of every fogged square's reach");
    }

    /// The position of seeded self-play game `seed` after `plies`.
    fn selfplay_position(seed: u64, plies: usize) -> (Vec<Move>, Position) {
        let game = crate::selfplay::selfplay_game(Variant::Fog, seed)[..plies].to_vec();
        let mut pos = Position::new(Variant::Fog);
        for &m in &game {
            pos.play_unchecked(m);
        }
        (game, pos)
    }

    #[test]
    fn a_move_safe_one_reply_deep_can_lose_deeper() {
        // Self-play game 1000017 after ten plies: one reply deep, the
        // knight's retreat h3g1 is the only move that saves it from the
        // pawn on g4; searched in the positions the game allows, h3f4 does
        // as well or better.
        let (game, pos) = selfplay_position(1_000_017, 10);
        let view = parse_view(&pos.fog_view(pos.turn()).fen()).unwrap();
        let shallow = unique_move(&view).expect("a unique move one reply deep");
        assert_eq!(uci(shallow.best), "h3g1");
        let m = crate::parse_move(&pos, "h3g1", None).unwrap();
        let deeper = verify_in_game(&game, m, &DeepCheck::STANDARD);
        assert!(matches!(deeper, Err(DeepFailure::NotBest { .. } | DeepFailure::Narrow { .. })), "{deeper:?}");
    }

    #[test]
    fn a_visible_king_taken_holds_deeper() {
        let starter = crate::starter_set();
        let puzzle = starter.iter().find(|p| p.themes[0] == "kingCapture").expect("a king capture in the set");
        let (_, seed, ply) = crate::selfplay::parse_source(&puzzle.source).unwrap();
        let (game, pos) = selfplay_position(seed, ply);
        let m = crate::parse_move(&pos, &puzzle.solution[0], None).unwrap();
        let found = verify_in_game(&game, m, &DeepCheck::STANDARD).unwrap();
        assert!(found.positions > 1 && found.least_lead >= DeepCheck::STANDARD.margin, "{found:?}");
    }

    #[test]
    fn a_stored_puzzle_with_another_move_is_refused() {
        let pos = Position::from_fen("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", Variant::Fog).unwrap();
        let mut puzzle = Puzzle {
            id: "x".into(),
            variant: "fog".into(),
            fen: pos.fog_view(Color::White).fen(),
            solution: vec!["e1e2".into()],
            themes: vec![],
            rating: 1500.0,
            source: "test".into(),
        };
        assert!(matches!(verify(&puzzle), Err(FogNotUnique::OtherSolution { .. })));
        puzzle.solution = vec!["e1e8".into()];
        assert_eq!(verify(&puzzle).map(|found| found.kind), Ok("kingCapture"));
    }
}
