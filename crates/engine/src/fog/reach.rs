//! Where each kind of enemy piece could possibly stand: a bound that, unlike
//! the belief's sample, can never lose the real position. It starts from the
//! enemy's starting squares; after each enemy ply every square one of its
//! pieces of a kind could have reached is added for that kind (as if every
//! piece had moved, with only our own pieces blocking lines, pawns
//! promoting to any piece), and after every ply the squares in sight are set
//! to exactly what is seen there. A role none of whose pieces can be out of
//! sight (as many in sight as the enemy can have: its starting number, less
//! the ones we took, more any pawn that could have promoted) has none in the
//! fog. Every real enemy piece stays inside the
//! bound; what it gains in safety it pays in width, so the king guard uses
//! it only below the belief's own verdicts.

use fogblast_rules::attacks;
use fogblast_rules::{Bitboard, Board, Color, Rank, Role, Square};

use super::observation::{FogObservation, ObservedPly, Sight};

/// For each role (by [`Role::index`]), the squares an enemy piece of that
/// role could stand on now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EnemyReach {
    pub(crate) squares: [Bitboard; 6],
    /// Most enemy pieces of each role before promotions: the starting
    /// number less the ones we took.
    most: [u32; 6],
    /// Whether an enemy pawn could have reached its last rank.
    promoted: bool,
}

impl EnemyReach {
    /// Follows `obs` from the standard start.
    pub(crate) fn track(obs: &FogObservation) -> EnemyReach {
        let color = obs.color();
        let them = !color;
        let start = Board::standard();
        let mut squares = [Bitboard::EMPTY; 6];
        for role in Role::ALL {
            squares[role.index()] = start.by_piece(role.of(them));
        }
        let most = squares.map(|b| b.count() as u32);
        let mut reach = EnemyReach { squares, most, promoted: false };
        let mut seen = start;
        for ply in obs.plies() {
            let after = match ply {
                ObservedPly::Own { uci, after } => {
                    if let Some(role) = taken_by(&seen, uci.from, uci.to, them) {
                        reach.most[role.index()] = reach.most[role.index()].saturating_sub(1);
                    }
                    after
                }
                ObservedPly::Opponent { after, .. } => {
                    reach.spread(them, seen.by_color(color));
                    after
                }
            };
            reach.see(after, them);
            seen = *after.board();
        }
        reach
    }

    /// Every square one enemy move could take a piece of each role to,
    /// with `ours` the only blockers.
    fn spread(&mut self, them: Color, ours: Bitboard) {
        let before = self.squares;
        let last_rank = Bitboard::relative_rank(them, Rank::EIGHTH);
        for role in Role::ALL {
            let mut reached = Bitboard::EMPTY;
            for sq in before[role.index()] {
                reached |= match role {
                    Role::Pawn => pawn_reach(them, sq, ours),
                    Role::King => attacks::king_attacks(sq) | castling_reach(them, sq),
                    _ => attacks::attacks(role, them, sq, ours),
                };
            }
            if role == Role::Pawn {
                let promoted = reached & last_rank;
                self.promoted |= promoted.any();
                for piece in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
                    self.squares[piece.index()] |= promoted;
                }
                reached -= last_rank;
            }
            self.squares[role.index()] |= reached;
        }
    }

    /// Sets the squares in `sight` to exactly what is seen on them.
    fn see(&mut self, sight: &Sight, them: Color) {
        let visible = sight.visible();
        for role in Role::ALL {
            let i = role.index();
            let in_sight = sight.board().by_piece(role.of(them));
            let promotions = match role {
                Role::Pawn | Role::King => 0,
                _ if self.promoted => self.most[Role::Pawn.index()],
                _ => 0,
            };
            self.squares[i] = if in_sight.count() as u32 >= self.most[i] + promotions {
                in_sight
            } else {
                (self.squares[i] - visible) | in_sight
            };
        }
    }
}

/// The role of the enemy piece our move from `from` to `to` took, by what
/// we saw before it (`seen`): the piece on `to`, or a pawn taken en passant.
fn taken_by(seen: &Board, from: Square, to: Square, them: Color) -> Option<Role> {
    if let Some(piece) = seen.piece_at(to).filter(|p| p.color == them) {
        return Some(piece.role);
    }
    let pawn_sideways = seen.role_at(from) == Some(Role::Pawn) && from.file() != to.file();
    pawn_sideways.then_some(Role::Pawn)
}

/// Where an enemy pawn on `sq` could go: one or two steps ahead (two from
/// its starting rank) unless our piece stands in the way, and diagonally.
fn pawn_reach(them: Color, sq: Square, ours: Bitboard) -> Bitboard {
    let forward: i8 = if them == Color::White { 1 } else { -1 };
    let one = Bitboard::from_square(sq).shift_ranks(forward) - ours;
    let two = (one & Bitboard::relative_rank(them, Rank::THIRD)).shift_ranks(forward) - ours;
    one | two | attacks::pawn_attacks(them, sq)
}

/// The castling squares of a king on its starting square.
/// (The rooks' landing squares are on their own lines already.)
fn castling_reach(them: Color, sq: Square) -> Bitboard {
    let (start, steps) = match them {
        Color::White => (Square::E1, [Square::C1, Square::G1]),
        Color::Black => (Square::E8, [Square::C8, Square::G8]),
    };
    if sq == start {
        steps.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    } else {
        Bitboard::EMPTY
    }
}
