//! Static evaluation in centipawns from the side to move's point of view.
//! Atomic chess turns king safety inside out: any of your pieces next to
//! your own king is a fuse, because capturing it explodes the king; pawns
//! beside the king survive blasts; touching kings cannot be checked.

use fogblast_rules::attacks;
use fogblast_rules::{Bitboard, Board, Color, Position, Role, Variant};

/// The evaluation's weights, by name; [`Weights`] holds one value for each.
/// The atomic set is tuned (see `examples/texel.rs`); the standard set is
/// hand-set.
pub mod term {
    pub const PAWN: usize = 0;
    pub const KNIGHT: usize = 1;
    pub const BISHOP: usize = 2;
    pub const ROOK: usize = 3;
    pub const QUEEN: usize = 4;
    pub const PAWN_ADVANCE: usize = 5;
    pub const PAWN_CENTRE: usize = 6;
    pub const KNIGHT_CENTRE: usize = 7;
    pub const KNIGHT_MOBILITY: usize = 8;
    pub const BISHOP_CENTRE: usize = 9;
    pub const BISHOP_MOBILITY: usize = 10;
    pub const ROOK_MOBILITY: usize = 11;
    pub const QUEEN_MOBILITY: usize = 12;
    pub const KING_CENTRE_ENDGAME: usize = 13;
    pub const KING_CENTRE_MIDDLEGAME: usize = 14;
    pub const BISHOP_PAIR: usize = 15;
    pub const CONNECTED_KINGS: usize = 16;
    pub const FUSE_ATTACKED: usize = 17;
    pub const FUSE: usize = 18;
    pub const KING_PAWN: usize = 19;
    pub const DANGER_ATTACKED: usize = 20;
    pub const DANGER_BLAST: usize = 21;
    pub const DANGER_CAP: usize = 22;
    pub const ATTACK: usize = 23;
    pub const QUEEN_NEAR: usize = 24;
    pub const TEMPO: usize = 25;
    pub const PASSED_PAWN: usize = 26;
    pub const DOUBLED_PAWN: usize = 27;
    pub const ROOK_OPEN_FILE: usize = 28;
    pub const KINGS_CLOSE: usize = 29;
    pub const PIECE_ADVANCE: usize = 30;
    pub const COUNT: usize = 31;
    /// Names, in index order.
    pub const NAMES: [&str; COUNT] = [
        "pawn",
        "knight",
        "bishop",
        "rook",
        "queen",
        "pawn advance",
        "pawn centre",
        "knight centre",
        "knight mobility",
        "bishop centre",
        "bishop mobility",
        "rook mobility",
        "queen mobility",
        "king centre endgame",
        "king centre middlegame",
        "bishop pair",
        "connected kings",
        "fuse attacked",
        "fuse",
        "king pawn",
        "danger attacked",
        "danger blast",
        "danger cap",
        "attack",
        "queen near",
        "tempo",
        "passed pawn",
        "doubled pawn",
        "rook open file",
        "kings close",
        "piece advance",
    ];
}

/// One value per [`term`].
pub type Weights = [i32; term::COUNT];

/// Atomic weights. Knights explode without reaching far, so they are worth
/// less than bishops.
pub const ATOMIC_WEIGHTS: Weights = [
    100, 260, 280, 420, 950, 7, 58, 8, 14, 0, 13, 15, 2, 2, 108, 0, 25, 24, 12, 0, 6, 10, 1012, 24, 0, 22, 0, 0, 0, 0,
    20,
];
/// Standard chess weights (the atomic king terms do not apply).
pub const STANDARD_WEIGHTS: Weights =
    [100, 320, 330, 500, 900, 3, 4, 8, 3, 3, 4, 2, 1, 10, 10, 30, 25, 90, 6, 8, 10, 25, 900, 4, 4, 10, 0, 0, 0, 0, 0];

fn weights_for(variant: Variant) -> &'static Weights {
    match variant {
        Variant::Atomic => &ATOMIC_WEIGHTS,
        _ => &STANDARD_WEIGHTS,
    }
}

pub fn piece_value(variant: Variant, role: Role) -> i32 {
    match role {
        Role::King => 0,
        _ => weights_for(variant)[role.index()],
    }
}

/// 0 at the rim, 3 on the four centre squares.
fn centrality(sq: fogblast_rules::Square) -> i32 {
    let f = sq.file().index() as i32;
    let r = sq.rank().index() as i32;
    let df = (2 * f - 7).abs();
    let dr = (2 * r - 7).abs();
    (7 - df.max(dr)) / 2
}

