//! Seeded engine self-play, the games puzzles are cut from when no archive
//! is given. The same seed gives the same game, so a puzzle whose source
//! names a self-play game (`selfplay fog seed 7 ply 31`) can be checked
//! again against the game it came from ([`crate::fog::verify_in_game`]).

use std::sync::atomic::AtomicBool;

use fogblast_engine::{Limits, Searcher};
use fogblast_rules::{Move, Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The engine playing both sides from `start`: `random_plies` random
/// moves, then depth-3 searches with up to 120 centipawns of noise and a
/// random move one time in eight, to at most `max_plies` plies or the
/// game's end.
pub fn play_noisy(start: &Position, rng: &mut StdRng, random_plies: usize, max_plies: usize) -> Vec<Move> {
    let mut searcher = Searcher::new(8);
    let mut pos = *start;
    let mut moves = Vec::new();
    while moves.len() < max_plies && pos.outcome().is_none() {
        let legal = pos.legal_moves();
        let m = if moves.len() < random_plies || rng.random_range(0..8) == 0 {
            legal[rng.random_range(0..legal.len())]
        } else {
            let limits = Limits { depth: Some(3), eval_noise: 120, seed: rng.random(), ..Limits::default() };
            let report = searcher.search(&pos, &[], &limits, &AtomicBool::new(false), &mut |_| {});
            report.best.unwrap_or(legal[0])
        };
        moves.push(m);
        pos.play_unchecked(m);
    }
    moves
}

/// One seeded self-play game of `variant` from the standard start: six
/// random plies, then [`play_noisy`]'s search, to at most 160 plies.
pub fn selfplay_game(variant: Variant, seed: u64) -> Vec<Move> {
    let mut rng = StdRng::seed_from_u64(seed);
    play_noisy(&Position::new(variant), &mut rng, 6, 160)
}

/// A self-play game's source name, as puzzles record it.
pub fn source_name(variant: Variant, seed: u64) -> String {
    format!("selfplay {} seed {seed}", variant.name())
}

/// The variant, seed and ply of a puzzle source written as
/// `{source_name} ply {ply}`; `None` for other sources.
pub fn parse_source(source: &str) -> Option<(Variant, u64, usize)> {
    let mut words = source.split_whitespace();
    let (Some("selfplay"), Some(variant), Some("seed"), Some(seed), Some("ply"), Some(ply), None) =
        (words.next(), words.next(), words.next(), words.next(), words.next(), words.next(), words.next())
    else {
        return None;
    };
    Some((Variant::from_name(variant)?, seed.parse().ok()?, ply.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_reads_back() {
        let name = format!("{} ply 31", source_name(Variant::Fog, 7));
        assert_eq!(parse_source(&name), Some((Variant::Fog, 7, 31)));
        assert_eq!(parse_source("game 12 ply 3"), None);
        assert_eq!(parse_source("selfplay fog seed x ply 3"), None);
    }

    #[test]
    fn the_same_seed_plays_the_same_game() {
        let game = selfplay_game(Variant::Atomic, 3);
        assert!(game.len() > 6);
        assert_eq!(selfplay_game(Variant::Atomic, 3), game);
    }
}
