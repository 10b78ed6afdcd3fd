//! A validated position of one variant, and playing moves on it.

use arrayvec::ArrayVec;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::moves::{CastlingMode, CastlingSide, Move, Uci};
use crate::piece::{Piece, Role};
use crate::setup::Setup;
use crate::square::{Rank, Square};
use crate::variant::Variant;

/// Why a [`Setup`] is not a position of the chosen variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("{0} has no king")]
    MissingKing(Color),
    #[error("neither side has a king")]
    NoKings,
    #[error("{0} has more than one king")]
    TooManyKings(Color),
    #[error("pawn on {0}: pawns never stand on the first or eighth rank")]
    PawnOnBackRank(Square),
    #[error("castling right for {0}: no rook of the side there, or no king beside it on the back rank, or two rights on one side")]
    InvalidCastlingRight(Square),
    #[error("en passant square {0} does not follow a double pawn push by the side that just moved")]
    InvalidEpSquare(Square),
    #[error("{0} is to move but the king of {1} can already be taken")]
    OppositeCheck(Color, Color),
    #[error("the fullmove number must be at least 1")]
    InvalidFullmoves,
}

/// A move that is not legal in the position it was played in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {uci} in {fen}")]
pub struct IllegalMove {
    pub uci: String,
    pub fen: String,
}

/// What a move changed on the board, so a server can tell each player what
/// they may see of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveEffects {
    pub mover: Color,
    pub role: Role,
    pub from: Square,
    /// Where the moving piece landed (the king's square, for castling),
    /// even if an explosion then removed it.
    pub to: Square,
    /// The captured piece and its square (differs from `to` en passant).
    pub captured: Option<(Square, Piece)>,
    /// Atomic: the centre of the explosion, if the move captured.
    pub explosion: Option<Square>,
    /// Atomic: every other piece the explosion removed, the capturer
    /// included, the captured piece excluded.
    pub exploded: ArrayVec<(Square, Piece), 9>,
    pub promotion: Option<Role>,
    /// Castling: the rook's start and end squares.
    pub castle_rook: Option<(Square, Square)>,
}

impl MoveEffects {
    /// The pieces of `color` the move removed from the board: the captured
    /// piece and, in atomic, those caught in the explosion.
    pub fn removed_pieces_of(&self, color: Color) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.captured.iter().chain(self.exploded.iter()).copied().filter(move |(_, piece)| piece.color == color)
    }

    /// Every square whose content the move changed.
    pub fn changed_squares(&self) -> Bitboard {
        let mut squares = Bitboard::from_square(self.from) | self.to;
        if let Some((sq, _)) = self.captured {
            squares |= sq;
        }
        for &(sq, _) in &self.exploded {
            squares |= sq;
        }
        if let Some((from, to)) = self.castle_rook {
            squares = squares | from | to;
        }
        squares
    }
}

/// A legal position of one variant. Built only through [`Position::from_setup`]
/// (or FEN), so every method can rely on the invariants checked there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) board: Board,
    pub(crate) turn: Color,
    pub(crate) castling_rooks: Bitboard,
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
    pub(crate) variant: Variant,
}

impl Position {
    /// The standard starting position of `variant`.
    pub fn new(variant: Variant) -> Position {
        Position::from_setup(Setup::standard(), variant).expect("the standard start is valid in every variant")
    }