/// The evaluation of `pos` for the side to move.
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, weights_for(pos.variant()))
}

/// The evaluation of `pos` for the side to move with weights `w` (for
/// tuning). The tempo term stands for the side to move's initiative: in
/// atomic it often has a forcing explosion.
pub fn evaluate_with(pos: &Position, w: &Weights) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        #[allow(unsafe_code)]
        // SAFETY: the processor has the one feature the function needs.
        return unsafe { evaluate_counting_with_popcnt(pos, w) };
    }
    evaluate_terms(pos, w)
}

/// [`evaluate_terms`] compiled with the processor's population count, when
/// it has one. The evaluation counts squares some thirty times a position
/// (mobility, the squares around the kings); the portable build, for any
/// x86-64, counts each in a dozen instructions, and `popcnt` in one. The
/// counts, and so the scores, are the same.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn evaluate_counting_with_popcnt(pos: &Position, w: &Weights) -> i32 {
    evaluate_terms(pos, w)
}

/// The evaluation's terms, inlined (with the functions below) into each
/// build of [`evaluate_with`].
#[inline(always)]
fn evaluate_terms(pos: &Position, w: &Weights) -> i32 {
    let board = pos.board();
    let endgame = is_endgame(board);
    // Two calls rather than `Color::ALL.map`, whose closure would be
    // compiled outside the `popcnt` build.
    let (mut white, mut black) =
        (pieces_score(board, Color::White, endgame, w), pieces_score(board, Color::Black, endgame, w));
    if pos.variant() == Variant::Atomic {
        let white_terms =
            atomic_king_terms(board, Color::White, &white, &black, w) + pawn_structure(board, Color::White, w);
        let black_terms =
            atomic_king_terms(board, Color::Black, &black, &white, w) + pawn_structure(board, Color::Black, w);
        white.score += white_terms;
        black.score += black_terms;
    }
    let (ours, theirs) = if pos.turn() == Color::White { (white, black) } else { (black, white) };
    ours.score - theirs.score + w[term::TEMPO]
}

/// Whether the queens are off or little material is left.
#[inline(always)]
fn is_endgame(board: &Board) -> bool {
    board.queens().is_empty() || (board.occupied() - board.pawns() - board.kings()).count() <= 4
}

/// One side's material, placement and mobility, and the squares its pieces
/// (the king aside) attack: `once` at least once, `twice` at least twice.
#[derive(Clone, Copy)]
struct Side {
    score: i32,
    once: Bitboard,
    twice: Bitboard,
}

impl Side {
    #[inline]
    fn attack(&mut self, squares: Bitboard) {
        self.twice |= self.once & squares;
        self.once |= squares;
    }
}

#[inline(always)]
fn pieces_score(board: &Board, color: Color, endgame: bool, w: &Weights) -> Side {
    let ours = board.by_color(color);
    let occupied = board.occupied();
    let black = color == Color::Black;
    let mut side = Side { score: 0, once: Bitboard::EMPTY, twice: Bitboard::EMPTY };
    let mut score = 0;

    // Material piece by piece: cheaper than counting each set's squares.
    for sq in board.pawns() & ours {
        let advance = sq.rank().relative(black).index() as i32 - 1;
        score += w[term::PAWN]
            + advance * advance * w[term::PAWN_ADVANCE]
            + if (2..=5).contains(&sq.file().index()) { w[term::PAWN_CENTRE] } else { 0 };
        side.attack(attacks::pawn_attacks(color, sq));
    }
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for sq in board.by_role(role) & ours {
            score += w[role.index()];
            if !endgame {
                // Atomic pieces defend themselves (their captor explodes
                // with them), so pieces pushed forward are an asset.
                score += (sq.rank().relative(black).index() as i32 - 3) * w[term::PIECE_ADVANCE];
            }
            let attacked = attacks::attacks(role, color, sq, occupied);
            side.attack(attacked);
            let mobility = (attacked - ours).count() as i32;
            score += match role {
                Role::Knight => centrality(sq) * w[term::KNIGHT_CENTRE] + mobility * w[term::KNIGHT_MOBILITY],
                Role::Bishop => centrality(sq) * w[term::BISHOP_CENTRE] + mobility * w[term::BISHOP_MOBILITY],
                Role::Rook => mobility * w[term::ROOK_MOBILITY],
                _ => mobility * w[term::QUEEN_MOBILITY],
            };
        }
    }
    for sq in board.kings() & ours {
        score += if endgame {
            centrality(sq) * w[term::KING_CENTRE_ENDGAME]
        } else {
            -centrality(sq) * w[term::KING_CENTRE_MIDDLEGAME]
        };
    }
    if (ours & board.bishops()).more_than_one() {
        score += w[term::BISHOP_PAIR];
    }
    side.score = score;
    side
}

