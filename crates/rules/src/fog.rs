//! Fog of war: what each side may see of a position. A player sees their
//! own pieces and every square their pieces could move to, computed as if
//! it were their turn; everything else is fog.

use std::fmt::Write as _;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::position::{ep_captured_square, Position};
use crate::setup::Setup;
use crate::square::{Rank, Square};

/// One side's view of a position: only the pieces on visible squares,
/// and none of the facts that would betray hidden moves (the opponent's
/// castling rights, the halfmove clock).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FogView {
    pub color: Color,
    pub visible: Bitboard,
    /// Own pieces and the enemy pieces on visible squares.
    pub board: Board,
    pub turn: Color,
    /// Own castling rooks only.
    pub castling_rooks: Bitboard,
    /// The en passant square, when it is this side's turn and a pawn may
    /// take there.
    pub ep_square: Option<Square>,
    pub fullmoves: u32,
}

/// The view as a position a FEN can describe: the fogged squares empty,
/// the halfmove clock zero (the view does not tell it).
impl From<&FogView> for Setup {
    fn from(view: &FogView) -> Setup {
        Setup {
            board: view.board,
            turn: view.turn,
            castling_rooks: view.castling_rooks,
            ep_square: view.ep_square,
            halfmoves: 0,
            fullmoves: view.fullmoves,
        }
    }
}

impl From<FogView> for Setup {
    fn from(view: FogView) -> Setup {
        Setup::from(&view)
    }
}

/// `board` as FEN with `*` on the squares not in `visible`, as a view
/// writes it.
pub fn fogged_board_fen(board: &Board, visible: Bitboard) -> String {
    let mut out = String::with_capacity(72);
    crate::fen::write_placement(&mut out, |sq| {
        if visible.contains(sq) {
            board.piece_at(sq).map(|p| p.char())
        } else {
            Some('*')
        }
    });
    out
}

impl FogView {
    /// The board as FEN with `*` on fogged squares, e.g.
    /// `********/********/8/...`.
    pub fn board_fen(&self) -> String {
        fogged_board_fen(&self.board, self.visible)
    }

    /// Board, turn, own castling rights, en passant and fullmove number,
    /// FEN-like; the halfmove field is left out on purpose.
    pub fn fen(&self) -> String {
        let mut out = self.board_fen();
        write!(out, " {} ", self.turn.char()).unwrap();
        crate::fen::write_castling(&self.board, self.castling_rooks, false, &mut out);
        match self.ep_square {
            Some(sq) => write!(out, " {sq}").unwrap(),
            None => out.push_str(" -"),
        }
        write!(out, " {}", self.fullmoves).unwrap();
        out
    }
}

impl Position {
    /// The squares `color` sees: its own pieces, every destination of its
    /// pseudo-legal moves as if it were to move (pawns: forward only onto
    /// empty squares, diagonally only onto enemy pieces or the en passant
    /// square), and a pawn it may take en passant. Castling reveals nothing
    /// more. Once a king is gone only own pieces are seen.
    pub fn visible_squares(&self, color: Color) -> Bitboard {
        let board = &self.board;
        let ours = board.by_color(color);
        if board.king_of(Color::White).is_none() || board.king_of(Color::Black).is_none() {
            return ours;
        }
        let theirs = board.by_color(!color);
        let occupied = board.occupied();
        let mut seen = ours;
        for from in ours - board.pawns() {
            let role = board.role_at(from).expect("occupied square");
            seen |= attacks::attacks(role, color, from, occupied) - ours;
        }
        let pawns = ours & board.pawns();
        let forward: i8 = if color == Color::White { 1 } else { -1 };
        let single = pawns.shift_ranks(forward) - occupied;
        let double = (single & Bitboard::relative_rank(color, Rank::THIRD)).shift_ranks(forward) - occupied;
        seen |= single | double;
        let ep = self.ep_square.filter(|_| self.turn == color);
        for from in pawns {
            let targets = attacks::pawn_attacks(color, from);
            seen |= targets & theirs;
            if let Some(ep) = ep.filter(|&ep| targets.contains(ep)) {
                seen = seen.with(ep).with(ep_captured_square(ep, color));
            }
        }
        seen
    }

    /// What `color` is shown of this position.
    pub fn fog_view(&self, color: Color) -> FogView {
        let visible = self.visible_squares(color);
        let mut board = self.board;
        board.clear_squares(!visible);
        FogView {
            color,
            visible,
            board,
            turn: self.turn,
            castling_rooks: self.castling_rooks & Bitboard::relative_rank(color, Rank::FIRST),
            ep_square: self.ep_square.filter(|_| self.turn == color),
            fullmoves: self.fullmoves,
        }
    }

    /// Pieces of `color` that stand where the opponent cannot see them.
    pub fn hidden_from_opponent(&self, color: Color) -> Bitboard {
        self.board.by_color(color) - self.visible_squares(!color)
    }
}
