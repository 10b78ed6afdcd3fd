//! Moves, and the castling vocabulary they need.

use std::fmt;

use arrayvec::ArrayVec;

use crate::color::Color;
use crate::piece::Role;
use crate::square::{File, Rank, Square};

/// Room for every move of any position [`crate::Position`] accepts. A side
/// with `k` pieces has at most `min(27 k, k (64 - k)) <= 999` moves plus
/// castling and en passant, so even setups with far too much material fit.
pub type MoveList = ArrayVec<Move, 1024>;

/// The side of the king a castling rook stands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastlingSide {
    /// Towards the a-file (O-O-O); the king ends on c, the rook on d.
    QueenSide,
    /// Towards the h-file (O-O); the king ends on g, the rook on f.
    KingSide,
}

impl CastlingSide {
    /// The side of `king` that `rook` stands on.
    pub fn of(king: Square, rook: Square) -> CastlingSide {
        if rook < king {
            CastlingSide::QueenSide
        } else {
            CastlingSide::KingSide
        }
    }

    pub const fn king_to(self, color: Color) -> Square {
        let file = match self {
            CastlingSide::QueenSide => File::C,
            CastlingSide::KingSide => File::G,
        };
        Square::from_coords(file, Rank::FIRST.relative(matches!(color, Color::Black)))
    }

    pub const fn rook_to(self, color: Color) -> Square {
        let file = match self {
            CastlingSide::QueenSide => File::D,
            CastlingSide::KingSide => File::F,
        };
        Square::from_coords(file, Rank::FIRST.relative(matches!(color, Color::Black)))
    }
}

/// How castling is written in UCI: `e1g1` (standard) or king takes own rook
/// `e1h1` (Chess960, and always understood when parsing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CastlingMode {
    #[default]
    Standard,
    Chess960,
}

impl CastlingMode {
    /// How a game writes castling: king-takes-rook in Chess960.
    pub const fn for_game(chess960: bool) -> CastlingMode {
        if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }
}

/// A move in a position. Castling is stored as the king and the rook it
/// castles with, which describes standard and Chess960 castling alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Normal { role: Role, from: Square, capture: Option<Role>, to: Square, promotion: Option<Role> },
    EnPassant { from: Square, to: Square },
    Castle { king: Square, rook: Square },
}

impl Move {
    #[inline]
    pub const fn from(self) -> Square {
        match self {
            Move::Normal { from, .. } | Move::EnPassant { from, .. } => from,
            Move::Castle { king, .. } => king,
        }
    }

    /// The destination; for castling, the rook's square.
    #[inline]
    pub const fn to(self) -> Square {
        match self {
            Move::Normal { to, .. } | Move::EnPassant { to, .. } => to,
            Move::Castle { rook, .. } => rook,
        }
    }

    /// The role of the moving piece (the king, for castling).
    #[inline]
    pub const fn role(self) -> Role {
        match self {
            Move::Normal { role, .. } => role,
            Move::EnPassant { .. } => Role::Pawn,
            Move::Castle { .. } => Role::King,
        }
    }

    /// The role of the captured piece.
    #[inline]
    pub const fn capture(self) -> Option<Role> {
        match self {
            Move::Normal { capture, .. } => capture,
            Move::EnPassant { .. } => Some(Role::Pawn),
            Move::Castle { .. } => None,
        }
    }

    #[inline]
    pub const fn is_capture(self) -> bool {
        self.capture().is_some()
    }

    #[inline]
    pub const fn promotion(self) -> Option<Role> {
        match self {
            Move::Normal { promotion, .. } => promotion,
            _ => None,
        }
    }

    pub const fn is_en_passant(self) -> bool {
        matches!(self, Move::EnPassant { .. })
    }

    pub const fn is_castle(self) -> bool {
        matches!(self, Move::Castle { .. })
    }

    /// A capture or a pawn move: resets the fifty-move counter.
    pub const fn is_zeroing(self) -> bool {
        match self {
            Move::Normal { role, capture, .. } => matches!(role, Role::Pawn) || capture.is_some(),
            Move::EnPassant { .. } => true,
            Move::Castle { .. } => false,
        }
    }

    pub fn castling_side(self) -> Option<CastlingSide> {
        match self {
            Move::Castle { king, rook } => Some(CastlingSide::of(king, rook)),
            _ => None,
        }
    }

    /// The UCI text of this move.
    pub fn to_uci(self, mode: CastlingMode) -> Uci {
        match self {
            Move::Normal { from, to, promotion, .. } => Uci { from, to, promotion },
            Move::EnPassant { from, to } => Uci { from, to, promotion: None },
            Move::Castle { king, rook } => {
                let classical = king.file() == File::E && (rook.file() == File::A || rook.file() == File::H);
                let to = if mode == CastlingMode::Standard && classical {
                    let color = if king.rank() == Rank::FIRST { Color::White } else { Color::Black };
                    CastlingSide::of(king, rook).king_to(color)
                } else {
                    rook
                };
                Uci { from: king, to, promotion: None }
            }
        }
    }
}

/// A move as written in UCI: from, to and an optional promotion letter.
/// It becomes a [`Move`] only against a position (`Position::parse_uci`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Uci {
    pub from: Square,
    pub to: Square,
    pub promotion: Option<Role>,
}

impl Uci {
    /// The move as text, `e2e4` or `e7e8q`, made in one allocation of its
    /// exact size (a move's text is made for every legal move a player is
    /// sent).
    pub fn text(&self) -> String {
        let mut text = String::with_capacity(5);
        text.push_str(self.from.name());
        text.push_str(self.to.name());
        if let Some(role) = self.promotion {
            text.push(role.char());
        }
        text
    }
}

impl fmt::Display for Uci {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.from.name())?;
        f.write_str(self.to.name())?;
        if let Some(role) = self.promotion {
            f.write_str(role.char().encode_utf8(&mut [0; 4]))?;
        }
        Ok(())
    }
}

/// Text that is not UCI move syntax.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a UCI move: {0:?} (expected from and to squares and an optional promotion, like e2e4 or e7e8q)")]
pub struct ParseUciError(pub String);

impl std::str::FromStr for Uci {
    type Err = ParseUciError;

    fn from_str(s: &str) -> Result<Uci, ParseUciError> {
        let err = || ParseUciError(s.to_owned());
        if !s.is_ascii() || !(4..=5).contains(&s.len()) {
            return Err(err());
        }
        let from: Square = s[0..2].parse().map_err(|_| err())?;
        let to: Square = s[2..4].parse().map_err(|_| err())?;
        let promotion = match s[4..].chars().next() {
            None => None,
            Some(c) => match Role::from_char(c) {
                Some(role @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)) if c.is_ascii_lowercase() => {
                    Some(role)
                }
                _ => return Err(err()),
            },
        };
        if from == to {
            return Err(err());
        }
        Ok(Uci { from, to, promotion })
    }
}