/// Passed and doubled pawns, and rooks on files without our pawns (each
/// left out while its weight is zero, as in the atomic table).
#[inline(always)]
fn pawn_structure(board: &Board, color: Color, w: &Weights) -> i32 {
    let our_pawns = board.pawns() & board.by_color(color);
    let their_pawns = (board.pawns() & board.by_color(!color)).0;
    let mut score = 0;
    if w[term::PASSED_PAWN] != 0 {
        for sq in our_pawns {
            let file = sq.file().index() as u32;
            let rank = sq.rank().index() as u32;
            let mut files = 0x0101_0101_0101_0101u64 << file;
            if file > 0 {
                files |= 0x0101_0101_0101_0101u64 << (file - 1);
            }
            if file < 7 {
                files |= 0x0101_0101_0101_0101u64 << (file + 1);
            }
            let ahead = match color {
                Color::White => (!0u64).checked_shl(8 * (rank + 1)).unwrap_or(0),
                Color::Black => (1u64 << (8 * rank)) - 1,
            };
            if their_pawns & files & ahead == 0 {
                let advance = sq.rank().relative(color == Color::Black).index() as i32;
                score += advance * w[term::PASSED_PAWN];
            }
        }
    }
    if w[term::DOUBLED_PAWN] != 0 {
        for file in 0..8 {
            let on_file = (our_pawns.0 & (0x0101_0101_0101_0101u64 << file)).count_ones() as i32;
            score -= (on_file - 1).max(0) * w[term::DOUBLED_PAWN];
        }
    }
    if w[term::ROOK_OPEN_FILE] != 0 {
        for sq in board.rooks() & board.by_color(color) {
            if our_pawns.0 & (0x0101_0101_0101_0101u64 << sq.file().index()) == 0 {
                score += w[term::ROOK_OPEN_FILE];
            }
        }
    }
    score
}

/// Atomic king safety for `color` (whose pieces are `us`, the enemy's
/// `them`): fuses next to our king, threats next to theirs, and the
/// shelter of touching kings.
#[inline(always)]
fn atomic_king_terms(board: &Board, color: Color, us: &Side, them: &Side, w: &Weights) -> i32 {
    let (Some(king), Some(their_king)) = (board.king_of(color), board.king_of(!color)) else {
        return 0;
    };
    if attacks::king_attacks(king).contains(their_king) {
        // Connected kings cannot be exploded by a capture next to both, and
        // cannot be checked: a refuge for the side with less.
        return w[term::CONNECTED_KINGS];
    }
    let ours = board.by_color(color);
    let mut score = 0;

    // Our pieces next to our king that an enemy piece (not its king) can
    // capture: each is a way to blow up our king.
    let fuses = attacks::king_attacks(king) & ours;
    let attacked_fuses = (fuses & them.once).count() as i32;
    score -= attacked_fuses * w[term::FUSE_ATTACKED] + (fuses.count() as i32 - attacked_fuses) * w[term::FUSE];
    // Pawns beside the king survive explosions and block lines.
    if w[term::KING_PAWN] != 0 {
        score += (attacks::king_attacks(king) & ours & board.pawns()).count() as i32 * w[term::KING_PAWN];
    }

    score += (7 - king.distance(their_king) as i32) * w[term::KINGS_CLOSE];
    score + king_danger(board, color, us, king, their_king, w) - queen_exposure(board, color, king, w)
}

