//! Legal move generation. The three variants share the piece generators
//! and differ only in how they decide legality: standard chess with pins and
//! check masks, atomic with an explosion test for captures, fog of war with
//! none at all.

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::moves::{CastlingSide, Move, MoveList};
use crate::piece::Role;
use crate::position::{ep_captured_square, Position};
use crate::square::{Rank, Square};
use crate::variant::Variant;

impl Position {
    /// Every legal move. Empty when the game is decided by a missing king.
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = MoveList::new();
        self.generate_legal_moves(&mut moves);
        moves
    }

    /// Appends every legal move to `moves`; hot loops keep one list per
    /// ply instead of moving a fresh one around.
    pub fn generate_legal_moves(&self, moves: &mut MoveList) {
        match self.variant {
            Variant::Standard => gen_standard(self, Bitboard::FULL, moves),
            Variant::Atomic => gen_atomic(self, moves),
            Variant::Fog => gen_fog(self, moves),
        }
    }

    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    /// Appends every legal capture (en passant included) to `moves`, for
    /// quiescence search: cheaper than generating every move and filtering.
    pub fn generate_legal_captures(&self, moves: &mut MoveList) {
        let board = &self.board;
        let king = board.king_of(self.turn);
        match (self.variant, king, board.king_of(!self.turn)) {
            (Variant::Atomic, Some(king), Some(their_king)) => gen_atomic_captures(self, king, their_king, moves),
            (Variant::Atomic, _, _) => {}
            (Variant::Standard, _, _) => gen_standard(self, board.by_color(!self.turn), moves),
            (Variant::Fog, _, _) => {
                let start = moves.len();
                gen_fog(self, moves);
                retain_from(moves, start, Move::is_capture);
            }
        }
    }

    /// Whether the side to move may legally take en passant onto `ep`.
    pub(crate) fn has_legal_en_passant(&self, ep: Square) -> bool {
        let us = self.turn;
        let board = &self.board;
        let capturers = attacks::pawn_attacks(!us, ep) & board.by_piece(Role::Pawn.of(us));
        let (Some(king), their_king) = (board.king_of(us), board.king_of(!us)) else {
            return false;
        };
        capturers.into_iter().map(|from| Move::EnPassant { from, to: ep }).any(|m| match (self.variant, their_king) {
            (Variant::Standard, _) => ep_is_safe(self, king, m),
            (Variant::Atomic, Some(their_king)) => {
                let connected = attacks::king_attacks(king).contains(their_king);
                atomic_capture_is_legal(self, king, their_king, connected, m)
            }
            (Variant::Fog, Some(_)) => true,
            (_, None) => false,
        })
    }

    /// Legal captures only (atomic: every explosion), for quiescence search.
    pub fn capture_moves(&self) -> MoveList {
        let mut moves = self.legal_moves();
        moves.retain(|m| m.is_capture());
        moves
    }
}

#[inline]
fn push_pawn_move(pos: &Position, from: Square, to: Square, moves: &mut MoveList) {
    let capture = if pos.board.occupied().contains(to) { pos.board.role_at(to) } else { None };
    if Bitboard::BACKRANKS.contains(to) {
        for promotion in Role::PROMOTIONS {
            moves.push(Move::Normal { role: Role::Pawn, from, capture, to, promotion: Some(promotion) });
        }
    } else {
        moves.push(Move::Normal { role: Role::Pawn, from, capture, to, promotion: None });
    }
}

/// Pseudo-legal moves of every piece but the king on `from_mask` to
/// `target` (which must exclude our own pieces). Pawns push only onto empty
/// target squares and capture only onto enemy ones. No en passant.
fn gen_non_king(pos: &Position, from_mask: Bitboard, target: Bitboard, moves: &mut MoveList) {
    let board = &pos.board;
    let us = pos.turn;
    let ours = board.by_color(us) & from_mask;
    let theirs = board.by_color(!us);
    let occupied = board.occupied();

    for from in ours & board.knights() {
        push_piece_moves(pos, Role::Knight, from, attacks::knight_attacks(from) & target, moves);
    }
    for from in ours & board.bishops() {
        push_piece_moves(pos, Role::Bishop, from, attacks::bishop_attacks(from, occupied) & target, moves);
    }
    for from in ours & board.rooks() {
        push_piece_moves(pos, Role::Rook, from, attacks::rook_attacks(from, occupied) & target, moves);
    }
    for from in ours & board.queens() {
        push_piece_moves(pos, Role::Queen, from, attacks::queen_attacks(from, occupied) & target, moves);
    }

    let pawns = ours & board.pawns();
    for from in pawns {
        for to in attacks::pawn_attacks(us, from) & theirs & target {
            push_pawn_move(pos, from, to, moves);
        }
    }
    let forward: i8 = if us == Color::White { 8 } else { -8 };
    let single = pawns.shift_ranks(forward.signum()) & !occupied;
    let double = (single & Bitboard::relative_rank(us, Rank::THIRD)).shift_ranks(forward.signum()) & !occupied & target;
    for to in single & target {
        push_pawn_move(pos, Square::new_unchecked((to.index() as i8 - forward) as u8), to, moves);
    }
    for to in double {
        let from = Square::new_unchecked((to.index() as i8 - 2 * forward) as u8);
        moves.push(Move::Normal { role: Role::Pawn, from, capture: None, to, promotion: None });
    }
}

