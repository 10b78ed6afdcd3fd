//! Static evaluation in centipawns from the side to move's point of view.
//! Atomic chess turns king safety inside out: any of your pieces next to
//! your own king is a fuse, because capturing it explodes the king; pawns
//! beside the king survive blasts; touching kings cannot be checked.

use fogblast_rules::attacks;
use fogblast_rules::{Board, Color, Position, Role, Variant};

/// Material values, by role, for atomic chess. Knights explode without
/// reaching far, so they are worth less than bishops.
const ATOMIC_VALUES: [i32; 6] = [100, 260, 320, 480, 950, 0];
const STANDARD_VALUES: [i32; 6] = [100, 320, 330, 500, 900, 0];

pub fn piece_value(variant: Variant, role: Role) -> i32 {
    match variant {
        Variant::Atomic => ATOMIC_VALUES[role.index()],
        _ => STANDARD_VALUES[role.index()],
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
    let us = pos.turn();
    side_score(pos, us) - side_score(pos, !us) + tempo(pos)
}

fn tempo(pos: &Position) -> i32 {
    match pos.variant() {
        // The side to move in atomic often has a forcing explosion.
        Variant::Atomic => 20,
        _ => 10,
    }
}

/// Whether the queens are off or little material is left.
fn is_endgame(board: &Board) -> bool {
    board.queens().is_empty() || (board.occupied() - board.pawns() - board.kings()).count() <= 4
}

fn side_score(pos: &Position, color: Color) -> i32 {
    let board = pos.board();
    let variant = pos.variant();
    let ours = board.by_color(color);
    let occupied = board.occupied();
    let endgame = is_endgame(board);
    let mut score = 0;

    for role in Role::ALL {
        let pieces = board.by_piece(role.of(color));
        score += piece_value(variant, role) * pieces.count() as i32;
        for sq in pieces {
            let mobility = || (attacks::attacks(role, color, sq, occupied) - ours).count() as i32;
            score += match role {
                Role::Pawn => {
                    let advance = sq.rank().relative(color == Color::Black).index() as i32 - 1;
                    advance * advance * 3 + if (2..=5).contains(&sq.file().index()) { 4 } else { 0 }
                }
                Role::Knight => centrality(sq) * 8 + mobility() * 3,
                Role::Bishop => centrality(sq) * 3 + mobility() * 4,
                Role::Rook => mobility() * 2,
                Role::Queen => mobility(),
                Role::King if endgame => centrality(sq) * 10,
                Role::King => -centrality(sq) * 10,
            };
        }
    }
    if (ours & board.bishops()).more_than_one() {
        score += 30;
    }
    if variant == Variant::Atomic {
        score += atomic_king_terms(pos, color);
    }
    score
}

/// Atomic king safety for `color`: fuses next to our king, threats next to
/// theirs, and the shelter of touching kings.
fn atomic_king_terms(pos: &Position, color: Color) -> i32 {
    let board = pos.board();
    let (Some(king), Some(their_king)) = (board.king_of(color), board.king_of(!color)) else {
        return 0;
    };
    let near_their_king = attacks::king_attacks(their_king);
    if attacks::king_attacks(king).contains(their_king) {
        // Connected kings cannot be exploded by a capture next to both, and
        // cannot be checked: a refuge for the side with less.
        return 25;
    }
    let occupied = board.occupied();
    let ours = board.by_color(color);
    let theirs = board.by_color(!color);
    let mut score = 0;

    // Our pieces next to our king that an enemy piece can capture: each is
    // a way to blow up our king.
    let fuses = attacks::king_attacks(king) & ours;
    for sq in fuses {
        if (board.attackers(sq, !color, occupied) - board.kings()).any() {
            score -= 90;
        } else {
            score -= 6;
        }
    }
    // Pawns beside the king survive explosions and block lines.
    score += (attacks::king_attacks(king) & ours & board.pawns()).count() as i32 * 8;

    // Their pieces next to their king that we attack.
    let targets = near_their_king & theirs;
    for sq in targets {
        if (board.attackers(sq, color, occupied) - board.kings()).any() {
            score += 70;
        }
    }
    // Pressure on the squares around their king.
    let mut pressure = 0;
    for sq in near_their_king {
        pressure += (board.attackers(sq, color, occupied) - board.kings()).count() as i32;
    }
    score + pressure * 6 - queen_exposure(board, color, king)
}

/// An enemy queen near our king is the usual mating piece in atomic.
fn queen_exposure(board: &Board, color: Color, king: fogblast_rules::Square) -> i32 {
    let their_queens = board.queens() & board.by_color(!color);
    their_queens.into_iter().map(|q| (7 - q.distance(king) as i32).max(0) * 4).sum()
}
