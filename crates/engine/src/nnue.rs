//! A small efficiently updated neural network that evaluates atomic
//! positions, trained on the engine's own games by
//! `crates/engine/examples/nnue.rs` (docs/engine.md, "Network").
//!
//! The inputs are the 768 piece-on-square features seen from each side (our
//! pieces and theirs, the board flipped for Black). Each side's features add
//! up a column of the first layer into that side's accumulator; a move
//! changes a few features, so the search carries the accumulators down its
//! path and updates them by the squares that changed instead of adding them
//! up again. The two accumulators, the side to move's first, pass through a
//! squared clipped ReLU into one output. With `residual` set the output is a
//! correction added to the hand-written evaluation rather than a whole
//! evaluation.
//!
//! File layout, little-endian: `FBNN`, version (u32), hidden size (u32),
//! flags (u32, bit 0: residual), the first layer's weights (i16, one row of
//! `HIDDEN` per feature), its biases (i16 × `HIDDEN`), the output weights
//! (i16 × 2 `HIDDEN`) and the output bias (i32).

use std::sync::OnceLock;

use arrayvec::ArrayVec;

use fogblast_rules::{Board, Color, Piece, Role, Square};

/// Piece-on-square features per side.
pub const INPUTS: usize = 768;
/// Neurons per side in the first layer.
pub const HIDDEN: usize = 64;
/// Fixed-point scale of the first layer: 1.0 is `QA`.
pub const QA: i32 = 255;
/// Fixed-point scale of the output weights.
pub const QB: i32 = 64;
/// Centipawns per unit of the network's output.
pub const SCALE: i32 = 400;
const MAGIC: &[u8; 4] = b"FBNN";
const VERSION: u32 = 1;
const RESIDUAL: u32 = 1;

static ATOMIC_FILE: &[u8] = include_bytes!("atomic.nnue");

/// The quantised network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    /// Whether the output corrects the hand-written evaluation.
    pub residual: bool,
    pub input_weights: Vec<[i16; HIDDEN]>,
    pub input_bias: [i16; HIDDEN],
    /// The side to move's half first.
    pub output_weights: [i16; 2 * HIDDEN],
    pub output_bias: i32,
}

/// Why a network file could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NetworkError {
    #[error("not a network file")]
    NotANetwork,
    #[error("network file version {0}, expected {VERSION}")]
    Version(u32),
    #[error("network of {0} hidden neurons, expected {HIDDEN}")]
    Hidden(u32),
    #[error("network file of {0} bytes, expected {1}")]
    Length(usize, usize),
}

/// The network the engine plays atomic chess with.
pub fn atomic() -> &'static Network {
    static NETWORK: OnceLock<Network> = OnceLock::new();
    NETWORK.get_or_init(|| Network::from_bytes(ATOMIC_FILE).expect("the embedded network is valid"))
}

