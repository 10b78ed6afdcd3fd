//! Belief tracking: a bounded sample of the positions consistent with
//! everything one side has observed. Each of our moves is played in every
//! candidate and checked against what we saw after it; each opponent ply
//! expands every candidate by all of the opponent's moves and keeps the
//! children that show us exactly what we saw (and flag exactly the pieces
//! we lost). When more remain than the cap allows, a seeded random sample
//! is kept. Should the sample lose the true position (every candidate
//! contradicted), the belief is rebuilt from the latest sight: our pieces
//! and the enemy pieces we see, with the rest of the enemy material spread
//! over the fog where it cannot have been seen.

use std::collections::HashSet;

use fogblast_rules::attacks;
use fogblast_rules::{Bitboard, Board, Color, Position, Rank, Role, Setup, Variant};

use super::observation::{FogObservation, ObservedPly, Sight};
use super::rng::Rng;

/// Why an observation cannot be a game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BeliefError {
    #[error("ply {ply}: our move {uci} is not legal in what we saw")]
    IllegalOwnMove { ply: usize, uci: String },
    #[error("ply {ply}: the game was already over")]
    GameOver { ply: usize },
}

/// The candidates after every ply, and what tracking them cost.
#[derive(Clone, Debug)]
pub struct Belief {
    color: Color,
    particles: Vec<Position>,
    /// The number of candidates after each ply (after sampling).
    pub sizes: Vec<usize>,
    /// How many consistent candidates each ply produced before sampling.
    pub consistent: Vec<usize>,
    /// Plies at which every candidate was contradicted and the belief was
    /// rebuilt from the sight.
    pub rebuilds: usize,
}

impl Belief {
    /// Follows `obs` from the standard start, keeping at most `cap`
    /// candidates (at least one).
    pub fn track(obs: &FogObservation, cap: usize, seed: u64) -> Result<Belief, BeliefError> {
        Belief::track_with(obs, cap, seed, false)
    }

    /// As [`Belief::track`]; with `keep_threats`, an opponent ply that
    /// leaves more candidates than the cap keeps first (up to a third of the
    /// cap each) those in which the opponent's move attacks our king, then
    /// those in which it bears on the squares around it, and fills the rest
    /// at random. The sample then loses least often the positions that
    /// could cost us the king, which are the ones the king guard needs.
    pub fn track_with(obs: &FogObservation, cap: usize, seed: u64, keep_threats: bool) -> Result<Belief, BeliefError> {
        let cap = cap.max(1);
        let color = obs.color();
        let mut rng = Rng::new(seed ^ 0x5eed_fb0f);
        let mut belief = Belief {
            color,
            particles: vec![Position::new(Variant::Fog)],
            sizes: Vec::with_capacity(obs.plies().len()),
            consistent: Vec::with_capacity(obs.plies().len()),
            rebuilds: 0,
        };
        for (ply, observed) in obs.plies().iter().enumerate() {
            if belief.particles.iter().all(|p| p.outcome().is_some_and(|o| o.winner().is_some())) {
                return Err(BeliefError::GameOver { ply });
            }
            let previous = belief.particles.clone();
            let mut next = Vec::new();
            // With `keep_threats`, how each of `next` bears on our king: 0
            // attacks it, 1 attacks a square next to it, 2 neither.
            let mut threat = Vec::new();
            let mut seen = HashSet::new();
            match observed {
                ObservedPly::Own { uci, after } => {
                    let mut legal_somewhere = false;
                    for pos in &belief.particles {
                        let Some(m) = pos.parse_uci(uci) else { continue };
                        legal_somewhere = true;
                        let mut child = *pos;
                        child.play_unchecked(m);
                        if after.matches(&child, color) && seen.insert(child.zobrist_hash()) {
                            next.push(child);
                        }
                    }
                    // Tracked candidates all share our history, so a move
                    // none of them allows is not ours to have played; after a
                    // rebuild, though, the guesses may be what is wrong.
                    if !legal_somewhere && belief.rebuilds == 0 {
                        return Err(BeliefError::IllegalOwnMove { ply, uci: uci.to_string() });
                    }
                    belief.consistent.push(next.len());
                    if next.is_empty() {
                        next = rebuild(&previous, Some(*uci), after, Bitboard::EMPTY, color, cap, &mut rng);
                        belief.rebuilds += 1;
                    }
                }
                ObservedPly::Opponent { after, lost } => {
                    for pos in &belief.particles {
                        if pos.board().king_of(Color::White).is_none() || pos.board().king_of(Color::Black).is_none() {
                            continue;
                        }
                        let ours = pos.board().by_color(color);
                        for m in pos.legal_moves() {
                            let mut child = *pos;
                            child.play_unchecked(m);
                            let flagged = (ours - child.board().by_color(color)) - after.visible();
                            if flagged == *lost && after.matches(&child, color) && seen.insert(child.zobrist_hash()) {
                                if keep_threats {
                                    threat.push(threat_tier(&child, m, color));
                                }
                                next.push(child);
                            }
                        }
                    }
                    belief.consistent.push(next.len());
                    if next.is_empty() {
                        next = rebuild(&previous, None, after, *lost, color, cap, &mut rng);
                        belief.rebuilds += 1;
                    }
                }
            }
            if next.len() > cap && threat.len() == next.len() {
                next = keep_threatening(next, &threat, cap, &mut rng);
            } else if next.len() > cap {
                rng.shuffle(&mut next);
                next.truncate(cap);
            }
            belief.sizes.push(next.len());
            belief.particles = next;
        }
        Ok(belief)
    }

