//! Rating a game in its place among the games already rated: the pure
//! part of applying a finished game, with no database in it.
//!
//! Ratings follow the order games finished in. Given a rated game, the
//! rated games of its variant that finished after it (each with the
//! ratings its sides had before it) and the stored ratings of its two
//! players, [`rerate`] works out a [`Plan`]: the game's own ratings, the
//! later games rated again (those of its players, and of anyone whose
//! rating that changes), and every rating as it ends. The archive reads
//! what the plan needs and writes it in one transaction.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::game::EndReason;
use fogblast_ratings::{Rating, Score, Settings};
use fogblast_rules::Variant;

/// A rating as stored: before its deviation grows for the time since
/// `rated_ms`, the end of the player's last rated game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stored {
    pub rating: Rating,
    pub rated_ms: i64,
}

impl Stored {
    /// A newcomer's rating, as of their first game's end.
    pub fn newcomer(rated_ms: i64) -> Stored {
        Stored { rating: Rating::default(), rated_ms }
    }
}

/// A rated game as the ratings need it.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedGame {
    pub game_id: String,
    pub variant: Variant,
    /// When the game ended: its place in the order, and the ratings' clock.
    pub ended_ms: i64,
    pub white: String,
    pub black: String,
    pub white_score: Score,
}

impl RatedGame {
    /// The game as the ratings see it, if it moves ratings (see
    /// [`moves_ratings`]). A game without an end time is rated as of `now_ms`.
    pub fn from_finished(game: &GameFinished, now_ms: i64) -> Option<RatedGame> {
        if !moves_ratings(game) {
            return None;
        }
        let white_score = match game.result.as_str() {
            "1-0" => Score::Win,
            "0-1" => Score::Loss,
            _ => Score::Draw,
        };
        let id = |player: &Option<FinishedPlayer>| player.as_ref().map(|p| p.id.clone()).unwrap_or_default();
        Some(RatedGame {
            game_id: game.game_id.clone(),
            variant: archived_variant(game),
            // A rating's clock is the games' own: deviation grows for the
            // time between a player's games, whenever they are processed, so
            // a backlog after an outage is rated as it would have been live.
            ended_ms: if game.ended_at_ms > 0 { game.ended_at_ms as i64 } else { now_ms },
            white: id(&game.white),
            black: id(&game.black),
            white_score,
        })
    }

    /// Whether this game finished after `other`: by end time, then id.
    pub fn finished_after(&self, other: &RatedGame) -> bool {
        (self.ended_ms, &self.game_id) > (other.ended_ms, &other.game_id)
    }
}

/// The variant a finished game is archived and rated under: one that
/// names none counts as standard.
pub fn archived_variant(game: &GameFinished) -> Variant {
    Variant::try_from(game.variant()).unwrap_or(Variant::Standard)
}

/// Whether a finished game moves ratings: rated, between two people, with
/// a result (aborted games have none).
pub fn moves_ratings(game: &GameFinished) -> bool {
    let human = |p: &Option<FinishedPlayer>| p.as_ref().is_some_and(|p| !p.computer && !p.id.is_empty());
    game.rated
        && human(&game.white)
        && human(&game.black)
        && game.reason() != EndReason::Aborted
        && ["1-0", "0-1", "1/2-1/2"].contains(&game.result.as_str())
}

/// A rated game already recorded, with each side's stored rating before
/// it, `[white, black]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub game: RatedGame,
    pub priors: [Stored; 2],
}

/// A game as the plan rates it: its row of the rated games, each array
/// `[white, black]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedRow {
    pub game: RatedGame,
    /// The ratings as stored before the game.
    pub priors: [Stored; 2],
    /// The same after their deviation grew for the time away: what the
    /// game was rated from.
    pub befores: [Rating; 2],
    pub afters: [Rating; 2],
}

