//! Move ordering: good moves first make alpha-beta cut early. The hash move
//! leads; then captures by what they gain (in atomic, the material an
//! explosion destroys on each side, with a blown-up king above all); then
//! killer moves and quiet moves by history.

use arrayvec::ArrayVec;
use fogblast_rules::attacks;
use fogblast_rules::{Color, Move, MoveList, Position, Role, Square, Variant};

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
    // The moves a quiet move is compared with, as numbers (see `quiet_id`).
    let [hash_id, first_killer_id, second_killer_id, counter_id] =
        [hash_move, killers[0], killers[1], counter].map(|m| m.map_or(NOT_QUIET, quiet_id));
    scores.extend(moves.iter().map(|&m| match m {
        // Most moves: one quiet piece move, scored without a comparison of
        // whole moves. A hash move, killer or counter move that is not the
        // same quiet move has another number, so the order of the tests
        // below is the order of the general case.
        Move::Normal { role, from, capture: None, to, promotion: None } => {
            let id = piece_move_id(role, from, to);
            if id == hash_id {
                HASH_MOVE
            } else if id == first_killer_id {
                KILLER + 1
            } else if id == second_killer_id {
                KILLER
            } else if id == counter_id {
                KILLER - 1
            } else {
                // `MoveOrder::quiet_score`, with the rows looked up once.
                let main = history[from.index() * 64 + to.index()];
                main + continuation.map_or(0, |row| row[role.index() * 64 + to.index()])
            }
        }
        _ if Some(m) == hash_move => HASH_MOVE,
        _ if m.is_capture() => capture_score(pos, m),
        _ if m.promotion() == Some(Role::Queen) => GOOD_CAPTURE + piece_value(pos.variant(), Role::Queen),
        _ if Some(m) == killers[0] => KILLER + 1,
        _ if Some(m) == killers[1] => KILLER,
        _ if Some(m) == counter => KILLER - 1,
        _ => {
            let main = history[m.from().index() * 64 + m.to().index()];
            main + continuation.map_or(0, |row| row[piece_to(m)])
        }
    }));
    ScoredMoves { moves, scores }
}

/// A quiet piece move (no capture, no promotion, not castling) as a number
/// that tells it from every other such move: its role, from and to squares.
/// Any other move is [`NOT_QUIET`], which no quiet piece move's number is.
#[inline]
fn quiet_id(m: Move) -> u32 {
    match m {
        Move::Normal { role, from, capture: None, to, promotion: None } => piece_move_id(role, from, to),
        _ => NOT_QUIET,
    }
}

#[inline]
fn piece_move_id(role: Role, from: Square, to: Square) -> u32 {
    (role.index() as u32) << 12 | (from.index() as u32) << 6 | to.index() as u32
}

const NOT_QUIET: u32 = u32::MAX;

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

#[cfg(test)]
mod tests {
    use fogblast_rules::{Move, MoveList, Position, Variant};

    use super::*;

    /// The scores as the whole moves' comparisons give them, in the order
    /// of precedence `order_moves` keeps.
    fn reference_score(
        pos: &Position,
        m: Move,
        hash_move: Option<Move>,
        order: &MoveOrder,
        ply: usize,
        previous: Option<Move>,
    ) -> i32 {
        let killers = order.killers[ply];
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
        } else if Some(m) == order.counter(previous) {
            KILLER - 1
        } else {
            order.quiet_score(pos.turn(), m, previous)
        }
    }

    #[test]
    fn quiet_moves_told_apart_by_number_score_as_compared_whole() {
        let mut seed = 17u64;
        let mut next = move |n: usize| {
            seed = crate::search::splitmix(seed);
            (seed % n as u64) as usize
        };
        for variant in [Variant::Atomic, Variant::Standard] {
            for _ in 0..40 {
                let mut pos = Position::new(variant);
                let mut previous = None;
                let mut order = MoveOrder::new();
                for ply in 0..80 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    // Killers, counter, history and hash move drawn from this
                    // node's moves (quiet ones as the search keeps them) and
                    // from other nodes'.
                    let pick = |i: usize| moves[i % moves.len()];
                    let quiets: Vec<Move> =
                        moves.iter().copied().filter(|m| !m.is_capture() && m.promotion().is_none()).collect();
                    for _ in 0..3 {
                        if let Some(&m) = quiets.get(next(quiets.len() + 1)) {
                            order.reward(
                                pos.turn(),
                                m,
                                previous,
                                &quiets[..next(quiets.len() + 1)],
                                ply,
                                1 + next(8) as i32,
                            );
                        }
                    }
                    let hash_move = [None, Some(pick(next(99))), quiets.first().copied()][next(3)];
                    let mut list: MoveList = moves.clone();
                    let mut scores = Scores::new();
                    let scored = order_moves(&pos, &mut list, &mut scores, hash_move, &order, ply, previous);
                    for (i, &m) in moves.iter().enumerate() {
                        assert_eq!(
                            scored.score(i),
                            reference_score(&pos, m, hash_move, &order, ply, previous),
                            "{m:?}"
                        );
                    }
                    let m = pick(next(999));
                    pos.play_unchecked(m);
                    previous = Some(m);
                }
            }
        }
    }
}
