//! Move ordering: good moves first make alpha-beta cut early. The hash move
//! leads; then captures by what they gain (in atomic, the material an
//! explosion destroys on each side, with a blown-up king above all); then
//! killer moves and quiet moves by history.

use arrayvec::ArrayVec;
use fogblast_rules::attacks;
use fogblast_rules::{Color, Move, MoveList, Position, Role, Variant};

use crate::eval::piece_value;

const MAX_PLY: usize = 128;

/// History scores stay within this bound (the gravity of the update pulls
/// them back as they near it).
pub(crate) const HISTORY_MAX: i32 = 16_384;

/// Killer moves, the history table, counter moves and the counter-move
/// history, learned during a search.
#[derive(Debug, Clone)]
pub struct MoveOrder {
    killers: Vec<[Option<Move>; 2]>,
    /// By side, from square, to square.
    history: Vec<i32>,
    /// The quiet reply that last refuted a move, by that move's piece and
    /// target square.
    counters: Vec<Option<Move>>,
    /// How well a quiet move (by piece and target) answers the opponent's
    /// previous move (by piece and target).
    continuation: Vec<i32>,
}

/// The previous move's piece and target square, as an index.
#[inline]
fn piece_to(m: Move) -> usize {
    m.role().index() * 64 + m.to().index()
}

impl MoveOrder {
    pub fn new() -> MoveOrder {
        MoveOrder {
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 2 * 64 * 64],
            counters: vec![None; 6 * 64],
            continuation: vec![0; 6 * 64 * 6 * 64],
        }
    }

    /// Keeps history but forgets killers, which belong to one search.
    pub fn new_search(&mut self) {
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        self.history.iter_mut().for_each(|h| *h /= 2);
        self.continuation.iter_mut().for_each(|h| *h /= 2);
    }

    fn history_index(color: Color, m: Move) -> usize {
        (color.index() * 64 + m.from().index()) * 64 + m.to().index()
    }

    /// The combined history of quiet move `m` after `previous`.
    #[inline]
    pub fn quiet_score(&self, color: Color, m: Move, previous: Option<Move>) -> i32 {
        let main = self.history[Self::history_index(color, m)];
        let cont = previous.map_or(0, |p| self.continuation[piece_to(p) * 384 + piece_to(m)]);
        main + cont
    }

    /// Whether `m` is one of the killer moves at `ply`.
    pub fn is_killer(&self, ply: usize, m: Move) -> bool {
        self.killers.get(ply).is_some_and(|k| k.contains(&Some(m)))
    }

    fn counter(&self, previous: Option<Move>) -> Option<Move> {
        previous.and_then(|p| self.counters[piece_to(p)])
    }

    /// A quiet move caused a cut-off; `tried` are the quiet moves searched
    /// before it at the same node, which failed to.
    pub fn reward(&mut self, color: Color, m: Move, previous: Option<Move>, tried: &[Move], ply: usize, depth: i32) {
        if let Some(killers) = self.killers.get_mut(ply) {
            if killers[0] != Some(m) {
                killers[1] = killers[0];
                killers[0] = Some(m);
            }
        }
        if let Some(p) = previous {
            self.counters[piece_to(p)] = Some(m);
        }
        let bonus = (depth * depth * 16 + 32 * depth).min(1_600);
        self.update(color, m, previous, bonus);
        for &quiet in tried {
            self.update(color, quiet, previous, -bonus);
        }
    }

    fn update(&mut self, color: Color, m: Move, previous: Option<Move>, bonus: i32) {
        let gravity = |entry: &mut i32| *entry += bonus - *entry * bonus.abs() / HISTORY_MAX;
        gravity(&mut self.history[Self::history_index(color, m)]);
        if let Some(p) = previous {
            gravity(&mut self.continuation[piece_to(p) * 384 + piece_to(m)]);
        }
    }
}

impl Default for MoveOrder {
    fn default() -> MoveOrder {
        MoveOrder::new()
    }
}

/// Moves with their ordering scores, handed out best first. The scores
/// live in a buffer of the caller's (a list of 1,024 scores is not worth
/// copying out of [`order_moves`]).
#[derive(Debug)]
pub(crate) struct ScoredMoves<'a> {
    moves: &'a mut MoveList,
    scores: &'a mut Scores,
}

/// The ordering scores of a [`MoveList`], by index.
pub(crate) type Scores = ArrayVec<i32, 1024>;