/// How close `color` (whose attacks are `us`) is to blowing up the enemy
/// king on `their_king`: the squares around it we attack, set against its
/// escapes, and above all the captures that would explode it. Danger grows
/// faster than its parts (a second blast threat cannot be parried with one
/// move), so it is squared.
#[inline(always)]
fn king_danger(
    board: &Board,
    color: Color,
    us: &Side,
    king: fogblast_rules::Square,
    their_king: fogblast_rules::Square,
    w: &Weights,
) -> i32 {
    let zone = attacks::king_attacks(their_king);
    let near_ours = attacks::king_attacks(king).with(king);
    let theirs = board.by_color(!color);
    // Attackers per square, counted up to two.
    let attacked = ((zone & us.once).count() + (zone & us.twice).count()) as i32;
    // A capture next to their king blows it up, unless ours is in the blast too.
    let blasts = ((zone & theirs & us.once) - near_ours).count() as i32;
    let escapes = (zone - theirs - us.once).count() as i32;
    let danger = (w[term::DANGER_ATTACKED] * attacked / (escapes + 1) + w[term::DANGER_BLAST] * blasts).max(0);
    (danger * danger / 5).min(w[term::DANGER_CAP]) + attacked * w[term::ATTACK]
}

/// Whether `by` could blow up the other king with its next move, if it
/// were to move: an enemy piece next to that king is attacked by one of
/// `by`'s pieces (kings cannot capture), and the blast would not take
/// `by`'s own king too. The atomic counterpart of a check, except that it
/// can be ignored at the cost of the game.
pub(crate) fn explosion_threat(board: &Board, by: Color) -> bool {
    let (Some(victim), Some(own)) = (board.king_of(!by), board.king_of(by)) else {
        return false;
    };
    let near_own = attacks::king_attacks(own).with(own);
    let targets = attacks::king_attacks(victim) & board.by_color(!by);
    let occupied = board.occupied();
    targets.into_iter().any(|sq| !near_own.contains(sq) && (board.attackers(sq, by, occupied) - board.kings()).any())
}

/// An enemy queen near our king is the usual mating piece in atomic.
#[inline(always)]
fn queen_exposure(board: &Board, color: Color, king: fogblast_rules::Square, w: &Weights) -> i32 {
    if w[term::QUEEN_NEAR] == 0 {
        return 0;
    }
    let their_queens = board.queens() & board.by_color(!color);
    their_queens.into_iter().map(|q| (7 - q.distance(king) as i32).max(0) * w[term::QUEEN_NEAR]).sum()
}

#[cfg(test)]
mod tests {
    use fogblast_rules::{attacks, Board, Color, Position, Role, Variant};

    use super::{centrality, term, Weights, ATOMIC_WEIGHTS, STANDARD_WEIGHTS};

    // The evaluation as it was before the attack maps: every term square by
    // square (the pawn structure, which did not change, is the one above).
    // The faster one must give exactly the same scores.
    fn reference(pos: &Position, w: &Weights) -> i32 {
        let us = pos.turn();
        side_score(pos, us, w) - side_score(pos, !us, w) + w[term::TEMPO]
    }

    fn is_endgame(board: &Board) -> bool {
        board.queens().is_empty() || (board.occupied() - board.pawns() - board.kings()).count() <= 4
    }

    fn side_score(pos: &Position, color: Color, w: &Weights) -> i32 {
        let board = pos.board();
        let variant = pos.variant();
        let ours = board.by_color(color);
        let occupied = board.occupied();
        let endgame = is_endgame(board);
        let mut score = 0;

        for role in Role::ALL {
            let pieces = board.by_piece(role.of(color));
            if role != Role::King {
                score += w[role.index()] * pieces.count() as i32;
            }
            for sq in pieces {
                if !endgame && matches!(role, Role::Knight | Role::Bishop | Role::Rook | Role::Queen) {
                    // Atomic pieces defend themselves (their captor explodes
                    // with them), so pieces pushed forward are an asset.
                    score += (sq.rank().relative(color == Color::Black).index() as i32 - 3) * w[term::PIECE_ADVANCE];
                }
                let mobility = || (attacks::attacks(role, color, sq, occupied) - ours).count() as i32;
                score += match role {
                    Role::Pawn => {
                        let advance = sq.rank().relative(color == Color::Black).index() as i32 - 1;
                        advance * advance * w[term::PAWN_ADVANCE]
                            + if (2..=5).contains(&sq.file().index()) { w[term::PAWN_CENTRE] } else { 0 }
                    }
                    Role::Knight => centrality(sq) * w[term::KNIGHT_CENTRE] + mobility() * w[term::KNIGHT_MOBILITY],
                    Role::Bishop => centrality(sq) * w[term::BISHOP_CENTRE] + mobility() * w[term::BISHOP_MOBILITY],
                    Role::Rook => mobility() * w[term::ROOK_MOBILITY],
                    Role::Queen => mobility() * w[term::QUEEN_MOBILITY],
                    Role::King if endgame => centrality(sq) * w[term::KING_CENTRE_ENDGAME],
                    Role::King => -centrality(sq) * w[term::KING_CENTRE_MIDDLEGAME],
                };
            }
        }
        if (ours & board.bishops()).more_than_one() {
            score += w[term::BISHOP_PAIR];
        }
        if variant == Variant::Atomic {
            score += atomic_king_terms(pos, color, w) + super::pawn_structure(board, color, w);
        }
        score
    }

