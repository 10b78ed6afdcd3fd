//! Why a move the player tried is not legal, for the `why` op: the page
//! names the rule a newcomer broke ("kings cannot capture", "your king
//! would explode", "your king would be in check") instead of "illegal".
//!
//! The answer is one of a few reasons, judged against the variant's own
//! legal moves and, for the geometry of the pieces, against the same board
//! under fog of war's rules (which have no check, so its moves are every
//! move the pieces can make).

use fogblast_rules::{attacks, Color, Move, Position, Role, Square, Uci, Variant};
use serde_json::{json, Value};

/// A refused move's reason, as the page's text names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The move is legal after all.
    Legal,
    /// No piece of the side to move stands on the starting square.
    NotYourPiece,
    /// The piece cannot move that way, whatever the king's safety.
    CannotMoveThere,
    /// Atomic: a king never captures (the blast would take it too).
    KingCannotCapture,
    /// Atomic: the blast of this capture would take the mover's own king.
    OwnKingExplodes,
    /// Castling while in check.
    CastleOutOfCheck,
    /// Castling across, or onto, a square the opponent attacks.
    CastleThroughCheck,
    /// The king is in check and this move does not end it.
    StillInCheck,
    /// The king would step onto an attacked square.
    KingWouldBeAttacked,
    /// The piece is pinned: moving it would leave the king in check.
    Pinned,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Legal => "legal",
            Reason::NotYourPiece => "not_your_piece",
            Reason::CannotMoveThere => "cannot_move_there",
            Reason::KingCannotCapture => "king_cannot_capture",
            Reason::OwnKingExplodes => "own_king_explodes",
            Reason::CastleOutOfCheck => "castle_out_of_check",
            Reason::CastleThroughCheck => "castle_through_check",
            Reason::StillInCheck => "still_in_check",
            Reason::KingWouldBeAttacked => "king_would_be_attacked",
            Reason::Pinned => "pinned",
        }
    }
}

/// The `why` op's answer for `uci` in `position`.
pub fn why(position: &Position, uci: &Uci) -> Value {
    json!({ "reason": reason(position, uci).name() })
}

/// Why `uci` is refused in `position` (or that it is not).
pub fn reason(position: &Position, uci: &Uci) -> Reason {
    if position.parse_uci(uci).is_some() {
        return Reason::Legal;
    }
    let us = position.turn();
    let board = position.board();
    let Some(from) = from_square(uci) else { return Reason::CannotMoveThere };
    if board.color_at(from) != Some(us) {
        return Reason::NotYourPiece;
    }
    let Some(m) = pseudo_legal(position, uci) else { return Reason::CannotMoveThere };
    if position.variant() == Variant::Atomic && m.is_capture() {
        if m.role() == Role::King {
            return Reason::KingCannotCapture;
        }
        if let Some(king) = board.king_of(us) {
            if king == m.to() || attacks::king_attacks(m.to()).contains(king) {
                return Reason::OwnKingExplodes;
            }
        }
    }
    if m.is_castle() {
        return if position.is_check() { Reason::CastleOutOfCheck } else { Reason::CastleThroughCheck };
    }
    if position.is_check() {
        return Reason::StillInCheck;
    }
    if m.role() == Role::King {
        Reason::KingWouldBeAttacked
    } else {
        Reason::Pinned
    }
}

fn from_square(uci: &Uci) -> Option<Square> {
    uci.to_string().get(0..2)?.parse().ok()
}

/// The move `uci` names among every move the pieces could make on this
/// board, king safety aside: fog of war's moves, which know no check.
pub(crate) fn pseudo_legal(position: &Position, uci: &Uci) -> Option<Move> {
    // Fog of war's moves need both kings; a position without one is over anyway.
    if position.board().king_of(Color::White).is_none() || position.board().king_of(Color::Black).is_none() {
        return None;
    }
    Position::from_setup(position.to_setup(), Variant::Fog).ok()?.parse_uci(uci)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason_of(variant: Variant, fen: &str, uci: &str) -> &'static str {
        let position = Position::from_fen(fen, variant).unwrap_or_else(|e| panic!("{fen}: {e}"));
        reason(&position, &uci.parse().unwrap()).name()
    }

    #[test]
    fn names_each_broken_rule() {
        let start = fogblast_rules::STARTING_FEN;
        assert_eq!(reason_of(Variant::Standard, start, "e2e4"), "legal");
        assert_eq!(reason_of(Variant::Standard, start, "e2e5"), "cannot_move_there");
        assert_eq!(reason_of(Variant::Standard, start, "e7e5"), "not_your_piece");
        assert_eq!(reason_of(Variant::Standard, start, "e3e4"), "not_your_piece");
        // Atomic: the king on e1 beside a black pawn on e2 may not take it.
        let king_beside = "4k3/8/8/8/8/8/4p3/4K3 w - - 0 1";
        assert_eq!(reason_of(Variant::Atomic, king_beside, "e1e2"), "king_cannot_capture");
        // A knight capture next to its own king blows the king up.
        let blast = "4k3/8/8/8/8/3p4/4K3/2N5 w - - 0 1";
        assert_eq!(reason_of(Variant::Atomic, blast, "c1d3"), "own_king_explodes");
        assert_eq!(reason_of(Variant::Standard, blast, "c1d3"), "legal");
        // In check from a rook, a pawn move does not help; the king may not stay on the file.
        let check = "4r1k1/8/8/8/8/8/3P4/4K3 w - - 0 1";
        assert_eq!(reason_of(Variant::Standard, check, "d2d3"), "still_in_check");
        assert_eq!(reason_of(Variant::Standard, check, "e1e2"), "still_in_check");
        // Not in check: the king may not step into the rook's file; a pinned bishop stays.
        let pin = "4r1k1/8/8/8/8/8/8/3K4 w - - 0 1";
        assert_eq!(reason_of(Variant::Standard, pin, "d1e1"), "king_would_be_attacked");
        let pinned = "4r1k1/8/8/8/8/8/4B3/4K3 w - - 0 1";
        assert_eq!(reason_of(Variant::Standard, pinned, "e2d3"), "pinned");
        // Castling through f1, which a bishop on c4 sees, and out of check.
        let through = "4k3/8/8/8/2b5/8/8/4K2R w K - 0 1";
        assert_eq!(reason_of(Variant::Standard, through, "e1g1"), "castle_through_check");
        let out = "4k3/8/8/8/1b6/8/8/4K2R w K - 0 1";
        assert_eq!(reason_of(Variant::Standard, out, "e1g1"), "castle_out_of_check");
    }
}
