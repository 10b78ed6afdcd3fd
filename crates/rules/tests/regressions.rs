//! Positions the fuzz targets in `fuzz/` once broke, kept so the fixes stay.

use fogblast_rules::{Bitboard, Color, Position, Variant};

/// Fog of war: capturing the king must also take that side's castling
/// rights, or the position left behind fails validation and its FEN drops
/// the rights on the way back in.
#[test]
fn fog_king_capture_clears_castling_rights() {
    let pos =
        Position::from_fen("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np2B3/5nB1/pPPP1PPP/R3K2R b KQ - 1 3", Variant::Fog).unwrap();
    let m = pos.parse_uci(&"f3e1".parse().unwrap()).expect("Nxe1 is legal in fog of war");
    let (next, effects) = pos.play(m).unwrap();
    assert!(effects.captured.is_some());
    assert_eq!(next.castling_rooks(), Bitboard::EMPTY);
    assert_eq!(Position::from_setup(next.to_setup(), Variant::Fog), Ok(next));
    assert_eq!(next.fen(), "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np2B3/6B1/pPPP1PPP/R3n2R w - - 0 4");
    assert_eq!(Position::from_fen(&next.fen(), Variant::Fog), Ok(next));
}

/// Atomic: exploding the enemy king is legal even if it leaves our king
/// attacked, and the finished position must still validate.
#[test]
fn atomic_king_explosion_may_leave_own_king_attacked() {
    let pos = Position::from_fen("4r3/p5p1/4p1k1/1ppb3p/PP4P1/7r/3P3K/B5R1 w - - 11 25", Variant::Atomic).unwrap();
    let m = pos.parse_uci(&"a1g7".parse().unwrap()).expect("Bxg7 explodes the black king");
    let (next, _) = pos.play(m).unwrap();
    assert_eq!(next.board().king_of(Color::Black), None);
    assert!(next.king_attackers(Color::White).any());
    assert_eq!(Position::from_setup(next.to_setup(), Variant::Atomic), Ok(next));
    assert_eq!(Position::from_fen(&next.fen(), Variant::Atomic), Ok(next));
}