    pub fn color(&self) -> Color {
        self.color
    }

    /// The candidate positions now.
    pub fn particles(&self) -> &[Position] {
        &self.particles
    }

    pub fn len(&self) -> usize {
        self.particles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }
}

/// How the opponent's move `m`, which made `child`, bears on our king: 0
/// attacks it, 1 attacks a square next to it, 2 neither.
fn threat_tier(child: &Position, m: fogblast_rules::Move, color: Color) -> u8 {
    let board = child.board();
    let Some(king) = board.king_of(color) else { return 0 };
    if board.attackers(king, !color, board.occupied()).any() {
        return 0;
    }
    let reach = attacks::attacks(m.promotion().unwrap_or(m.role()), !color, m.to(), board.occupied());
    if (reach & attacks::king_attacks(king)).any() {
        1
    } else {
        2
    }
}

/// `cap` of `next`: up to a third of the cap from each of the first two
/// tiers of `threat`, at random within a tier, the rest at random.
fn keep_threatening(next: Vec<Position>, threat: &[u8], cap: usize, rng: &mut Rng) -> Vec<Position> {
    let mut tiers: [Vec<Position>; 3] = Default::default();
    for (pos, &tier) in next.into_iter().zip(threat) {
        tiers[usize::from(tier.min(2))].push(pos);
    }
    let mut kept = Vec::with_capacity(cap);
    let mut rest = Vec::new();
    for (i, mut tier) in tiers.into_iter().enumerate() {
        rng.shuffle(&mut tier);
        if i < 2 {
            let quota = (cap / 3).max(1).min(tier.len());
            rest.extend(tier.drain(quota..));
            kept.extend(tier);
        } else {
            rest.extend(tier);
        }
    }
    rng.shuffle(&mut rest);
    rest.truncate(cap.saturating_sub(kept.len()));
    kept.extend(rest);
    kept
}

/// What the fog itself says, for `color` looking at `sight`: the fogged
/// squares an enemy piece must stand on (right in front of our pawn, or a
/// double step behind an empty square: fogged only because something is
/// there), and the fogged squares no enemy piece can stand on (our pawns
/// would see it).
fn fog_constraints(sight: &Sight, color: Color) -> (Bitboard, Bitboard) {
    let seen_board = sight.board();
    let hidden = !sight.visible();
    let our_pawns = seen_board.by_piece(Role::Pawn.of(color));
    let occupied = seen_board.occupied();
    let forward: i8 = if color == Color::White { 1 } else { -1 };
    let single = our_pawns.shift_ranks(forward);
    let double =
        ((single - occupied) & sight.visible() & Bitboard::relative_rank(color, Rank::THIRD)).shift_ranks(forward);
    let mut forbidden = Bitboard::EMPTY;
    for sq in our_pawns {
        forbidden |= attacks::pawn_attacks(color, sq);
    }
    (((single | double) & hidden) - forbidden, forbidden & hidden)
}