#[inline]
fn push_piece_moves(pos: &Position, role: Role, from: Square, targets: Bitboard, moves: &mut MoveList) {
    let theirs = pos.board.by_color(!pos.turn);
    for to in targets {
        let capture = if theirs.contains(to) { pos.board.role_at(to) } else { None };
        moves.push(Move::Normal { role, from, capture, to, promotion: None });
    }
}

fn push_king_move(pos: &Position, from: Square, to: Square, moves: &mut MoveList) {
    let capture = if pos.board.occupied().contains(to) { pos.board.role_at(to) } else { None };
    moves.push(Move::Normal { role: Role::King, from, capture, to, promotion: None });
}

/// En passant captures, before any legality test.
fn gen_en_passant(pos: &Position, moves: &mut MoveList) {
    if let Some(to) = pos.ep_square {
        let capturers = attacks::pawn_attacks(!pos.turn, to) & pos.board.by_piece(Role::Pawn.of(pos.turn));
        for from in capturers {
            moves.push(Move::EnPassant { from, to });
        }
    }
}

/// Castling moves whose squares are empty; `king_safe(square, occupied)`
/// decides whether the king may stand on each square of its path.
fn gen_castling(pos: &Position, king: Square, moves: &mut MoveList, king_safe: impl Fn(Square, Bitboard) -> bool) {
    let us = pos.turn;
    let occupied = pos.board.occupied();
    for rook in pos.castling_rooks & pos.board.by_color(us) {
        let side = CastlingSide::of(king, rook);
        let (king_to, rook_to) = (side.king_to(us), side.rook_to(us));
        let king_path = attacks::between(king, king_to).with(king_to);
        let must_be_empty = (king_path | attacks::between(rook, rook_to).with(rook_to)) - king - rook;
        if (must_be_empty & occupied).any() {
            continue;
        }
        // The start and the squares passed over, then the destination with
        // the rook already moved.
        let without_king = occupied - king;
        if !attacks::between(king, king_to).with(king).into_iter().all(|sq| king_safe(sq, without_king)) {
            continue;
        }
        let after = (occupied - king - rook).with(rook_to);
        if king_safe(king_to, after) {
            moves.push(Move::Castle { king, rook });
        }
    }
}

/// Keeps the moves from `start` on that pass `keep` (order not kept).
fn retain_from(moves: &mut MoveList, start: usize, keep: impl Fn(Move) -> bool) {
    let mut i = start;
    while i < moves.len() {
        if keep(moves[i]) {
            i += 1;
        } else {
            moves.swap_remove(i);
        }
    }
}

/// Standard chess: legal moves whose destination is in `only` (every
/// square, or the enemy pieces for captures). En passant, a capture, is
/// always included; castling only when every square is asked for.
fn gen_standard(pos: &Position, only: Bitboard, moves: &mut MoveList) {
    let board = &pos.board;
    let us = pos.turn;
    let them = !us;
    let Some(king) = board.king_of(us) else { return };
    let ours = board.by_color(us);
    let occupied = board.occupied();
    let checkers = board.attackers(king, them, occupied);
    let pinned = board.slider_blockers(king, them, occupied) & ours;
    let king_safe = |sq: Square, occ: Bitboard| board.attackers(sq, them, occ).is_empty();

    let target = match checkers.single_square() {
        _ if checkers.is_empty() => !ours,
        Some(checker) => attacks::between(king, checker).with(checker),
        None => Bitboard::EMPTY,
    } & only;
    if target.any() {
        gen_non_king(pos, ours - board.kings() - pinned, target, moves);
        if checkers.is_empty() {
            for from in pinned {
                gen_non_king(pos, Bitboard::from_square(from), target & attacks::line(king, from), moves);
            }
        }
    }
    for to in (attacks::king_attacks(king) - ours) & only {
        if king_safe(to, occupied - king) {
            push_king_move(pos, king, to, moves);
        }
    }
    if checkers.is_empty() && only == Bitboard::FULL {
        gen_castling(pos, king, moves, king_safe);
    }

    let start = moves.len();
    gen_en_passant(pos, moves);
    retain_from(moves, start, |m| ep_is_safe(pos, king, m));
}

