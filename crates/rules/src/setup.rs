//! An unvalidated position, as read from FEN. [`crate::Position`] is built
//! from it only after every rule about reachable positions is checked.

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::square::Square;

/// Everything a FEN says, unchecked.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    pub board: Board,
    pub turn: Color,
    /// Squares of the rooks that may still castle.
    pub castling_rooks: Bitboard,
    /// The square a pawn skipped over on the last move, if any.
    pub ep_square: Option<Square>,
    /// Plies since the last capture or pawn move.
    pub halfmoves: u32,
    /// Starts at 1, grows after each black move.
    pub fullmoves: u32,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup::standard()
    }
}

impl Setup {
    /// The standard starting position.
    pub fn standard() -> Setup {
        Setup {
            board: Board::standard(),
            turn: Color::White,
            castling_rooks: Bitboard::CORNERS,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    pub fn empty() -> Setup {
        Setup {
            board: Board::empty(),
            turn: Color::White,
            castling_rooks: Bitboard::EMPTY,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
        }
    }
}