/// A position that gives `color`, to move, exactly the moves it has: what
/// it sees, enemy pawns on the fogged squares that block its pawns, and the
/// castling rights of `rights_from` that the board allows. Our moves depend
/// only on what we see, so this needs no guess about the rest of the fog.
pub(crate) fn moves_position(sight: &Sight, color: Color, rights_from: &Position) -> Option<Position> {
    let (pushes, forbidden) = fog_constraints(sight, color);
    let mut board = *sight.board();
    for sq in pushes {
        let role = if Bitboard::BACKRANKS.contains(sq) { Role::Knight } else { Role::Pawn };
        board.set_piece_at(sq, role.of(!color));
    }
    // The rules move nobody once a king is gone: an unseen enemy king
    // stands somewhere in the fog where it changes none of our moves.
    if board.king_of(!color).is_none() {
        let spot = (!sight.visible() - forbidden - pushes).first()?;
        board.set_piece_at(spot, Role::King.of(!color));
    }
    let setup = Setup {
        board,
        turn: color,
        castling_rooks: rights_from.castling_rooks() & Bitboard::relative_rank(color, Rank::FIRST),
        ep_square: sight.ep_square(),
        halfmoves: 0,
        fullmoves: rights_from.fullmoves().max(1),
    };
    let bare = Setup { castling_rooks: Bitboard::EMPTY, ..setup.clone() };
    Position::from_setup(setup, Variant::Fog).or_else(|_| Position::from_setup(bare, Variant::Fog)).ok()
}

/// Most candidates a rebuild guesses.
const REBUILD_CAP: usize = 512;

/// Candidates consistent with `sight` when no tracked candidate is: our
/// pieces and the enemy pieces in sight as they are, the rest of the enemy
/// material of a former candidate placed at random in the fog, where
/// nothing of ours would have seen it. `own_move` is our move that led to
/// the sight, if it was ours; otherwise it is our turn.
fn rebuild(
    previous: &[Position],
    own_move: Option<fogblast_rules::Uci>,
    sight: &Sight,
    lost: Bitboard,
    color: Color,
    cap: usize,
    rng: &mut Rng,
) -> Vec<Position> {
    // Guesses are costly to make and no better for being many: a large
    // belief is rebuilt to a few hundred.
    let cap = cap.min(REBUILD_CAP);
    let them = !color;
    let turn = if own_move.is_some() { them } else { color };
    let template = previous.first().copied().unwrap_or_else(|| Position::new(Variant::Fog));
    let material = hidden_material(&template, own_move, sight, them);
    let hidden = !sight.visible();
    let (pushes, forbidden) = fog_constraints(sight, color);
    // A lost piece's square usually holds its taker, unless it was taken en
    // passant or the square would have been seen.
    let forced = pushes | (lost - forbidden);
    let squares = FogSquares { forced, free: hidden - forbidden - forced };
    let castling = template.castling_rooks() & Bitboard::relative_rank(color, Rank::FIRST);
    let fullmoves = template.fullmoves().max(1);

    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut fallback = None;
    let attempts = 40 * cap.max(4);
    for _ in 0..attempts {
        if out.len() >= cap {
            break;
        }
        let Some(board) = place_guess(&material, sight.board(), &squares, them, rng) else { continue };
        let setup = Setup {
            board,
            turn,
            castling_rooks: castling,
            ep_square: if turn == color { sight.ep_square() } else { None },
            halfmoves: 0,
            fullmoves,
        };
        let Some(pos) = legal_guess(setup) else { continue };
        if sight.matches(&pos, color) {
            if seen.insert(pos.zobrist_hash()) {
                out.push(pos);
            }
        } else if fallback.is_none() {
            fallback = Some(pos);
        }
    }
    if out.is_empty() {
        // Nothing fits exactly (a sight the rules cannot produce); play on
        // from the nearest guess rather than not at all.
        out.extend(fallback);
    }
    if out.is_empty() {
        out.push(template);
    }
    out
}