    /// Checks `setup` against the rules of `variant`. En passant squares
    /// that no pawn can use are dropped, so equal positions compare equal.
    pub fn from_setup(setup: Setup, variant: Variant) -> Result<Position, PositionError> {
        let board = setup.board;
        if setup.fullmoves == 0 {
            return Err(PositionError::InvalidFullmoves);
        }
        for color in Color::ALL {
            if (board.kings() & board.by_color(color)).more_than_one() {
                return Err(PositionError::TooManyKings(color));
            }
        }
        let kings = (board.king_of(Color::White), board.king_of(Color::Black));
        match (variant, kings) {
            (_, (None, None)) => return Err(PositionError::NoKings),
            (Variant::Standard, (None, _)) => return Err(PositionError::MissingKing(Color::White)),
            (Variant::Standard, (_, None)) => return Err(PositionError::MissingKing(Color::Black)),
            _ => {}
        }
        if let Some(sq) = (board.pawns() & Bitboard::BACKRANKS).first() {
            return Err(PositionError::PawnOnBackRank(sq));
        }
        validate_castling(&board, setup.castling_rooks)?;

        let mut pos = Position {
            board,
            turn: setup.turn,
            castling_rooks: setup.castling_rooks,
            ep_square: None,
            halfmoves: setup.halfmoves,
            fullmoves: setup.fullmoves,
            variant,
        };
        if let Some(ep) = setup.ep_square {
            pos.ep_square = validate_ep_square(&board, setup.turn, ep)?.filter(|&ep| pos.has_legal_en_passant(ep));
        }
        let them = !pos.turn;
        // Atomic: a move that explodes the enemy king may leave our own king
        // attacked; with the side to move kingless the game is already over.
        let decided = board.king_of(pos.turn).is_none();
        if variant.has_check() && !decided && pos.king_attackers(them).any() {
            return Err(PositionError::OppositeCheck(pos.turn, them));
        }
        Ok(pos)
    }

