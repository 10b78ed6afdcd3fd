//! Chess960 starting positions by their standard number (0-959).

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::piece::Role;
use crate::position::Position;
use crate::setup::Setup;
use crate::square::{File, Rank, Square};
use crate::variant::Variant;

/// Why a Chess960 start cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Chess960Error {
    #[error("Chess960 position number {0} is out of range (0-959)")]
    OutOfRange(u32),
    #[error("{0} is not played from Chess960 starts")]
    UnsupportedVariant(Variant),
}

/// The back rank of start number `n`, a-file first (Scharnagl numbering:
/// 518 is the standard start).
pub fn chess960_back_rank(n: u32) -> Result<[Role; 8], Chess960Error> {
    if n > 959 {
        return Err(Chess960Error::OutOfRange(n));
    }
    let mut rank: [Option<Role>; 8] = [None; 8];
    let mut rest = n;
    // Light-squared bishop on b, d, f or h; dark-squared on a, c, e or g.
    rank[(rest % 4 * 2 + 1) as usize] = Some(Role::Bishop);
    rest /= 4;
    rank[(rest % 4 * 2) as usize] = Some(Role::Bishop);
    rest /= 4;
    let queen = rest % 6;
    rest /= 6;
    const KNIGHTS: [(u32, u32); 10] = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)];
    let (first_knight, second_knight) = KNIGHTS[rest as usize];
    let mut place_in_empty = |index: u32, role: Role| {
        let file = (0..8).filter(|&f| rank[f].is_none()).nth(index as usize).expect("enough empty files");
        rank[file] = Some(role);
    };
    place_in_empty(queen, Role::Queen);
    // The second knight's index counts empty files before the first is placed.
    place_in_empty(second_knight, Role::Knight);
    place_in_empty(first_knight, Role::Knight);
    place_in_empty(0, Role::Rook);
    place_in_empty(0, Role::King);
    place_in_empty(0, Role::Rook);
    Ok(rank.map(|role| role.expect("all eight files filled")))
}

impl Position {
    /// Chess960 start number `n` (0-959) of standard or atomic chess, with
    /// both sides free to castle with both rooks.
    pub fn chess960(n: u32, variant: Variant) -> Result<Position, Chess960Error> {
        if !variant.allows_chess960() {
            return Err(Chess960Error::UnsupportedVariant(variant));
        }
        let back = chess960_back_rank(n)?;
        let mut board = Board::empty();
        let mut castling_rooks = Bitboard::EMPTY;
        for (file, role) in File::all().zip(back) {
            for (color, back_rank, pawn_rank) in
                [(Color::White, Rank::FIRST, Rank::SECOND), (Color::Black, Rank::EIGHTH, Rank::SEVENTH)]
            {
                let sq = Square::from_coords(file, back_rank);
                board.set_piece_at(sq, role.of(color));
                board.set_piece_at(Square::from_coords(file, pawn_rank), Role::Pawn.of(color));
                if role == Role::Rook {
                    castling_rooks.set(sq);
                }
            }
        }
        let setup = Setup { board, castling_rooks, ..Setup::empty() };
        Ok(Position::from_setup(setup, variant).expect("every Chess960 start is a valid position"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(n: u32) -> String {
        chess960_back_rank(n).unwrap().iter().map(|r| r.upper_char()).collect()
    }

    #[test]
    fn known_numbers() {
        assert_eq!(letters(518), "RNBQKBNR");
        assert_eq!(letters(0), "BBQNNRKR");
        assert_eq!(letters(959), "RKRNNQBB");
        assert_eq!(letters(534), "RNBKQBNR");
        assert_eq!(letters(1), "BQNBNRKR");
        assert_eq!(letters(100), "QBBNRNKR");
        assert_eq!(Position::chess960(518, Variant::Standard).unwrap(), Position::new(Variant::Standard));
    }

    #[test]
    fn every_start_is_distinct_and_legal() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..960 {
            let rank = chess960_back_rank(n).unwrap();
            let king = rank.iter().position(|&r| r == Role::King).unwrap();
            let rooks: Vec<usize> = (0..8).filter(|&f| rank[f] == Role::Rook).collect();
            let bishops: Vec<usize> = (0..8).filter(|&f| rank[f] == Role::Bishop).collect();
            assert!(rooks[0] < king && king < rooks[1], "{n}: king between the rooks");
            assert_ne!(bishops[0] % 2, bishops[1] % 2, "{n}: bishops on opposite colours");
            assert!(seen.insert(rank), "{n}: repeated");
            let pos = Position::chess960(n, Variant::Atomic).unwrap();
            assert_eq!(pos.castling_rooks().count(), 4);
            assert_eq!(pos.legal_moves().len(), crate::perft::perft(&pos, 1) as usize);
        }
    }

    #[test]
    fn errors() {
        assert_eq!(chess960_back_rank(960), Err(Chess960Error::OutOfRange(960)));
        assert_eq!(Position::chess960(1, Variant::Fog), Err(Chess960Error::UnsupportedVariant(Variant::Fog)));
    }
}