/// The enemy material a rebuild places in the fog, by role: the former
/// candidate's, less what our move took and what is in sight; a king only
/// when none is seen.
fn hidden_material(
    template: &Position,
    own_move: Option<fogblast_rules::Uci>,
    sight: &Sight,
    them: Color,
) -> [usize; 6] {
    let mut material = [0usize; 6];
    for role in Role::ALL {
        material[role.index()] = (template.board().by_piece(role.of(them))).count();
    }
    if let Some(uci) = own_move {
        if let Some(role) =
            template.board().role_at(uci.to).filter(|_| template.board().by_color(them).contains(uci.to))
        {
            material[role.index()] = material[role.index()].saturating_sub(1);
        }
    }
    let seen_board = sight.board();
    for role in Role::ALL {
        let visible = seen_board.by_piece(role.of(them)).count();
        material[role.index()] = material[role.index()].saturating_sub(visible);
    }
    let king_seen = seen_board.by_piece(Role::King.of(them)).any();
    material[Role::King.index()] = usize::from(!king_seen);
    material
}

/// Where a rebuild may put the enemy's hidden pieces: squares that must
/// hold one, and the rest of the fog it may use.
struct FogSquares {
    forced: Bitboard,
    free: Bitboard,
}

/// One random placement of `material` on the fogged squares around what is
/// seen; `None` when the king found no square.
fn place_guess(
    material: &[usize; 6],
    seen_board: &Board,
    squares: &FogSquares,
    them: Color,
    rng: &mut Rng,
) -> Option<Board> {
    let mut pieces: Vec<Role> = Vec::new();
    for role in Role::ALL {
        pieces.extend(std::iter::repeat_n(role, material[role.index()]));
    }
    rng.shuffle(&mut pieces);
    // The king first, so it always finds a square.
    if let Some(k) = pieces.iter().position(|&r| r == Role::King) {
        pieces.swap(0, k);
    }
    let mut board: Board = *seen_board;
    let mut forced_left: Vec<_> = squares.forced.into_iter().collect();
    rng.shuffle(&mut forced_left);
    let mut free_left: Vec<_> = squares.free.into_iter().collect();
    rng.shuffle(&mut free_left);
    // Every forced square needs a piece even if the material ran short.
    while pieces.len() < forced_left.len() {
        pieces.push(Role::Knight);
    }
    let mut ok = true;
    for (i, role) in pieces.iter().enumerate() {
        let pool = if i < forced_left.len() && *role != Role::King { &mut forced_left } else { &mut free_left };
        let pick = pool.iter().position(|sq| *role != Role::Pawn || !Bitboard::BACKRANKS.contains(*sq));
        let Some(pick) = pick.map(|i| pool.swap_remove(i)) else {
            if *role == Role::King {
                ok = false;
            }
            continue;
        };
        board.set_piece_at(pick, role.of(them));
    }
    for sq in forced_left {
        board.set_piece_at(sq, Role::Knight.of(them));
    }
    ok.then_some(board)
}

