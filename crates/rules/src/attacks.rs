//! Attack tables. Steppers (king, knight, pawn) and the line tables are
//! computed by `const fn` at compile time; sliders use magic bitboards whose
//! tables `build.rs` generates.

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::piece::Role;
use crate::square::Square;

/// One square's entry in a magic table: `((occupied & mask) * factor) >> shift`
/// indexes the attacks stored from `offset` on.
#[derive(Debug)]
pub(crate) struct Magic {
    mask: u64,
    factor: u64,
    shift: u32,
    offset: usize,
}

include!(concat!(env!("OUT_DIR"), "/magics.rs"));

const fn step_attacks(sq: usize, deltas: &[(i32, i32)]) -> u64 {
    let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
    let mut attacks = 0;
    let mut i = 0;
    while i < deltas.len() {
        let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
        if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
            attacks |= 1 << (nr * 8 + nf);
        }
        i += 1;
    }
    attacks
}

const fn step_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        table[sq] = step_attacks(sq, deltas);
        sq += 1;
    }
    table
}

const KING_DELTAS: [(i32, i32); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];
const KNIGHT_DELTAS: [(i32, i32); 8] = [(-2, -1), (-1, -2), (1, -2), (2, -1), (-2, 1), (-1, 2), (1, 2), (2, 1)];

static KING_ATTACKS: [u64; 64] = step_table(&KING_DELTAS);
static KNIGHT_ATTACKS: [u64; 64] = step_table(&KNIGHT_DELTAS);
static PAWN_ATTACKS: [[u64; 64]; 2] = [step_table(&[(-1, 1), (1, 1)]), step_table(&[(-1, -1), (1, -1)])];

/// Squares a king on `sq` attacks: its eight neighbours.
#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING_ATTACKS[sq.index()])
}

#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT_ATTACKS[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks (its capture squares).
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN_ATTACKS[color.index()][sq.index()])
}

#[inline]
fn magic_lookup(magic: &Magic, occupied: Bitboard) -> Bitboard {
    let index = ((occupied.0 & magic.mask).wrapping_mul(magic.factor) >> magic.shift) as usize;
    Bitboard(SLIDER_ATTACKS[magic.offset + index])
}

#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq.index()], occupied)
}

#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq.index()], occupied)
}

#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a piece of `role` and `color` on `sq` attacks.
#[inline]
pub fn attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

const fn sign(x: i32) -> i32 {
    if x > 0 {
        1
    } else if x < 0 {
        -1
    } else {
        0
    }
}

/// For aligned squares: the whole line through both (`whole`) or the
/// squares strictly between them. Empty when they are not aligned.
const fn line_through(a: usize, b: usize, whole: bool) -> u64 {
    let (af, ar, bf, br) = ((a % 8) as i32, (a / 8) as i32, (b % 8) as i32, (b / 8) as i32);
    let (df, dr) = (bf - af, br - ar);
    if a == b || !(df == 0 || dr == 0 || df == dr || df == -dr) {
        return 0;
    }
    let (sf, sr) = (sign(df), sign(dr));
    let mut bits = 0;
    if whole {
        // Walk back to the edge, then across the whole board.
        let (mut f, mut r) = (af, ar);
        while f - sf >= 0 && f - sf < 8 && r - sr >= 0 && r - sr < 8 {
            f -= sf;
            r -= sr;
        }
        while f >= 0 && f < 8 && r >= 0 && r < 8 {
            bits |= 1 << (r * 8 + f);
            f += sf;
            r += sr;
        }
    } else {
        let (mut f, mut r) = (af + sf, ar + sr);
        while f != bf || r != br {
            bits |= 1 << (r * 8 + f);
            f += sf;
            r += sr;
        }
    }
    bits
}

const fn line_table(whole: bool) -> [[u64; 64]; 64] {
    let mut table = [[0; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            table[a][b] = line_through(a, b, whole);
            b += 1;
        }
        a += 1;
    }
    table
}

static BETWEEN: [[u64; 64]; 64] = line_table(false);
static LINE: [[u64; 64]; 64] = line_table(true);

/// Squares strictly between `a` and `b` when they share a rank, file or
/// diagonal; otherwise empty.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index()][b.index()])
}

/// The whole rank, file or diagonal through `a` and `b`, edge to edge;
/// empty when they are not aligned.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a.index()][b.index()])
}

/// Whether `c` lies on the line through `a` and `b`.
#[inline]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slider_tables_match_ray_walks() {
        // d4 with blockers on d6, f4 and b2.
        let occupied = Bitboard::EMPTY.with(Square::D6).with(Square::F4).with(Square::B2);
        let rook: Bitboard = [
            Square::D5,
            Square::D6,
            Square::D3,
            Square::D2,
            Square::D1,
            Square::E4,
            Square::F4,
            Square::C4,
            Square::B4,
            Square::A4,
        ]
        .into_iter()
        .collect();
        assert_eq!(rook_attacks(Square::D4, occupied), rook);
        let bishop: Bitboard = [
            Square::E5,
            Square::F6,
            Square::G7,
            Square::H8,
            Square::C5,
            Square::B6,
            Square::A7,
            Square::E3,
            Square::F2,
            Square::G1,
            Square::C3,
            Square::B2,
        ]
        .into_iter()
        .collect();
        assert_eq!(bishop_attacks(Square::D4, occupied), bishop);
    }

    #[test]
    fn steppers() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(king_attacks(Square::E4).count(), 8);
        assert_eq!(pawn_attacks(Color::White, Square::E2), Bitboard::EMPTY.with(Square::D3).with(Square::F3));
        assert_eq!(pawn_attacks(Color::Black, Square::A7), Bitboard::EMPTY.with(Square::B6));
    }

    #[test]
    fn lines() {
        assert_eq!(between(Square::A1, Square::D4), Bitboard::EMPTY.with(Square::B2).with(Square::C3));
        assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
        assert_eq!(line(Square::B2, Square::C3).count(), 8);
        assert!(aligned(Square::E1, Square::E8, Square::E4));
        assert!(!aligned(Square::E1, Square::E8, Square::D4));
    }
}
