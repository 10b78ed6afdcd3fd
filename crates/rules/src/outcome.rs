//! How games end by the rules: exploded or captured kings, mate, stalemate,
//! insufficient material, the fifty-move rule, and the flag. Repetition
//! needs the game's history and lives in [`crate::Game`].

use std::fmt;

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::position::Position;
use crate::variant::Variant;

/// Why a side won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WinReason {
    Checkmate,
    /// Atomic: the loser's king was caught in an explosion.
    KingExploded,
    /// Fog of war: the loser's king was captured.
    KingCaptured,
    /// The loser's clock ran out and the winner could still win.
    Timeout,
}

/// Why a game was drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    Stalemate,
    /// Fog of war: the side to move has no move at all.
    NoMoves,
    InsufficientMaterial,
    ThreefoldRepetition,
    /// Fifty moves (100 plies) without a capture or pawn move.
    FiftyMoves,
    /// A clock ran out but the other side could not have won.
    TimeoutVsInsufficientMaterial,
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Decisive { winner: Color, reason: WinReason },
    Draw { reason: DrawReason },
}

impl Outcome {
    pub fn winner(self) -> Option<Color> {
        match self {
            Outcome::Decisive { winner, .. } => Some(winner),
            Outcome::Draw { .. } => None,
        }
    }

    /// `1-0`, `0-1` or `1/2-1/2`, as in PGN.
    pub fn result_str(self) -> &'static str {
        match self.winner() {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.result_str())
    }
}

impl Position {
    /// The outcome this position shows on its own, in the order of
    /// `docs/rules.md`; `None` while the game goes on. Threefold repetition
    /// needs the history: see [`crate::Game::outcome`].
    pub fn outcome(&self) -> Option<Outcome> {
        let kings = (self.board.king_of(Color::White), self.board.king_of(Color::Black));
        let missing_king_reason = match self.variant {
            Variant::Fog => WinReason::KingCaptured,
            _ => WinReason::KingExploded,
        };
        match kings {
            (None, Some(_)) => return Some(Outcome::Decisive { winner: Color::Black, reason: missing_king_reason }),
            (Some(_), None) => return Some(Outcome::Decisive { winner: Color::White, reason: missing_king_reason }),
            _ => {}
        }
        if self.legal_moves().is_empty() {
            return Some(if self.is_check() {
                Outcome::Decisive { winner: !self.turn, reason: WinReason::Checkmate }
            } else if self.variant == Variant::Fog {
                Outcome::Draw { reason: DrawReason::NoMoves }
            } else {
                Outcome::Draw { reason: DrawReason::Stalemate }
            });
        }
        if self.is_insufficient_material() {
            return Some(Outcome::Draw { reason: DrawReason::InsufficientMaterial });
        }
        if self.halfmoves >= 100 {
            return Some(Outcome::Draw { reason: DrawReason::FiftyMoves });
        }
        None
    }

    /// The outcome when `flagged` runs out of time: the other side wins
    /// unless it could not have won by any sequence of moves.
    pub fn outcome_on_timeout(&self, flagged: Color) -> Outcome {
        let winner = !flagged;
        if self.has_insufficient_material(winner) {
            Outcome::Draw { reason: DrawReason::TimeoutVsInsufficientMaterial }
        } else {
            Outcome::Decisive { winner, reason: WinReason::Timeout }
        }
    }

    /// Neither side can win.
    pub fn is_insufficient_material(&self) -> bool {
        Color::ALL.into_iter().all(|color| self.has_insufficient_material(color))
    }

    /// Whether `color` cannot win by any sequence of legal moves, judged by
    /// material as python-chess does. Fog of war: never.
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        match self.variant {
            Variant::Standard => self.standard_insufficient(color),
            Variant::Atomic => self.atomic_insufficient(color),
            Variant::Fog => false,
        }
    }

    fn standard_insufficient(&self, color: Color) -> bool {
        let b = &self.board;
        let ours = b.by_color(color);
        if (ours & (b.pawns() | b.rooks() | b.queens())).any() {
            return false;
        }
        if (ours & b.knights()).any() {
            // A lone knight mates only with help from enemy minor pieces,
            // rooks or pawns that block its king.
            return ours.count() <= 2 && (b.by_color(!color) - b.kings() - b.queens()).is_empty();
        }
        if (ours & b.bishops()).any() {
            let same_color =
                (b.bishops() & Bitboard::DARK_SQUARES).is_empty() || (b.bishops() & Bitboard::LIGHT_SQUARES).is_empty();
            return same_color && b.pawns().is_empty() && b.knights().is_empty();
        }
        true
    }

    fn atomic_insufficient(&self, color: Color) -> bool {
        let b = &self.board;
        let ours = b.by_color(color);
        let theirs = b.by_color(!color);
        // Material does not matter once the enemy king is gone.
        if (theirs & b.kings()).is_empty() {
            return false;
        }
        if (ours - b.kings()).is_empty() {
            return true;
        }
        // With enemy pieces on the board, one can always explode beside
        // its own king, unless only bishops remain that never meet.
        if (theirs - b.kings()).any() {
            if b.occupied() == b.bishops() | b.kings() {
                let white_bishops = b.bishops() & b.by_color(Color::White);
                let black_bishops = b.bishops() & b.by_color(Color::Black);
                if (white_bishops & Bitboard::DARK_SQUARES).is_empty() {
                    return (black_bishops & Bitboard::LIGHT_SQUARES).is_empty();
                }
                if (white_bishops & Bitboard::LIGHT_SQUARES).is_empty() {
                    return (black_bishops & Bitboard::DARK_SQUARES).is_empty();
                }
            }
            return false;
        }
        // Against a bare king: a queen or a pawn (a future queen) mates.
        if (b.queens() | b.pawns()).any() {
            return false;
        }
        // A single minor piece or rook does not.
        if (b.knights() | b.bishops() | b.rooks()).count() == 1 {
            return true;
        }
        // Two knights alone do not either.
        if b.occupied() == b.knights() | b.kings() {
            return b.knights().count() <= 2;
        }
        false
    }
}