/// The guess as a position: a guess the rules refuse loses the en passant
/// square first, and the castling rights only if that is not enough.
fn legal_guess(setup: Setup) -> Option<Position> {
    let without_ep = Setup { ep_square: None, ..setup.clone() };
    let bare = Setup { castling_rooks: Bitboard::EMPTY, ..without_ep.clone() };
    Position::from_setup(setup, Variant::Fog)
        .or_else(|_| Position::from_setup(without_ep, Variant::Fog))
        .or_else(|_| Position::from_setup(bare, Variant::Fog))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_rules::Game;

    fn random_game(seed: u64, plies: usize) -> Game {
        let mut rng = Rng::new(seed);
        let mut game = Game::new(Position::new(Variant::Fog));
        for _ in 0..plies {
            if game.outcome().is_some() {
                break;
            }
            let moves = game.position().legal_moves();
            let m = moves[rng.below(moves.len())];
            game.play(m).unwrap();
        }
        game
    }

    #[test]
    fn the_true_position_stays_in_an_uncapped_belief() {
        for seed in 0..6 {
            let game = random_game(seed, 12);
            for color in Color::ALL {
                let obs = FogObservation::from_game(&game, color);
                let belief = Belief::track(&obs, 1_000_000, seed).unwrap();
                assert_eq!(belief.rebuilds, 0, "seed {seed}");
                assert!(
                    belief.particles().iter().any(|p| p.board() == game.position().board()),
                    "seed {seed} {color}: the real board is not among {} candidates",
                    belief.len()
                );
                for p in belief.particles() {
                    assert!(
                        FogObservation::from_game(&game, color).plies().last().is_none_or(|last| {
                            let sight = match last {
                                ObservedPly::Own { after, .. } | ObservedPly::Opponent { after, .. } => after,
                            };
                            sight.matches(p, color)
                        }),
                        "a candidate contradicts the last sight"
                    );
                }
            }
        }
    }

    #[test]
    fn a_rebuilt_belief_fits_the_sight_and_keeps_our_castling_rights() {
        let mut start = Position::new(Variant::Fog);
        for uci in ["e2e4", "e7e5", "g1f3", "b8c6"] {
            let m = start.parse_uci(&uci.parse().unwrap()).unwrap();
            start.play_unchecked(m);
        }
        let sight = Sight::from_view(&start.fog_view(Color::White));
        let rebuilt = rebuild(&[start], None, &sight, Bitboard::EMPTY, Color::White, 24, &mut Rng::new(5));
        assert!(rebuilt.len() > 1, "several guesses: {}", rebuilt.len());
        for pos in &rebuilt {
            assert!(sight.matches(pos, Color::White), "{}", pos.fen());
            assert_eq!(
                pos.castling_rook(Color::White, fogblast_rules::CastlingSide::KingSide),
                Some(fogblast_rules::Square::H1)
            );
            assert_eq!(pos.board().by_color(Color::Black).count(), 16, "{}", pos.fen());
        }
    }

    #[test]
    fn the_sight_alone_gives_our_moves() {
        use fogblast_rules::CastlingMode;
        for seed in 0..200 {
            let game = random_game(seed, (seed % 90) as usize);
            let pos = *game.position();
            if game.outcome().is_some() {
                continue;
            }
            let color = pos.turn();
            let sight = Sight::from_view(&pos.fog_view(color));
            let mover = moves_position(&sight, color, &pos).expect("a position from the sight");
            let names = |p: &Position| {
                let mut v: Vec<String> =
                    p.legal_moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
                v.sort();
                v
            };
            assert_eq!(names(&mover), names(&pos), "seed {seed}: {} from {}", mover.fen(), pos.fen());
        }
    }

    #[test]
    fn a_capped_belief_stays_consistent_and_bounded() {
        for seed in 10..18 {
            let game = random_game(seed, 40);
            let obs = FogObservation::from_game(&game, Color::White);
            // Half the games keep the threatening candidates first.
            let belief = Belief::track_with(&obs, 16, seed, seed % 2 == 1).unwrap();
            assert!(belief.sizes.iter().all(|&n| (1..=16).contains(&n)), "{:?}", belief.sizes);
            let last = obs.plies().last().unwrap();
            let sight = match last {
                ObservedPly::Own { after, .. } | ObservedPly::Opponent { after, .. } => after,
            };
            // Rebuilt candidates may only guess; tracked ones match exactly.
            if belief.rebuilds == 0 {
                assert!(belief.particles().iter().all(|p| sight.matches(p, Color::White)));
            }
            for p in belief.particles() {
                assert_eq!(p.board().by_color(Color::White), game.position().board().by_color(Color::White));
            }
        }
    }
}