    fn atomic_king_terms(pos: &Position, color: Color, w: &Weights) -> i32 {
        let board = pos.board();
        let (Some(king), Some(their_king)) = (board.king_of(color), board.king_of(!color)) else {
            return 0;
        };
        if attacks::king_attacks(king).contains(their_king) {
            // Connected kings cannot be exploded by a capture next to both, and
            // cannot be checked: a refuge for the side with less.
            return w[term::CONNECTED_KINGS];
        }
        let occupied = board.occupied();
        let ours = board.by_color(color);
        let mut score = 0;

        // Our pieces next to our king that an enemy piece can capture: each is
        // a way to blow up our king.
        let fuses = attacks::king_attacks(king) & ours;
        for sq in fuses {
            if (board.attackers(sq, !color, occupied) - board.kings()).any() {
                score -= w[term::FUSE_ATTACKED];
            } else {
                score -= w[term::FUSE];
            }
        }
        // Pawns beside the king survive explosions and block lines.
        score += (attacks::king_attacks(king) & ours & board.pawns()).count() as i32 * w[term::KING_PAWN];

        score += (7 - king.distance(their_king) as i32) * w[term::KINGS_CLOSE];
        score + king_danger(board, color, king, their_king, w) - queen_exposure(board, color, king, w)
    }

    fn king_danger(
        board: &Board,
        color: Color,
        king: fogblast_rules::Square,
        their_king: fogblast_rules::Square,
        w: &Weights,
    ) -> i32 {
        let occupied = board.occupied();
        let zone = attacks::king_attacks(their_king);
        let near_ours = attacks::king_attacks(king).with(king);
        let mut attacked = 0;
        let mut escapes = 0;
        let mut blasts = 0;
        for sq in zone {
            let attackers = (board.attackers(sq, color, occupied) - board.kings()).count() as i32;
            attacked += attackers.min(2);
            if board.by_color(!color).contains(sq) {
                // A capture here blows up their king, unless ours is in the blast too.
                if attackers > 0 && !near_ours.contains(sq) {
                    blasts += 1;
                }
            } else if attackers == 0 {
                escapes += 1;
            }
        }
        let danger = (w[term::DANGER_ATTACKED] * attacked / (escapes + 1) + w[term::DANGER_BLAST] * blasts).max(0);
        (danger * danger / 5).min(w[term::DANGER_CAP]) + attacked * w[term::ATTACK]
    }

    fn queen_exposure(board: &Board, color: Color, king: fogblast_rules::Square, w: &Weights) -> i32 {
        let their_queens = board.queens() & board.by_color(!color);
        their_queens.into_iter().map(|q| (7 - q.distance(king) as i32).max(0) * w[term::QUEEN_NEAR]).sum()
    }

    #[test]
    fn the_evaluation_equals_the_square_by_square_one() {
        let mut seed = 3u64;
        let random_weights = |seed: &mut u64| -> Weights {
            std::array::from_fn(|_| {
                *seed = crate::search::splitmix(*seed);
                (*seed % 301) as i32 - 100
            })
        };
        let weight_sets: Vec<Weights> =
            vec![ATOMIC_WEIGHTS, STANDARD_WEIGHTS, random_weights(&mut seed), random_weights(&mut seed)];
        for variant in [Variant::Atomic, Variant::Standard] {
            for _ in 0..60 {
                let mut pos = Position::new(variant);
                for _ in 0..150 {
                    for w in &weight_sets {
                        assert_eq!(super::evaluate_with(&pos, w), reference(&pos, w), "{}", pos.fen());
                    }
                    let moves = pos.legal_moves();
                    if moves.is_empty() || pos.outcome().is_some() {
                        break;
                    }
                    seed = crate::search::splitmix(seed);
                    pos.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
                }
            }
        }
    }
}
