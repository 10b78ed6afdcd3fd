//! Zobrist keys: a 64-bit fingerprint of a position, for threefold
//! repetition and transposition tables.

use crate::color::Color;
use crate::piece::Role;
use crate::position::Position;
use crate::square::Square;

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

/// The index in [`PIECE_KEYS`] of a piece of `role` on `sq`, white or not.
#[inline]
fn piece_key_index(white: bool, role: Role, sq: Square) -> usize {
    let color = if white { Color::White } else { Color::Black };
    (color.index() * 6 + role.index()) * 64 + sq.index()
}

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

    /// The same key as [`Position::zobrist_hash`], worked out from the key
    /// of `other` (any position, typically the parent after one move or a
    /// null move): a key is an XOR of one key per feature, so XORing in
    /// what differs between the two positions turns one key into the
    /// other. After a move only a few squares differ (in atomic, the
    /// blast's too), which is far cheaper than hashing every piece again.
    pub fn zobrist_hash_from(&self, other: &Position, other_key: u64) -> u64 {
        let mut key = other_key;
        let (before, after) = (&other.board, &self.board);
        let (white_before, white_after) = (before.by_color(Color::White), after.by_color(Color::White));
        // Squares whose piece differs: another colour, or another role (or
        // none) on either side.
        let mut changed = white_before ^ white_after;
        for role in Role::ALL {
            changed |= before.by_role(role) ^ after.by_role(role);
        }
        for role in Role::ALL {
            for sq in before.by_role(role) & changed {
                key ^= PIECE_KEYS[piece_key_index(white_before.contains(sq), role, sq)];
            }
            for sq in after.by_role(role) & changed {
                key ^= PIECE_KEYS[piece_key_index(white_after.contains(sq), role, sq)];
            }
        }
        for sq in self.castling_rooks ^ other.castling_rooks {
            key ^= CASTLING_KEYS[sq.index()];
        }
        if self.ep_square != other.ep_square {
            for ep in [self.ep_square, other.ep_square].into_iter().flatten() {
                key ^= EP_KEYS[ep.file().index() as usize];
            }
        }
        if self.turn != other.turn {
            key ^= BLACK_TO_MOVE_KEY;
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use crate::{Position, Variant};

    /// Every position of the perft suites of `variant` and its children to
    /// `depth` plies: each child's key worked out from its parent's must be
    /// the key hashed from scratch, and so must a null move's.
    fn check_keys_from_parents(suite: &str, variant: Variant, depth: u32) -> usize {
        let roots = suite.lines().filter_map(|line| line.trim().strip_prefix("epd "));
        roots.map(|fen| walk(&Position::from_fen(fen, variant).unwrap(), depth)).sum()
    }

    fn walk(pos: &Position, depth: u32) -> usize {
        let key = pos.zobrist_hash();
        let mut passed = *pos;
        if passed.play_null() {
            assert_eq!(passed.zobrist_hash_from(pos, key), passed.zobrist_hash());
        }
        if depth == 0 {
            return 1;
        }
        let mut checked = 1;
        for m in pos.legal_moves() {
            let mut child = *pos;
            child.play_unchecked(m);
            assert_eq!(child.zobrist_hash_from(pos, key), child.zobrist_hash(), "{m:?} in {pos:?}");
            checked += walk(&child, depth - 1);
        }
        checked
    }

    #[test]
    fn a_key_worked_out_from_the_parents_is_the_key_hashed_from_scratch() {
        let suites = [
            (include_str!("../tests/data/atomic.perft"), Variant::Atomic),
            (include_str!("../tests/data/random-atomic.perft"), Variant::Atomic),
            (include_str!("../tests/data/tricky.perft"), Variant::Standard),
            (include_str!("../tests/data/random-standard.perft"), Variant::Standard),
            (include_str!("../tests/data/fow.perft"), Variant::Fog),
        ];
        for (suite, variant) in suites {
            assert!(check_keys_from_parents(suite, variant, 2) > 1_000);
        }
    }

    #[test]
    fn a_key_worked_out_from_any_other_position_is_the_key_hashed_from_scratch() {
        // Along random atomic games, from positions several plies apart.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..50 {
            let mut line = vec![Position::new(Variant::Atomic)];
            while line.len() < 120 {
                let moves = line[line.len() - 1].legal_moves();
                if moves.is_empty() {
                    break;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut next = line[line.len() - 1];
                next.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
                line.push(next);
            }
            for (i, pos) in line.iter().enumerate() {
                let other = &line[i.saturating_sub(7)];
                assert_eq!(pos.zobrist_hash_from(other, other.zobrist_hash()), pos.zobrist_hash());
            }
        }
    }

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