impl Network {
    const fn file_len() -> usize {
        16 + 2 * (INPUTS * HIDDEN + HIDDEN + 2 * HIDDEN) + 4
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetworkError> {
        if bytes.len() < 16 || &bytes[..4] != MAGIC {
            return Err(NetworkError::NotANetwork);
        }
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"));
        if word(4) != VERSION {
            return Err(NetworkError::Version(word(4)));
        }
        if word(8) != HIDDEN as u32 {
            return Err(NetworkError::Hidden(word(8)));
        }
        if bytes.len() != Self::file_len() {
            return Err(NetworkError::Length(bytes.len(), Self::file_len()));
        }
        let mut values = bytes[16..].chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut next = || values.next().expect("length checked");
        let input_weights = (0..INPUTS).map(|_| std::array::from_fn(|_| next())).collect();
        let input_bias = std::array::from_fn(|_| next());
        let output_weights = std::array::from_fn(|_| next());
        let output_bias = word(Self::file_len() - 4) as i32;
        Ok(Network { residual: word(12) & RESIDUAL != 0, input_weights, input_bias, output_weights, output_bias })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::file_len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(HIDDEN as u32).to_le_bytes());
        out.extend_from_slice(&(if self.residual { RESIDUAL } else { 0 }).to_le_bytes());
        let values = self.input_weights.iter().flatten().chain(&self.input_bias).chain(&self.output_weights);
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.output_bias.to_le_bytes());
        out
    }

    /// The network's output for the side to move `turn`, in centipawns.
    pub fn evaluate(&self, acc: &Accumulator, turn: Color) -> i32 {
        if self.products_fit() {
            return self.evaluate_fitting(acc, turn);
        }
        self.evaluate_widely(acc, turn)
    }

    /// [`Network::evaluate`] for any output weights, each term in an i32.
    fn evaluate_widely(&self, acc: &Accumulator, turn: Color) -> i32 {
        let (us, them) = (&acc.sides[turn.index()], &acc.sides[(!turn).index()]);
        let (near, far) = self.output_weights.split_at(HIDDEN);
        let mut sum: i32 = 0;
        for (side, weights) in [(us, near), (them, far)] {
            for (&a, &w) in side.iter().zip(weights) {
                let v = i32::from(a).clamp(0, QA);
                // The trainer keeps |w| ≤ 127, so the sum stays within
                // 2 × HIDDEN × QA² × 127, about 1.06 × 10⁹.
                sum += v * w as i32 * v;
            }
        }
        (sum / QA + self.output_bias) * SCALE / (QA * QB)
    }

    /// Whether every output weight is within ±128, so that a clipped sum
    /// (0 to `QA`) times a weight fits an i16 ([`Network::evaluate_fitting`]).
    pub fn products_fit(&self) -> bool {
        self.output_weights.iter().all(|w| w.unsigned_abs() <= 128)
    }

    /// [`Network::evaluate`] for a network whose [`Network::products_fit`]:
    /// each term `v × w × v` is taken as the i16 `v × w` times `v`, which
    /// compilers turn into pairwise multiply-adds (`pmaddwd` and the like).
    /// Integer sums in any order are the same, so the result is exactly
    /// [`Network::evaluate`]'s.
    pub fn evaluate_fitting(&self, acc: &Accumulator, turn: Color) -> i32 {
        debug_assert!(self.products_fit());
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[allow(unsafe_code)]
            // SAFETY: the processor has the one feature the function needs.
            return unsafe { self.evaluate_fitting_with_avx2(acc, turn) };
        }
        self.fitting_output(acc, turn)
    }

    /// [`Network::fitting_output`] compiled for processors with AVX2, when
    /// this one has it: the portable build (SSE2) multiplies and adds four
    /// sums at a time, this one eight or more, for the same integers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn evaluate_fitting_with_avx2(&self, acc: &Accumulator, turn: Color) -> i32 {
        self.fitting_output(acc, turn)
    }

    #[inline(always)]
    fn fitting_output(&self, acc: &Accumulator, turn: Color) -> i32 {
        let (near, far) = self.output_weights.split_at(HIDDEN);
        let (near, far) = (near.try_into().expect("HIDDEN weights"), far.try_into().expect("HIDDEN weights"));
        let sum = output_sum(&acc.sides[turn.index()], near) + output_sum(&acc.sides[(!turn).index()], far);
        (sum / QA + self.output_bias) * SCALE / (QA * QB)
    }
}

/// Σ `v × w × v` over one side's clipped sums `v`, with `v × w` in an i16
/// (the weights within ±128).
#[inline(always)]
fn output_sum(side: &[i16; HIDDEN], weights: &[i16; HIDDEN]) -> i32 {
    let mut sum = 0i32;
    for (&a, &w) in side.iter().zip(weights) {
        let v = a.clamp(0, QA as i16);
        sum += i32::from(v.wrapping_mul(w)) * i32::from(v);
    }
    sum
}

