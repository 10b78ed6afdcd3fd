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
    if attacks::king_attacks(king).contains(their_king) {
        // Connected kings cannot be exploded by a capture next to both, and
        // cannot be checked: a refuge for the side with less.
        return 25;
    }
    let occupied = board.occupied();
    let ours = board.by_color(color);
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

    score + king_danger(board, color, king, their_king) - queen_exposure(board, color, king)
}

/// How close `color` is to blowing up the enemy king on `their_king`: the
/// squares around it we attack, set against its escapes, and above all the
/// captures that would explode it. Danger grows faster than its parts (a
/// second blast threat cannot be parried with one move), so it is squared.
fn king_danger(board: &Board, color: Color, king: fogblast_rules::Square, their_king: fogblast_rules::Square) -> i32 {
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
    let danger = 10 * attacked / (escapes + 1) + 25 * blasts;
    (danger * danger / 5).min(900) + attacked * 4
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
fn queen_exposure(board: &Board, color: Color, king: fogblast_rules::Square) -> i32 {
    let their_queens = board.queens() & board.by_color(!color);
    their_queens.into_iter().map(|q| (7 - q.distance(king) as i32).max(0) * 4).sum()
}
