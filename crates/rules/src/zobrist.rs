//! Zobrist keys: a 64-bit fingerprint of a position, for threefold
//! repetition and transposition tables.

use crate::color::Color;
use crate::piece::Role;
use crate::position::Position;

/// SplitMix64, run at compile time so the keys are the same in every build.
const fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const fn key_table<const N: usize>(seed: u64) -> [u64; N] {
    let mut keys = [0; N];
    let mut i = 0;
    while i < N {
        keys[i] = splitmix(seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        i += 1;
    }
    keys
}

/// One key per (colour, role, square): index `(color * 6 + role) * 64 + square`.
static PIECE_KEYS: [u64; 768] = key_table(1);
/// One key per castling rook square.
static CASTLING_KEYS: [u64; 64] = key_table(2);
/// One key per en passant file.
static EP_KEYS: [u64; 8] = key_table(3);
const BLACK_TO_MOVE_KEY: u64 = splitmix(4);

impl Position {
    /// The position's Zobrist key: pieces, side to move, castling rights
    /// and a usable en passant square. Clocks are not part of it, so two
    /// positions that repeat in the sense of the repetition rule have
    /// equal keys.
    pub fn zobrist_hash(&self) -> u64 {
        let mut key = 0;
        for color in Color::ALL {
            for role in Role::ALL {
                let table = &PIECE_KEYS[(color.index() * 6 + role.index()) * 64..][..64];
                for sq in self.board.by_piece(role.of(color)) {
                    key ^= table[sq.index()];
                }
            }
        }
        for sq in self.castling_rooks {
            key ^= CASTLING_KEYS[sq.index()];
        }
        if let Some(ep) = self.ep_square {
            key ^= EP_KEYS[ep.file().index() as usize];
        }
        if self.turn == Color::Black {
            key ^= BLACK_TO_MOVE_KEY;
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use crate::{Position, Variant};

    #[test]
    fn transpositions_share_a_key_and_differences_do_not() {
        let start = Position::new(Variant::Atomic);
        let play = |moves: &[&str]| {
            moves.iter().fold(start, |pos, uci| {
                let m = pos.parse_uci(&uci.parse().unwrap()).unwrap();
                pos.play(m).unwrap().0
            })
        };
        let a = play(&["g1f3", "g8f6", "b1c3"]);
        let b = play(&["b1c3", "g8f6", "g1f3"]);
        assert_eq!(a.zobrist_hash(), b.zobrist_hash());
        assert_ne!(a.zobrist_hash(), start.zobrist_hash());
        // Knights out and back: same placement, but castling rights differ
        // once a rook has moved.
        let rook_out_and_back = play(&["g1f3", "g8f6", "h1g1", "f6g8", "g1h1", "g8f6", "f3g1", "f6g8"]);
        assert_eq!(rook_out_and_back.board(), start.board());
        assert_ne!(rook_out_and_back.zobrist_hash(), start.zobrist_hash());
        // Same pieces, other side to move.
        let knights = play(&["g1f3", "g8f6", "f3g1", "f6g8"]);
        assert_eq!(knights.zobrist_hash(), start.zobrist_hash());
        let one = play(&["g1f3"]);
        let mut flipped = one.to_setup();
        flipped.turn = !flipped.turn;
        let flipped = Position::from_setup(flipped, Variant::Atomic).unwrap();
        assert_ne!(one.zobrist_hash(), flipped.zobrist_hash());
    }
}
