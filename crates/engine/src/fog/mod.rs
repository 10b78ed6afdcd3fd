//! The fog-of-war computer player. It never sees the game's position: its
//! entry point, [`best_fog_move`], takes a [`FogObservation`] (what its
//! side was shown after every ply, its own moves and the squares where it
//! lost pieces out of sight), tracks a bounded sample of the positions
//! consistent with all of it ([`Belief`]), and chooses a move by searching
//! sampled positions and averaging the results (determinization).

mod belief;
mod observation;
mod player;
mod reach;
mod rng;

pub use belief::{Belief, BeliefError};
pub use observation::{FogObservation, ObservationError, ObservedPly, Sight};
pub use player::{best_fog_move, fog_evaluate, FogError, FogLimits, FogReport, FogSettings, FORMER_HARD, PRIOR_HARD};

/// The baseline fog player the levels are measured against: a random
/// capture among those it sees, else a random move. It needs no more than
/// its own view (every capture lands on a visible square, and the moves
/// of a side depend only on what it sees), so it is given the legal moves.
pub fn baseline_move(moves: &[fogblast_rules::Move], seed: u64) -> Option<fogblast_rules::Move> {
    let captures: Vec<_> = moves.iter().copied().filter(|m| m.is_capture()).collect();
    let pool: &[fogblast_rules::Move] = if captures.is_empty() { moves } else { &captures };
    if pool.is_empty() {
        return None;
    }
    let mut rng = rng::Rng::new(seed);
    Some(pool[rng.below(pool.len())])
}
