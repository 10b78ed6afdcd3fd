//! What an atomic capture would blow up, for the `blast` op: the page marks
//! those squares while the player points at a capture, before playing it,
//! and shows a capture that would take the player's own king as such (it
//! is refused, but the player may not see why without the picture).

use fogblast_rules::{attacks, Bitboard, Position, Square, Uci, Variant};
use serde_json::{json, Value};

use crate::refusal::pseudo_legal;

/// The squares `uci`'s blast would clear (the capture square, and every
/// piece but pawns next to it; an en passant pawn too), or None when `uci`
/// is no capture the pieces could make in an atomic game.
pub fn blast_squares(position: &Position, uci: &Uci) -> Option<Bitboard> {
    if position.variant() != Variant::Atomic {
        return None;
    }
    let m = pseudo_legal(position, uci)?;
    if !m.is_capture() {
        return None;
    }
    let board = position.board();
    let to = m.to();
    let around = attacks::king_attacks(to) & board.occupied() & !board.pawns();
    let mut cleared = around | Bitboard::from(to);
    if m.is_en_passant() {
        let taken: Square = format!("{}{}", &to.to_string()[0..1], &m.from().to_string()[1..2]).parse().ok()?;
        cleared |= Bitboard::from(taken);
    }
    Some(cleared)
}

/// The `blast` op's answer: `squares` cleared, and which kings go with them.
pub fn blast(position: &Position, uci: &Uci) -> Value {
    let Some(cleared) = blast_squares(position, uci) else {
        return json!({ "squares": [], "own_king": null, "their_king": null });
    };
    let us = position.turn();
    let king = |color| position.board().king_of(color).filter(|&k| cleared.contains(k)).map(|k| k.to_string());
    json!({
        "squares": cleared.into_iter().map(|sq| sq.to_string()).collect::<Vec<_>>(),
        "own_king": king(us),
        "their_king": king(!us),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(fen: &str, uci: &str) -> Value {
        let position = Position::from_fen(fen, Variant::Atomic).unwrap();
        blast(&position, &uci.parse().unwrap())
    }

    fn sorted(squares: &Value) -> Vec<String> {
        let mut out: Vec<String> = squares.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect();
        out.sort();
        out
    }

    #[test]
    fn a_capture_clears_its_square_and_the_pieces_around_but_pawns() {
        // 3. Nxd7 after 1. Nf3 a6 2. Ne5 a5: d7, and c8, d8, e8 around it; the pawns on c7 and e7 stay.
        let a = answer("rnbqkbnr/1ppppppp/8/p3N3/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 3", "e5d7");
        assert_eq!(sorted(&a["squares"]), ["c8", "d7", "d8", "e8"]);
        assert_eq!(a["their_king"], "e8");
        assert!(a["own_king"].is_null());
        // A capture beside your own king shows the king in the blast.
        let own = answer("4k3/8/8/8/8/3p4/4K3/2N5 w - - 0 1", "c1d3");
        assert_eq!(own["own_king"], "e2");
        assert_eq!(sorted(&own["squares"]), ["d3", "e2"]);
        // En passant: the pawn taken beside goes too.
        let ep = answer("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6");
        assert_eq!(sorted(&ep["squares"]), ["d5", "d6"]);
        // No capture, no blast.
        assert_eq!(answer(fogblast_rules::STARTING_FEN, "e2e4")["squares"], json!([]));
    }
}
