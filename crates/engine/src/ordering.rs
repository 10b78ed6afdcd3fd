//! Move ordering: good moves first make alpha-beta cut early. The hash move
//! leads; then captures by what they gain (in atomic, the material an
//! explosion destroys on each side, with a blown-up king above all); then
//! killer moves and quiet moves by history.

use arrayvec::ArrayVec;
use fogblast_rules::attacks;
use fogblast_rules::{Color, Move, MoveList, Position, Role, Variant};

use crate::eval::piece_value;

const MAX_PLY: usize = 128;

/// Killer moves and the history table, learned during a search.
#[derive(Debug, Clone)]
pub struct MoveOrder {
    killers: Vec<[Option<Move>; 2]>,
    /// By side, from square, to square.
    history: Vec<i32>,
}

impl MoveOrder {
    pub fn new() -> MoveOrder {
        MoveOrder { killers: vec![[None; 2]; MAX_PLY], history: vec![0; 2 * 64 * 64] }
    }

    /// Keeps history but forgets killers, which belong to one search.
    pub fn new_search(&mut self) {
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        self.history.iter_mut().for_each(|h| *h /= 8);
    }

    fn history_index(color: Color, m: Move) -> usize {
        (color.index() * 64 + m.from().index()) * 64 + m.to().index()
    }

    /// A quiet move caused a cut-off.
    pub fn reward(&mut self, color: Color, m: Move, ply: usize, depth: i32) {
        if let Some(killers) = self.killers.get_mut(ply) {
            if killers[0] != Some(m) {
                killers[1] = killers[0];
                killers[0] = Some(m);
            }
        }
        let entry = &mut self.history[Self::history_index(color, m)];
        *entry = (*entry + depth * depth).min(1 << 20);
    }
}

impl Default for MoveOrder {
    fn default() -> MoveOrder {
        MoveOrder::new()
    }
}

/// Moves with their ordering scores, handed out best first.
#[derive(Debug)]
pub(crate) struct ScoredMoves<'a> {
    moves: &'a mut MoveList,
    scores: ArrayVec<i32, 1024>,
}

impl ScoredMoves<'_> {
    pub fn len(&self) -> usize {
        self.moves.len()
    }

    /// The best of the moves from `index` on, swapped into `index`
    /// (selection sort, so a cut-off skips sorting the rest).
    pub fn pick(&mut self, index: usize) -> Move {
        let mut best = index;
        for i in index + 1..self.scores.len() {
            if self.scores[i] > self.scores[best] {
                best = i;
            }
        }
        self.moves.swap(index, best);
        self.scores.swap(index, best);
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
    hash_move: Option<Move>,
    order: &MoveOrder,
    ply: usize,
) -> ScoredMoves<'a> {
    let killers = order.killers.get(ply).copied().unwrap_or([None; 2]);
    let us = pos.turn();
    let scores = moves
        .iter()
        .map(|&m| {
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
            } else {
                order.history[MoveOrder::history_index(us, m)]
            }
        })
        .collect();
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
