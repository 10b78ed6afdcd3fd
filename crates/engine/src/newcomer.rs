//! A stand-in for someone new to atomic chess, used to calibrate Easy: it
//! takes a move that blows up the enemy king whenever the board offers one
//! (the one tactic every newcomer learns first), and otherwise plays a
//! random legal move. Easy should beat it more often than not, but not
//! every time and not at once.

use fogblast_rules::{Move, Position};

use crate::search::splitmix;

/// The newcomer's move in `pos`, repeatable for a `seed`; `None` when there
/// is no legal move.
pub fn newcomer_move(pos: &Position, seed: u64) -> Option<Move> {
    let moves = pos.legal_moves();
    let them = !pos.turn();
    let winning = moves.iter().copied().find(|&m| {
        let mut child = *pos;
        child.play_unchecked(m);
        child.board().king_of(them).is_none()
    });
    if winning.is_some() {
        return winning;
    }
    (!moves.is_empty()).then(|| moves[(splitmix(seed) % moves.len() as u64) as usize])
}