    /// The unvalidated description of this position.
    pub fn to_setup(&self) -> Setup {
        Setup {
            board: self.board,
            turn: self.turn,
            castling_rooks: self.castling_rooks,
            ep_square: self.ep_square,
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
        }
    }

    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }

    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Squares of the rooks that keep their castling right.
    #[inline]
    pub fn castling_rooks(&self) -> Bitboard {
        self.castling_rooks
    }

    /// The rook `color` may castle with on `side`.
    pub fn castling_rook(&self, color: Color, side: CastlingSide) -> Option<Square> {
        let king = self.board.king_of(color)?;
        let rooks = self.castling_rooks & Bitboard::relative_rank(color, Rank::FIRST);
        rooks.into_iter().find(|&rook| CastlingSide::of(king, rook) == side)
    }

    /// The en passant target square, kept only when the side to move has a
    /// legal en passant capture there (so it counts for repetition exactly
    /// when it changes the moves available).
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    #[inline]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    #[inline]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// Plies played since the position with fullmove 1 and white to move.
    pub fn ply(&self) -> u32 {
        (self.fullmoves - 1).saturating_mul(2).saturating_add(u32::from(self.turn == Color::Black))
    }

    /// Whether the two kings stand side by side (atomic: then neither is in
    /// check).
    pub fn kings_connected(&self) -> bool {
        match (self.board.king_of(Color::White), self.board.king_of(Color::Black)) {
            (Some(w), Some(b)) => attacks::king_attacks(w).contains(b),
            _ => false,
        }
    }

    /// Pieces giving check to `color`'s king under this variant's rules:
    /// atomic kings never give check and connected kings are never in check;
    /// fog of war has no check.
    pub fn king_attackers(&self, color: Color) -> Bitboard {
        let Some(king) = self.board.king_of(color) else {
            return Bitboard::EMPTY;
        };
        let attackers = self.board.attackers(king, !color, self.board.occupied());
        match self.variant {
            Variant::Standard => attackers,
            Variant::Atomic if self.kings_connected() => Bitboard::EMPTY,
            Variant::Atomic => attackers - self.board.kings(),
            Variant::Fog => Bitboard::EMPTY,
        }
    }

    /// Pieces checking the side to move.
    pub fn checkers(&self) -> Bitboard {
        self.king_attackers(self.turn)
    }

    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }

    /// Turns UCI text into the legal move it names, accepting castling both
    /// as `e1g1` and as king takes rook.
    pub fn parse_uci(&self, uci: &Uci) -> Option<Move> {
        self.legal_moves().into_iter().find(|m| {
            let matches_mode = |mode| m.to_uci(mode) == *uci;
            matches_mode(CastlingMode::Standard) || matches_mode(CastlingMode::Chess960)
        })
    }

    /// Plays a legal move, returning the new position and what changed.
    pub fn play(&self, m: Move) -> Result<(Position, MoveEffects), IllegalMove> {
        if !self.is_legal(m) {
            return Err(IllegalMove {
                uci: m.to_uci(CastlingMode::Chess960).to_string(),
                fen: crate::fen::Fen::from_position(self).to_string(),
            });
        }
        let effects = self.effects_of(m);
        let mut next = *self;
        next.play_unchecked(m);
        Ok((next, effects))
    }

    pub(crate) fn effects_of(&self, m: Move) -> MoveEffects {
        let us = self.turn;
        let mut effects = MoveEffects {
            mover: us,
            role: m.role(),
            from: m.from(),
            to: m.to(),
            captured: None,
            explosion: None,
            exploded: ArrayVec::new(),
            promotion: m.promotion(),
            castle_rook: None,
        };
        match m {
            Move::Castle { king, rook } => {
                let side = CastlingSide::of(king, rook);
                effects.to = side.king_to(us);
                effects.castle_rook = Some((rook, side.rook_to(us)));
            }
            Move::EnPassant { to, .. } => {
                let sq = ep_captured_square(to, us);
                effects.captured = Some((sq, Role::Pawn.of(!us)));
            }
            Move::Normal { capture: Some(role), to, .. } => effects.captured = Some((to, role.of(!us))),
            Move::Normal { capture: None, .. } => {}
        }
        if self.variant == Variant::Atomic && m.is_capture() {
            let to = m.to();
            effects.explosion = Some(to);
            effects.exploded.push((to, m.promotion().unwrap_or(m.role()).of(us)));
            let blast = attacks::king_attacks(to) & (self.board.occupied() - self.board.pawns() - m.from());
            for sq in blast {
                if let Some(piece) = self.board.piece_at(sq) {
                    effects.exploded.push((sq, piece));
                }
            }
        }
        effects
    }

    /// Plays `m` without checking that it is legal. `m` must come from this
    /// position's move generator (or [`Position::is_legal`]); anything else
    /// leaves an inconsistent position.
    pub fn play_unchecked(&mut self, m: Move) {
        let us = self.turn;
        self.ep_square = None;
        // Counters saturate: a FEN may start them anywhere a u32 reaches.
        self.halfmoves = if m.is_zeroing() { 0 } else { self.halfmoves.saturating_add(1) };
        match m {
            Move::Normal { role, from, capture, to, promotion } => {
                if role == Role::King {
                    self.castling_rooks -= Bitboard::relative_rank(us, Rank::FIRST);
                }
                self.castling_rooks = self.castling_rooks - from - to;
                if capture == Some(Role::King) {
                    // Fog of war: a captured king takes its side's rights along.
                    self.castling_rooks -= Bitboard::relative_rank(!us, Rank::FIRST);
                }
                if capture.is_some() {
                    self.board.discard_piece_at(to);
                }
                match promotion {
                    None => self.board.move_piece(us, role, from, to),
                    Some(promoted) => {
                        self.board.discard_piece_at(from);
                        self.board.put(to, promoted.of(us));
                    }
                }
                if role == Role::Pawn && from.distance(to) == 2 {
                    let skipped = Square::new_unchecked(((from.index() + to.index()) / 2) as u8);
                    if (attacks::pawn_attacks(us, skipped) & self.board.pawns() & self.board.by_color(!us)).any() {
                        // Confirmed or dropped below, once it is their turn.
                        self.ep_square = Some(skipped);
                    }
                }
                if capture.is_some() && self.variant == Variant::Atomic {
                    self.explode(to);
                }
            }
            Move::EnPassant { from, to } => {
                self.board.discard_piece_at(ep_captured_square(to, us));
                self.board.move_piece(us, Role::Pawn, from, to);
                if self.variant == Variant::Atomic {
                    self.explode(to);
                }
            }
            Move::Castle { king, rook } => {
                let side = CastlingSide::of(king, rook);
                self.board.discard_piece_at(king);
                self.board.discard_piece_at(rook);
                self.board.put(side.king_to(us), Role::King.of(us));
                self.board.put(side.rook_to(us), Role::Rook.of(us));
                self.castling_rooks -= Bitboard::relative_rank(us, Rank::FIRST);
            }
        }
        if us == Color::Black {
            self.fullmoves = self.fullmoves.saturating_add(1);
        }
        self.turn = !us;
        if let Some(ep) = self.ep_square {
            if !self.has_legal_en_passant(ep) {
                self.ep_square = None;
            }
        }
    }

    /// Passes the turn without moving (a null move, for search pruning).
    /// Refused while the side to move is in check, since the other side
    /// could then take the king.
    pub fn play_null(&mut self) -> bool {
        if self.is_check() {
            return false;
        }
        self.ep_square = None;
        self.halfmoves = self.halfmoves.saturating_add(1);
        if self.turn == Color::Black {
            self.fullmoves = self.fullmoves.saturating_add(1);
        }
        self.turn = !self.turn;
        true
    }

    /// Atomic: removes the capturer on `center` and every non-pawn piece
    /// around it, with the castling rights of any exploded rook or king.
    fn explode(&mut self, center: Square) {
        let blast = (attacks::king_attacks(center) & (self.board.occupied() - self.board.pawns())).with(center);
        for color in Color::ALL {
            if (blast & self.board.kings() & self.board.by_color(color)).any() {
                self.castling_rooks -= Bitboard::relative_rank(color, Rank::FIRST);
            }
        }
        self.castling_rooks -= blast;
        self.board.clear_squares(blast);
    }
}