impl ScoredMoves<'_> {
    pub fn len(&self) -> usize {
        self.moves.len()
    }

    /// The ordering score of the move at `index` (after it was picked).
    pub fn score(&self, index: usize) -> i32 {
        self.scores[index]
    }

    /// The best of the moves from `index` on (the first of them on a tie),
    /// swapped into `index` (selection sort, so a cut-off skips sorting the
    /// rest).
    pub fn pick(&mut self, index: usize) -> Move {
        let rest = &self.scores[index..];
        // The highest score (a loop compilers vectorise), then where it
        // first occurs.
        let best_score = rest.iter().fold(i32::MIN, |best, &score| best.max(score));
        let best = rest.iter().position(|&score| score == best_score).unwrap_or(0);
        self.moves.swap(index, index + best);
        self.scores.swap(index, index + best);
        self.moves[index]
    }
}

const HASH_MOVE: i32 = 4_000_000;
pub(crate) const KING_EXPLOSION: i32 = 3_000_000;
const GOOD_CAPTURE: i32 = 2_000_000;
const KILLER: i32 = 1_000_000;
const BAD_CAPTURE: i32 = -1_000_000;

pub(crate) fn order_moves<'a>(
    pos: &Position,
    moves: &'a mut MoveList,
    scores: &'a mut Scores,
    hash_move: Option<Move>,
    order: &MoveOrder,
    ply: usize,
    previous: Option<Move>,
) -> ScoredMoves<'a> {
    let killers = order.killers.get(ply).copied().unwrap_or([None; 2]);
    let counter = order.counter(previous);
    let us = pos.turn();
    // The history rows this node reads: ours, and the replies to `previous`.
    let history = &order.history[us.index() * 64 * 64..][..64 * 64];
    let continuation = previous.map(|p| &order.continuation[piece_to(p) * 384..][..384]);
    scores.clear();
    scores.extend(moves.iter().map(|&m| {
        if Some(m) == hash_move {
            HASH_MOVE
        } else if m.is_capture() {
            capture_score(pos, m)
        } else if m.promotion() == Some(Role::Queen) {
            GOOD_CAPTURE + piece_value(pos.variant(), Role::Queen)
        } else if Some(m) == killers[0] {
            KILLER + 1
        } else if Some(m) == killers[1] {
            KILLER
        } else if Some(m) == counter {
            KILLER - 1
        } else {
            // `MoveOrder::quiet_score`, with the rows looked up once.
            let main = history[m.from().index() * 64 + m.to().index()];
            main + continuation.map_or(0, |row| row[piece_to(m)])
        }
    }));
    ScoredMoves { moves, scores }
}

/// What a capture wins: in atomic the value of the enemy pieces the blast
/// removes minus our own (the capturer included); elsewhere the victim's
/// value, cheaper attackers first.
fn capture_score(pos: &Position, m: Move) -> i32 {
    let variant = pos.variant();
    if variant != Variant::Atomic {
        let victim = m.capture().map_or(0, |role| piece_value(variant, role));
        return GOOD_CAPTURE + victim * 16 - piece_value(variant, m.role()) / 16;
    }
    match explosion_gain(pos, m) {
        KING_EXPLOSION => KING_EXPLOSION,
        gain if gain >= 0 => GOOD_CAPTURE + gain,
        gain => BAD_CAPTURE + gain,
    }
}

/// What an atomic capture wins: the value of the enemy pieces its blast
/// removes minus our own, the capturer included; [`KING_EXPLOSION`] when
/// the enemy king is in the blast.
pub(crate) fn explosion_gain(pos: &Position, m: Move) -> i32 {
    let variant = pos.variant();
    let victim = m.capture().map_or(0, |role| piece_value(variant, role));
    let board = pos.board();
    let us = pos.turn();
    let to = m.to();
    let blast = attacks::king_attacks(to) & (board.occupied() - board.pawns() - m.from());
    if (blast & board.kings() & board.by_color(!us)).any() || m.capture() == Some(Role::King) {
        return KING_EXPLOSION;
    }
    let mut gain = victim - piece_value(variant, m.role());
    for sq in blast {
        if let Some(role) = board.role_at(sq) {
            let value = piece_value(variant, role);
            gain += if board.by_color(us).contains(sq) { -value } else { value };
        }
    }
    gain
}
