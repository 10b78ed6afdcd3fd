//! Piece placement: one bitboard per role and per colour.

use std::fmt;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::{ByColor, Color};
use crate::piece::{Piece, Role};
use crate::square::{File, Rank, Square};

/// Where the pieces stand. Every square holds at most one piece; the sets
/// are kept consistent by the methods, never by callers.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: ByColor<Bitboard>,
    occupied: Bitboard,
}

impl Default for Board {
    fn default() -> Board {
        Board::empty()
    }
}

impl Board {
    pub const fn empty() -> Board {
        Board {
            by_role: [Bitboard::EMPTY; 6],
            by_color: ByColor::new(Bitboard::EMPTY, Bitboard::EMPTY),
            occupied: Bitboard::EMPTY,
        }
    }

    /// The standard starting placement.
    pub fn standard() -> Board {
        let mut board = Board::empty();
        let back =
            [Role::Rook, Role::Knight, Role::Bishop, Role::Queen, Role::King, Role::Bishop, Role::Knight, Role::Rook];
        for (file, role) in File::all().zip(back) {
            board.set_piece_at(Square::from_coords(file, Rank::FIRST), role.of(Color::White));
            board.set_piece_at(Square::from_coords(file, Rank::SECOND), Role::Pawn.of(Color::White));
            board.set_piece_at(Square::from_coords(file, Rank::SEVENTH), Role::Pawn.of(Color::Black));
            board.set_piece_at(Square::from_coords(file, Rank::EIGHTH), role.of(Color::Black));
        }
        board
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color]
    }

    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    #[inline]
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        self.by_role[piece.role.index()] & self.by_color[piece.color]
    }

    #[inline]
    pub fn pawns(&self) -> Bitboard {
        self.by_role(Role::Pawn)
    }

    #[inline]
    pub fn knights(&self) -> Bitboard {
        self.by_role(Role::Knight)
    }

    #[inline]
    pub fn bishops(&self) -> Bitboard {
        self.by_role(Role::Bishop)
    }

    #[inline]
    pub fn rooks(&self) -> Bitboard {
        self.by_role(Role::Rook)
    }

    #[inline]
    pub fn queens(&self) -> Bitboard {
        self.by_role(Role::Queen)
    }

    #[inline]
    pub fn kings(&self) -> Bitboard {
        self.by_role(Role::King)
    }

    #[inline]
    pub fn rooks_and_queens(&self) -> Bitboard {
        self.rooks() | self.queens()
    }

    #[inline]
    pub fn bishops_and_queens(&self) -> Bitboard {
        self.bishops() | self.queens()
    }

    /// The king of `color`, if it has exactly one.
    #[inline]
    pub fn king_of(&self, color: Color) -> Option<Square> {
        (self.kings() & self.by_color[color]).single_square()
    }

    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color.white.contains(sq) {
            Some(Color::White)
        } else if self.by_color.black.contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied.contains(sq) {
            return None;
        }
        Role::ALL.into_iter().find(|role| self.by_role[role.index()].contains(sq))
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Some(Piece { role: self.role_at(sq)?, color: self.color_at(sq)? })
    }

    /// Puts `piece` on `sq`, replacing whatever stood there.
    pub fn set_piece_at(&mut self, sq: Square, piece: Piece) {
        self.discard_piece_at(sq);
        self.put(sq, piece);
    }

    /// Puts `piece` on an empty square.
    #[inline]
    pub(crate) fn put(&mut self, sq: Square, piece: Piece) {
        debug_assert!(!self.occupied.contains(sq));
        self.by_role[piece.role.index()].set(sq);
        self.by_color[piece.color].set(sq);
        self.occupied.set(sq);
    }

    pub fn remove_piece_at(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.piece_at(sq)?;
        self.discard_piece_at(sq);
        Some(piece)
    }

    #[inline]
    pub fn discard_piece_at(&mut self, sq: Square) {
        self.clear_squares(Bitboard::from_square(sq));
    }

    /// Removes every piece on `squares`.
    #[inline]
    pub(crate) fn clear_squares(&mut self, squares: Bitboard) {
        let keep = !squares;
        for bb in &mut self.by_role {
            *bb &= keep;
        }
        self.by_color.white &= keep;
        self.by_color.black &= keep;
        self.occupied &= keep;
    }

    /// Moves a piece of `role` and `color` from `from` to the empty `to`.
    #[inline]
    pub(crate) fn move_piece(&mut self, color: Color, role: Role, from: Square, to: Square) {
        let both = Bitboard::from_square(from) | to;
        self.by_role[role.index()] ^= both;
        self.by_color[color] ^= both;
        self.occupied ^= both;
    }

    /// Every piece of `attacker` that attacks `sq` when `occupied` blocks the
    /// sliders. Pieces are taken from the board as it is; callers that
    /// imagine pieces removed mask the result.
    #[inline]
    pub fn attackers(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        ((attacks::rook_attacks(sq, occupied) & self.rooks_and_queens())
            | (attacks::bishop_attacks(sq, occupied) & self.bishops_and_queens())
            | (attacks::knight_attacks(sq) & self.knights())
            | (attacks::king_attacks(sq) & self.kings())
            | (attacks::pawn_attacks(!attacker, sq) & self.pawns()))
            & self.by_color[attacker]
    }

    /// Pieces of either colour that alone stand between `king` and an enemy
    /// slider aimed at it: moving one of ours off that line exposes the king.
    #[inline]
    pub fn slider_blockers(&self, king: Square, enemy: Color, occupied: Bitboard) -> Bitboard {
        let snipers = ((attacks::rook_attacks(king, Bitboard::EMPTY) & self.rooks_and_queens())
            | (attacks::bishop_attacks(king, Bitboard::EMPTY) & self.bishops_and_queens()))
            & self.by_color[enemy];
        let mut blockers = Bitboard::EMPTY;
        for sniper in snipers {
            let between = attacks::between(king, sniper) & occupied;
            if !between.more_than_one() {
                blockers |= between;
            }
        }
        blockers
    }

    /// Pieces in placement order, a1 first.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied.into_iter().filter_map(move |sq| Some((sq, self.piece_at(sq)?)))
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in Rank::all().rev() {
            for file in File::all() {
                let sq = Square::from_coords(file, rank);
                let c = self.piece_at(sq).map_or('.', Piece::char);
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