/// One player's rating as a plan leaves it, and what to add to their
/// counts (only the game being applied adds to them: a game rated again
/// was counted when it was first rated).
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerRating {
    pub player: String,
    pub stored: Stored,
    pub rated_games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
}

/// What applying a rated game changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The game itself, a new row of the rated games.
    pub game: RatedRow,
    /// Later games rated again, in the order they finished: rows replaced.
    pub rerated: Vec<RatedRow>,
    /// Every rating that changes, by player id.
    pub players: Vec<PlayerRating>,
}

/// Rates `game` in its place before `later` (the rated games of its
/// variant that finished after it, in the order they finished), from its
/// players' `stored` ratings `[white, black]`, and rates again every later
/// game it reaches: those of its players, and of anyone whose rating
/// that changes.
pub fn rerate(game: &RatedGame, later: &[Recorded], stored: [Stored; 2], settings: &Settings) -> Plan {
    let mut states = HashMap::new();
    let replay = reached(game, later, &mut states);
    // A player with a later game had, before this one, the rating they
    // had before that game; the stored rating is for the others.
    for (player, stored) in [&game.white, &game.black].into_iter().zip(stored) {
        states.entry(player.clone()).or_insert(stored);
    }
    let rated = rate(game, &mut states, settings);
    let rerated = replay.into_iter().map(|later| rate(later, &mut states, settings)).collect();
    let mut players: Vec<PlayerRating> = states
        .into_iter()
        .map(|(player, stored)| {
            let score = if player == game.white {
                Some(game.white_score)
            } else if player == game.black {
                Some(game.white_score.opponent())
            } else {
                None
            };
            let counts = |wanted: Score| i64::from(score == Some(wanted));
            PlayerRating {
                rated_games: i64::from(score.is_some()),
                wins: counts(Score::Win),
                losses: counts(Score::Loss),
                draws: counts(Score::Draw),
                player,
                stored,
            }
        })
        .collect();
    players.sort_by(|a, b| a.player.cmp(&b.player));
    Plan { game: rated, rerated, players }
}

/// The later games `game` reaches, in order, and the rating each player
/// they bring in had before their first of them.
fn reached<'a>(game: &RatedGame, later: &'a [Recorded], states: &mut HashMap<String, Stored>) -> Vec<&'a RatedGame> {
    let mut affected: HashSet<&str> = [game.white.as_str(), game.black.as_str()].into();
    let mut replay = Vec::new();
    for recorded in later {
        let (white, black) = (recorded.game.white.as_str(), recorded.game.black.as_str());
        if !affected.contains(white) && !affected.contains(black) {
            continue;
        }
        affected.extend([white, black]);
        states.entry(white.to_owned()).or_insert(recorded.priors[0]);
        states.entry(black.to_owned()).or_insert(recorded.priors[1]);
        replay.push(&recorded.game);
    }
    replay
}