/// Standard chess: whether an en passant capture leaves the king safe.
fn ep_is_safe(pos: &Position, king: Square, m: Move) -> bool {
    let board = &pos.board;
    let captured = ep_captured_square(m.to(), pos.turn);
    let occupied = (board.occupied() - m.from() - captured).with(m.to());
    (board.attackers(king, !pos.turn, occupied) - captured).is_empty()
}

fn gen_atomic(pos: &Position, moves: &mut MoveList) {
    let board = &pos.board;
    let us = pos.turn;
    let them = !us;
    let (Some(king), Some(their_king)) = (board.king_of(us), board.king_of(them)) else {
        return;
    };
    let ours = board.by_color(us);
    let occupied = board.occupied();
    let connected = attacks::king_attacks(king).contains(their_king);

    gen_atomic_captures(pos, king, their_king, moves);

    // Quiet moves of other pieces: ordinary pins and check masks, with kings
    // never giving check and connected kings never in check.
    let empty = !occupied;
    if connected {
        gen_non_king(pos, ours - board.kings(), empty, moves);
    } else {
        let checkers = board.attackers(king, them, occupied) - board.kings();
        let pinned = board.slider_blockers(king, them, occupied) & ours;
        let target = match checkers.single_square() {
            _ if checkers.is_empty() => empty,
            Some(checker) => attacks::between(king, checker),
            None => Bitboard::EMPTY,
        };
        if target.any() {
            gen_non_king(pos, ours - board.kings() - pinned, target, moves);
            for from in pinned {
                gen_non_king(pos, Bitboard::from_square(from), target & attacks::line(king, from), moves);
            }
        }
    }

    // The king never captures; it may step next to the enemy king even onto
    // an attacked square.
    let near_their_king = attacks::king_attacks(their_king);
    let king_safe = |sq: Square, occ: Bitboard| {
        near_their_king.contains(sq) || (board.attackers(sq, them, occ) - board.kings()).is_empty()
    };
    for to in attacks::king_attacks(king) & empty {
        if king_safe(to, occupied - king) {
            moves.push(Move::Normal { role: Role::King, from: king, capture: None, to, promotion: None });
        }
    }
    gen_castling(pos, king, moves, king_safe);
}

/// Atomic captures: every one explodes, so each is tested on its own.
fn gen_atomic_captures(pos: &Position, king: Square, their_king: Square, moves: &mut MoveList) {
    let board = &pos.board;
    let connected = attacks::king_attacks(king).contains(their_king);
    let start = moves.len();
    gen_non_king(pos, board.by_color(pos.turn) - board.kings(), board.by_color(!pos.turn), moves);
    gen_en_passant(pos, moves);
    retain_from(moves, start, |m| atomic_capture_is_legal(pos, king, their_king, connected, m));
}

/// Atomic: plays the explosion on bitboards and checks that our king
/// survives and is not left in check (unless the enemy king is gone).
#[inline]
fn atomic_capture_is_legal(pos: &Position, king: Square, their_king: Square, connected: bool, m: Move) -> bool {
    let board = &pos.board;
    let to = m.to();
    let blast = attacks::king_attacks(to);
    if blast.contains(king) {
        return false;
    }
    if blast.with(to).contains(their_king) {
        return true;
    }
    if connected {
        // Neither king moved or exploded: they still touch.
        return true;
    }
    let captured = if m.is_en_passant() { ep_captured_square(to, pos.turn) } else { to };
    let occupied = board.occupied();
    let removed = (blast & (occupied - board.pawns())) | m.from() | to | captured;
    let remaining = occupied - removed;
    (board.attackers(king, !pos.turn, remaining) & remaining).is_empty()
}

fn gen_fog(pos: &Position, moves: &mut MoveList) {
    let board = &pos.board;
    let us = pos.turn;
    let (Some(king), Some(_)) = (board.king_of(us), board.king_of(!us)) else {
        return;
    };
    let ours = board.by_color(us);
    gen_non_king(pos, ours - board.kings(), !ours, moves);
    for to in attacks::king_attacks(king) - ours {
        push_king_move(pos, king, to, moves);
    }
    gen_castling(pos, king, moves, |_, _| true);
    gen_en_passant(pos, moves);
}
