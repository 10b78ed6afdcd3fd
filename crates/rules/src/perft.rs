//! Perft: counting the leaves of the legal move tree, the standard test
//! (and benchmark) of a move generator.

use crate::moves::{Move, MoveList};
use crate::position::Position;

/// The number of move sequences of exactly `depth` plies from `pos`.
/// Counts the last ply in bulk, without playing it.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        _ => {
            let mut moves = MoveList::new();
            pos.generate_legal_moves(&mut moves);
            if depth == 1 {
                return moves.len() as u64;
            }
            moves
                .iter()
                .map(|&m| {
                    let mut child = *pos;
                    child.play_unchecked(m);
                    perft(&child, depth - 1)
                })
                .sum()
        }
    }
}

/// Perft split by first move, in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|m| {
            let mut child = *pos;
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}