/// Rates one game from the players' current states, and moves them.
fn rate(game: &RatedGame, states: &mut HashMap<String, Stored>, settings: &Settings) -> RatedRow {
    let priors = [states[&game.white], states[&game.black]];
    let befores = priors.map(|prior| {
        let idle = Duration::from_millis(game.ended_ms.saturating_sub(prior.rated_ms).max(0) as u64);
        fogblast_ratings::decay(prior.rating, idle, settings)
    });
    let (white, black) = fogblast_ratings::rate_game(befores[0], befores[1], game.white_score, settings);
    states.insert(game.white.clone(), Stored { rating: white, rated_ms: game.ended_ms });
    states.insert(game.black.clone(), Stored { rating: black, rated_ms: game.ended_ms });
    RatedRow { game: game.clone(), priors, befores, afters: [white, black] }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use fogblast_proto::game::Variant as WireVariant;
    use fogblast_ratings::PROVISIONAL_DEVIATION;

    use super::*;

    const DAY_MS: i64 = 86_400_000;

    fn game(id: &str, white: &str, black: &str, score: Score, ended_ms: i64) -> RatedGame {
        RatedGame {
            game_id: id.into(),
            variant: Variant::Atomic,
            ended_ms,
            white: white.into(),
            black: black.into(),
            white_score: score,
        }
    }

    /// The ratings a store of rated games ends with, kept the way the
    /// archive keeps them: the rated games with their priors, and each
    /// player's stored rating and counts, per variant.
    #[derive(Default)]
    struct Ledger {
        rated: Vec<Recorded>,
        ratings: BTreeMap<(String, &'static str), (Stored, [i64; 4])>,
    }

    impl Ledger {
        /// Reads what the plan needs, as the archive's queries do, and
        /// writes the plan as the archive does.
        fn apply(&mut self, game: &RatedGame) -> Plan {
            let mut later: Vec<Recorded> = self
                .rated
                .iter()
                .filter(|r| r.game.variant == game.variant && r.game.finished_after(game))
                .cloned()
                .collect();
            later.sort_by(|a, b| (a.game.ended_ms, &a.game.game_id).cmp(&(b.game.ended_ms, &b.game.game_id)));
            let stored = [&game.white, &game.black].map(|player| {
                self.ratings
                    .get(&(player.clone(), game.variant.name()))
                    .map_or(Stored::newcomer(game.ended_ms), |r| r.0)
            });
            let plan = rerate(game, &later, stored, &Settings::LICHESS);
            self.rated.push(Recorded { game: plan.game.game.clone(), priors: plan.game.priors });
            for again in &plan.rerated {
                let row = self.rated.iter_mut().find(|r| r.game.game_id == again.game.game_id).expect("a rated game");
                row.priors = again.priors;
            }
            for player in &plan.players {
                let entry =
                    self.ratings.entry((player.player.clone(), game.variant.name())).or_insert((player.stored, [0; 4]));
                entry.0 = Stored { rated_ms: entry.0.rated_ms.max(player.stored.rated_ms), ..player.stored };
                let add = [player.rated_games, player.wins, player.losses, player.draws];
                entry.1.iter_mut().zip(add).for_each(|(count, add)| *count += add);
            }
            plan
        }
    }

    /// A week of games among five players, every few hours.
    fn a_week() -> Vec<RatedGame> {
        let players = ["ann", "bob", "cid", "dee", "eve"];
        let scores = [Score::Win, Score::Draw, Score::Loss];
        (0..40)
            .map(|i: usize| {
                let white = players[i % 5];
                let black = players[(i * 3 + 1 + i / 5) % 5];
                let black = if black == white { players[(i + 2) % 5] } else { black };
                game(&format!("g{i:02}"), white, black, scores[(i * 7) % 3], 1_700_000_000_000 + i as i64 * DAY_MS / 6)
            })
            .collect()
    }

    #[test]
    fn a_first_game_rates_both_newcomers_and_leaves_them_provisional() {
        let g = game("g1", "ann", "bob", Score::Win, 1_700_000_000_000);
        let plan = rerate(&g, &[], [Stored::newcomer(g.ended_ms); 2], &Settings::LICHESS);
        assert!(plan.rerated.is_empty());
        assert_eq!(plan.game.befores, [Rating::default(); 2]);
        let [white, black] = plan.game.afters;
        assert!(white.rating > 1500.0 && black.rating < 1500.0, "{white:?} {black:?}");
        assert!(white.deviation >= PROVISIONAL_DEVIATION && black.deviation >= PROVISIONAL_DEVIATION);
        let ann = &plan.players[0];
        assert_eq!((ann.player.as_str(), ann.rated_games, ann.wins, ann.losses, ann.draws), ("ann", 1, 1, 0, 0));
        let bob = &plan.players[1];
        assert_eq!((bob.player.as_str(), bob.rated_games, bob.wins, bob.losses, bob.draws), ("bob", 1, 0, 1, 0));
        assert_eq!(ann.stored, Stored { rating: white, rated_ms: g.ended_ms });
    }

    #[test]
    fn a_rating_stops_being_provisional_after_enough_games() {
        let mut ledger = Ledger::default();
        let mut provisional = Vec::new();
        for i in 0..30 {
            let g = game(&format!("g{i:02}"), "ann", "bob", [Score::Win, Score::Draw][i % 2], i as i64 * 60_000);
            provisional.push(ledger.apply(&g).game.afters[0].is_provisional());
        }
        let settled = provisional.iter().position(|p| !p).expect("settled within 30 games");
        assert!(settled > 0 && provisional[settled..].iter().all(|p| !p), "{provisional:?}");
    }

    #[test]
    fn the_time_between_games_grows_the_deviation_before_rating() {
        let stored = Stored { rating: Rating::new(1600.0, 60.0, 0.06), rated_ms: 0 };
        let g = game("g1", "ann", "bob", Score::Draw, 30 * DAY_MS);
        let plan = rerate(&g, &[], [stored, Stored { rated_ms: 30 * DAY_MS, ..stored }], &Settings::LICHESS);
        assert_eq!(plan.game.priors, [stored, Stored { rated_ms: 30 * DAY_MS, ..stored }]);
        assert!(plan.game.befores[0].deviation > 60.0, "{:?}", plan.game.befores);
        assert_eq!(plan.game.befores[1].deviation, 60.0);
        assert_eq!(plan.game.befores[0].rating, 1600.0);
    }

    #[test]
    fn a_game_arriving_after_later_games_of_its_player_is_rated_before_them() {
        let early = game("early", "ann", "bob", Score::Win, 1_000);
        let late = game("late", "ann", "cid", Score::Loss, 2_000);
        let mut in_order = Ledger::default();
        in_order.apply(&early);
        let expected_late = in_order.apply(&late);

        let mut late_first = Ledger::default();
        late_first.apply(&late);
        let plan = late_first.apply(&early);
        // The early game is rated from the rating ann had before the late one.
        assert_eq!(plan.game.priors[0], Stored::newcomer(2_000));
        assert_eq!(plan.rerated.len(), 1);
        assert_eq!(plan.rerated[0], expected_late.game);
        assert_eq!(late_first.ratings, in_order.ratings);
        // Counted once each: the late game's counts are not added again.
        let ann = &late_first.ratings[&("ann".to_owned(), "atomic")].1;
        assert_eq!(*ann, [2, 1, 1, 0]);
    }

    #[test]
    fn later_games_of_players_it_does_not_reach_are_left_alone() {
        let mut ledger = Ledger::default();
        ledger.apply(&game("g2", "cid", "dee", Score::Win, 2_000));
        ledger.apply(&game("g3", "bob", "eve", Score::Draw, 3_000));
        ledger.apply(&game("g4", "eve", "cid", Score::Loss, 4_000));
        // g1 reaches bob's g3, which reaches eve's g4, which reaches cid;
        // g2 finished before any of them changed.
        let plan = ledger.apply(&game("g1", "ann", "bob", Score::Win, 1_000));
        let rerated: Vec<_> = plan.rerated.iter().map(|r| r.game.game_id.as_str()).collect();
        assert_eq!(rerated, ["g3", "g4"]);
        let players: Vec<_> = plan.players.iter().map(|p| p.player.as_str()).collect();
        assert_eq!(players, ["ann", "bob", "cid", "eve"]);
        let counts: Vec<_> = plan.players.iter().map(|p| p.rated_games).collect();
        assert_eq!(counts, [1, 1, 0, 0]);
    }

    #[test]
    fn any_arrival_order_ends_in_the_ratings_of_the_finishing_order() {
        let week = a_week();
        let mut in_order = Ledger::default();
        week.iter().for_each(|g| drop(in_order.apply(g)));
        for seed in 1..=5u64 {
            let mut shuffled = week.clone();
            // A fixed permutation per seed: reproducible, no randomness.
            shuffled.sort_by_key(|g| (g.game_id.bytes().map(u64::from).sum::<u64>() * (seed * 7919)) % 97);
            let mut ledger = Ledger::default();
            shuffled.iter().for_each(|g| drop(ledger.apply(g)));
            assert_eq!(ledger.ratings, in_order.ratings, "seed {seed}");
            // Each game is rated from the same ratings (a newcomer's first
            // "rated" time is whenever they first arrived, which a rating at
            // the largest deviation does not feel).
            let priors = |l: &Ledger| {
                let mut rows: Vec<_> =
                    l.rated.iter().map(|r| (r.game.game_id.clone(), r.priors.map(|p| p.rating))).collect();
                rows.sort_by(|a, b| a.0.cmp(&b.0));
                rows
            };
            assert_eq!(priors(&ledger), priors(&in_order), "seed {seed}");
        }
    }

    #[test]
    fn each_variant_has_its_own_rating() {
        let mut ledger = Ledger::default();
        ledger.apply(&game("a1", "ann", "bob", Score::Win, 1_000));
        let fog = RatedGame { variant: Variant::Fog, ..game("f1", "ann", "bob", Score::Loss, 500) };
        let plan = ledger.apply(&fog);
        // An earlier fog game does not reach the atomic one, and starts from
        // the newcomer's rating, not ann's atomic one.
        assert!(plan.rerated.is_empty());
        assert_eq!(plan.game.priors, [Stored::newcomer(500); 2]);
        let ann = |variant: Variant| ledger.ratings[&("ann".to_owned(), variant.name())].0.rating.rating;
        assert!(ann(Variant::Atomic) > 1500.0 && ann(Variant::Fog) < 1500.0);
        assert_eq!(ledger.ratings.len(), 4);
    }

    fn finished(rated: bool, white: FinishedPlayer, result: &str, reason: EndReason) -> GameFinished {
        GameFinished {
            game_id: "g1".into(),
            variant: WireVariant::Fog as i32,
            rated,
            white: Some(white),
            black: Some(FinishedPlayer { id: "bob".into(), name: "Bob".into(), ..Default::default() }),
            result: result.into(),
            reason: reason as i32,
            ended_at_ms: 5_000,
            ..Default::default()
        }
    }

    #[test]
    fn only_rated_games_between_two_people_with_a_result_move_ratings() {
        let ann = FinishedPlayer { id: "ann".into(), name: "Ann".into(), ..Default::default() };
        let computer = FinishedPlayer { computer: true, level: 2, ..Default::default() };
        let anonymous = FinishedPlayer { name: "guest".into(), ..Default::default() };
        let rated = RatedGame::from_finished(&finished(true, ann.clone(), "0-1", EndReason::Checkmate), 9_000);
        assert_eq!(rated, Some(RatedGame { variant: Variant::Fog, ..game("g1", "ann", "bob", Score::Loss, 5_000) }));
        for unrated in [
            finished(false, ann.clone(), "1-0", EndReason::Checkmate),
            finished(true, computer, "1-0", EndReason::Checkmate),
            finished(true, anonymous, "1-0", EndReason::Checkmate),
            finished(true, ann.clone(), "*", EndReason::Aborted),
            finished(true, ann.clone(), "1-0", EndReason::Aborted),
        ] {
            assert_eq!(RatedGame::from_finished(&unrated, 9_000), None, "{unrated:?}");
        }
        let draw = finished(true, ann.clone(), "1/2-1/2", EndReason::Stalemate);
        assert_eq!(RatedGame::from_finished(&draw, 9_000).map(|g| g.white_score), Some(Score::Draw));
        let unended = GameFinished { ended_at_ms: 0, variant: 0, ..draw };
        let rated = RatedGame::from_finished(&unended, 9_000).unwrap();
        assert_eq!((rated.ended_ms, rated.variant), (9_000, Variant::Standard));
    }
}