/// The index of a piece on a square seen from `side`: our pieces first, the
/// board flipped for Black so that each side sees itself moving up.
#[inline]
pub fn feature(side: Color, piece: Piece, sq: Square) -> usize {
    let theirs = usize::from(piece.color != side);
    let square = if side == Color::White { sq.index() } else { sq.index() ^ 56 };
    (theirs * 6 + piece.role.index()) * 64 + square
}

/// Both sides' first-layer sums for one board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
pub struct Accumulator {
    sides: [[i16; HIDDEN]; 2],
}

impl Accumulator {
    /// Sums of nothing, to be overwritten.
    pub const ZERO: Accumulator = Accumulator { sides: [[0; HIDDEN]; 2] };

    /// The sums for `board`, added up from scratch.
    pub fn new(net: &Network, board: &Board) -> Accumulator {
        let mut acc = Accumulator { sides: [net.input_bias; 2] };
        for (sq, piece) in board.pieces() {
            acc.add(net, piece, sq);
        }
        acc
    }

    /// The sums after the board went from `before` to `after`, from the
    /// pieces that left or arrived on a square.
    pub fn update(&mut self, net: &Network, before: &Board, after: &Board) {
        let parent = *self;
        self.update_from(&parent, net, before, after);
    }

    /// Sets these sums to `parent`'s (those of `before`) brought to
    /// `after`, in one pass over each side's sums for the usual move (one
    /// piece off a square, one onto another).
    pub fn update_from(&mut self, parent: &Accumulator, net: &Network, before: &Board, after: &Board) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[allow(unsafe_code)]
            // SAFETY: the processor has the one feature the function needs.
            return unsafe { self.update_from_with_avx2(parent, net, before, after) };
        }
        self.update_sums(parent, net, before, after);
    }

    /// [`Accumulator::update_sums`] compiled for processors with AVX2, when
    /// this one has it: sixteen sums a step rather than eight, for the
    /// same integers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn update_from_with_avx2(&mut self, parent: &Accumulator, net: &Network, before: &Board, after: &Board) {
        self.update_sums(parent, net, before, after);
    }

    #[inline(always)]
    fn update_sums(&mut self, parent: &Accumulator, net: &Network, before: &Board, after: &Board) {
        let mut removed: ArrayVec<(Piece, Square), 64> = ArrayVec::new();
        let mut added: ArrayVec<(Piece, Square), 64> = ArrayVec::new();
        // A role whose squares are the same and none of them changed colour
        // changed nothing (a move always changes the colours' squares).
        let recoloured = before.by_color(Color::White) ^ after.by_color(Color::White);
        for role in Role::ALL {
            if before.by_role(role) == after.by_role(role) && (before.by_role(role) & recoloured).is_empty() {
                continue;
            }
            for color in [Color::White, Color::Black] {
                let piece = role.of(color);
                let (was, is) = (before.by_piece(piece), after.by_piece(piece));
                removed.extend((was & !is).into_iter().map(|sq| (piece, sq)));
                added.extend((is & !was).into_iter().map(|sq| (piece, sq)));
            }
        }
        for side in [Color::White, Color::Black] {
            let row = |&(piece, sq): &(Piece, Square)| &net.input_weights[feature(side, piece, sq)];
            let (from, to) = (&parent.sides[side.index()], &mut self.sides[side.index()]);
            if let ([off], [on]) = (&removed[..], &added[..]) {
                let (off, on) = (row(off), row(on));
                for i in 0..HIDDEN {
                    to[i] = from[i].wrapping_sub(off[i]).wrapping_add(on[i]);
                }
                continue;
            }
            *to = *from;
            for off in &removed {
                for (a, w) in to.iter_mut().zip(row(off)) {
                    *a = a.wrapping_sub(*w);
                }
            }
            for on in &added {
                for (a, w) in to.iter_mut().zip(row(on)) {
                    *a = a.wrapping_add(*w);
                }
            }
        }
    }

    #[inline]
    fn add(&mut self, net: &Network, piece: Piece, sq: Square) {
        for side in [Color::White, Color::Black] {
            let row = &net.input_weights[feature(side, piece, sq)];
            for (a, w) in self.sides[side.index()].iter_mut().zip(row) {
                *a = a.wrapping_add(*w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use fogblast_rules::{Position, Variant};

    use super::*;

    /// A network of small pseudo-random weights.
    fn scrambled(seed: u64) -> Network {
        let mut state = seed;
        let mut next = move |range: i64| -> i16 {
            state = crate::search::splitmix(state);
            ((state % (2 * range as u64 + 1)) as i64 - range) as i16
        };
        Network {
            residual: false,
            input_weights: (0..INPUTS).map(|_| std::array::from_fn(|_| next(60))).collect(),
            input_bias: std::array::from_fn(|_| next(100) + 100),
            output_weights: std::array::from_fn(|_| next(127)),
            output_bias: 12_345,
        }
    }

    #[test]
    fn a_file_reads_back_as_the_same_network() {
        let net = scrambled(3);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), Network::file_len());
        assert_eq!(Network::from_bytes(&bytes), Ok(net));
        assert_eq!(
            Network::from_bytes(&bytes[..bytes.len() - 1]),
            Err(NetworkError::Length(bytes.len() - 1, bytes.len()))
        );
        assert_eq!(Network::from_bytes(b"NOPE and more bytes"), Err(NetworkError::NotANetwork));
        let mut other = bytes.clone();
        other[8] = 32;
        assert_eq!(Network::from_bytes(&other), Err(NetworkError::Hidden(32)));
    }

    #[test]
    fn the_embedded_network_loads() {
        assert_eq!(atomic().input_weights.len(), INPUTS);
    }

    #[test]
    fn updated_sums_equal_sums_from_scratch_along_random_games() {
        let net = scrambled(7);
        let mut seed = 11;
        for _ in 0..40 {
            let mut pos = Position::new(Variant::Atomic);
            let mut acc = Accumulator::new(&net, pos.board());
            for _ in 0..120 {
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.outcome().is_some() {
                    break;
                }
                seed = crate::search::splitmix(seed);
                let mut child = pos;
                child.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
                acc.update(&net, pos.board(), child.board());
                assert_eq!(acc, Accumulator::new(&net, child.board()), "after {}", child.fen());
                pos = child;
            }
        }
    }

    #[test]
    fn the_fitting_output_layer_equals_the_wide_one() {
        for seed in 0..20 {
            let mut net = scrambled(seed);
            // Sums beyond both ends of the clipping, and the widest weights.
            net.input_bias = std::array::from_fn(|i| (i as i16 - 32) * 12);
            net.output_weights[0] = 128;
            net.output_weights[1] = -128;
            assert!(net.products_fit());
            let mut pos = Position::new(Variant::Atomic);
            for ply in 0..60u64 {
                let acc = Accumulator::new(&net, pos.board());
                for turn in [Color::White, Color::Black] {
                    assert_eq!(net.evaluate_fitting(&acc, turn), net.evaluate_widely(&acc, turn));
                }
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.outcome().is_some() {
                    break;
                }
                let pick = crate::search::splitmix(seed * 1000 + ply) % moves.len() as u64;
                pos.play_unchecked(moves[pick as usize]);
            }
        }
        let mut wide = scrambled(1);
        wide.output_weights[3] = 129;
        assert!(!wide.products_fit());
    }

    #[test]
    fn the_evaluation_is_the_same_for_a_mirrored_board() {
        let net = scrambled(5);
        let fen = "rnbqkb1r/ppp1pppp/5n2/3p4/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 3";
        let mirrored = "r1bqkbnr/pppp1ppp/2n5/4p3/3P4/5N2/PPP1PPPP/RNBQKB1R b KQkq - 0 3";
        let [a, b] = [fen, mirrored].map(|f| {
            let pos = Position::from_fen(f, Variant::Atomic).expect("a valid FEN");
            net.evaluate(&Accumulator::new(&net, pos.board()), pos.turn())
        });
        assert_eq!(a, b);
        assert_ne!(a, 0);
    }
}