/// The square of the pawn an en passant capture onto `to` by `us` removes.
#[inline]
pub(crate) fn ep_captured_square(to: Square, us: Color) -> Square {
    Square::new_unchecked(match us {
        Color::White => to.index() as u8 - 8,
        Color::Black => to.index() as u8 + 8,
    })
}

fn validate_castling(board: &Board, rooks: Bitboard) -> Result<(), PositionError> {
    for color in Color::ALL {
        let back = Bitboard::relative_rank(color, Rank::FIRST);
        let mut sides_seen = [false; 2];
        for rook in rooks & back {
            let ok_rook = (board.rooks() & board.by_color(color)).contains(rook);
            let king = board.king_of(color).filter(|&k| back.contains(k));
            let Some(king) = king.filter(|_| ok_rook) else {
                return Err(PositionError::InvalidCastlingRight(rook));
            };
            let side = CastlingSide::of(king, rook) as usize;
            if std::mem::replace(&mut sides_seen[side], true) {
                return Err(PositionError::InvalidCastlingRight(rook));
            }
        }
    }
    if let Some(sq) = (rooks - Bitboard::BACKRANKS).first() {
        return Err(PositionError::InvalidCastlingRight(sq));
    }
    Ok(())
}

/// Checks that `ep` is the square a pawn of the side not to move just
/// skipped; keeps it only if a pawn of the side to move attacks it (the
/// caller then keeps it only if such a capture is legal).
fn validate_ep_square(board: &Board, turn: Color, ep: Square) -> Result<Option<Square>, PositionError> {
    let them = !turn;
    let expected_rank = Rank::SIXTH.relative(turn == Color::Black);
    let pushed = ep_captured_square(ep, turn);
    // The pushed pawn came from the square beyond `ep`.
    let origin = Square::new_unchecked((2 * ep.index() - pushed.index()) as u8);
    let valid = ep.rank() == expected_rank
        && !board.occupied().contains(ep)
        && !board.occupied().contains(origin)
        && board.by_piece(Role::Pawn.of(them)).contains(pushed);
    if !valid {
        return Err(PositionError::InvalidEpSquare(ep));
    }
    let capturers = attacks::pawn_attacks(them, ep) & board.by_piece(Role::Pawn.of(turn));
    Ok(capturers.any().then_some(ep))
}
