//! Arena tournaments, as lichess players know them: a fixed time in which
//! anyone free is paired again within seconds with someone near their
//! place in the standings, and a scoring that rewards winning streaks.
//!
//! Scoring, game by game for each player ([`Sheet::record`]):
//! - a win scores 2, a draw 1, a loss 0;
//! - after two wins in a row the player is **on fire**: every game scores
//!   double (a win 4, a draw 2) until a game that is not a win;
//! - **berserk** (the player halved their own clock at the start) adds one
//!   point to a win when the game lasted at least [`BERSERK_MIN_PLIES`]
//!   plies; it is never doubled;
//! - anti-farming: a draw shorter than [`SHORT_DRAW_PLIES`] plies scores
//!   nothing, and after a draw, the next draw scores nothing unless it
//!   lasted at least [`LONG_DRAW_PLIES`] plies.
//!
//! Pairing ([`pair_wave`]): the free players in standings order (score,
//! then rating, then id) are paired with their neighbours, never with the
//! opponent of their last game unless both have waited
//! [`Pairing::rematch_after_ms`]; colours go to whoever is owed them.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// A berserk win counts its extra point only after this many plies.
pub const BERSERK_MIN_PLIES: u32 = 14;
/// A draw in fewer plies than this scores nothing.
pub const SHORT_DRAW_PLIES: u32 = 20;
/// A draw right after a draw scores only when it lasted this many plies.
pub const LONG_DRAW_PLIES: u32 = 60;

/// How a game ended for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// One game on a player's sheet: how it went and what it scored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SheetEntry {
    pub game: String,
    pub opponent: String,
    pub outcome: Outcome,
    pub plies: u32,
    pub berserk: bool,
    /// The player was on fire when the game started.
    pub on_fire: bool,
    pub points: u32,
}

/// A player's games in the arena and their score.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sheet {
    pub entries: Vec<SheetEntry>,
    pub score: u32,
    /// Wins in a row, up to the last game.
    pub streak: u32,
}

/// One finished game as a player's sheet takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played<'a> {
    pub game: &'a str,
    pub opponent: &'a str,
    pub outcome: Outcome,
    pub plies: u32,
    pub berserk: bool,
}

impl Sheet {
    /// Whether the next game scores double.
    pub fn on_fire(&self) -> bool {
        self.streak >= 2
    }

    /// What `game` scores on this sheet as it stands, before it is recorded.
    pub fn points_for(&self, game: &Played<'_>) -> u32 {
        let double = if self.on_fire() { 2 } else { 1 };
        match game.outcome {
            Outcome::Loss => 0,
            Outcome::Win => 2 * double + u32::from(game.berserk && game.plies >= BERSERK_MIN_PLIES),
            Outcome::Draw if game.plies < SHORT_DRAW_PLIES => 0,
            Outcome::Draw if self.last_was_draw() && game.plies < LONG_DRAW_PLIES => 0,
            Outcome::Draw => double,
        }
    }

    fn last_was_draw(&self) -> bool {
        self.entries.last().is_some_and(|e| e.outcome == Outcome::Draw)
    }

    /// Records `game` once: a game already on the sheet changes nothing
    /// (a result told twice is counted once). Returns the points it scored,
    /// `None` when it was already there.
    pub fn record(&mut self, game: &Played<'_>) -> Option<u32> {
        if self.entries.iter().any(|e| e.game == game.game) {
            return None;
        }
        let points = self.points_for(game);
        self.entries.push(SheetEntry {
            game: game.game.to_owned(),
            opponent: game.opponent.to_owned(),
            outcome: game.outcome,
            plies: game.plies,
            berserk: game.berserk,
            on_fire: self.on_fire(),
            points,
        });
        self.score += points;
        self.streak = if game.outcome == Outcome::Win { self.streak + 1 } else { 0 };
        Some(points)
    }

    pub fn last_opponent(&self) -> Option<&str> {
        self.entries.last().map(|e| e.opponent.as_str())
    }

    pub fn wins(&self) -> usize {
        self.entries.iter().filter(|e| e.outcome == Outcome::Win).count()
    }
}

/// A free player, ready to be paired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    pub score: u32,
    pub rating: u32,
    /// Games with white minus games with black, in this arena.
    pub white_minus_black: i32,
    /// The colour of their last game, if any: true for white.
    pub last_white: Option<bool>,
    pub last_opponent: Option<String>,
    /// Since when the player has been free (ms).
    pub free_since_ms: u64,
}

/// The standings order: score, then rating, then id (so it is total).
pub fn standing_order(a: (&str, u32, u32), b: (&str, u32, u32)) -> std::cmp::Ordering {
    let (a_id, a_score, a_rating) = a;
    let (b_id, b_score, b_rating) = b;
    b_score.cmp(&a_score).then(b_rating.cmp(&a_rating)).then(a_id.cmp(b_id))
}

/// How a wave pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Two players whose last game was against each other are paired again
    /// only once both have waited this long (ms) for someone else.
    pub rematch_after_ms: u64,
    /// How far down the standings a player may look for an opponent.
    pub reach: usize,
}

impl Default for Pairing {
    fn default() -> Pairing {
        Pairing { rematch_after_ms: 15_000, reach: 4 }
    }
}

/// One board of a wave: white, then black.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub white: String,
    pub black: String,
}

/// Pairs the free players at `now_ms`. Those left over (an odd one out, or
/// one whose only neighbour is their last opponent) wait for the next wave.
pub fn pair_wave(free: &[Candidate], now_ms: u64, rules: &Pairing) -> Vec<Board> {
    let mut order: Vec<&Candidate> = free.iter().collect();
    order.sort_by(|a, b| standing_order((&a.id, a.score, a.rating), (&b.id, b.score, b.rating)));
    let mut taken: HashSet<&str> = HashSet::new();
    let mut boards = Vec::new();
    for (i, player) in order.iter().enumerate() {
        if taken.contains(player.id.as_str()) {
            continue;
        }
        let opponent = order[i + 1..]
            .iter()
            .filter(|other| !taken.contains(other.id.as_str()))
            .take(rules.reach)
            .find(|other| may_meet(player, other, now_ms, rules));
        if let Some(opponent) = opponent {
            taken.insert(&player.id);
            taken.insert(&opponent.id);
            boards.push(colours(player, opponent));
        }
    }
    boards
}

fn may_meet(a: &Candidate, b: &Candidate, now_ms: u64, rules: &Pairing) -> bool {
    let rematch =
        a.last_opponent.as_deref() == Some(b.id.as_str()) || b.last_opponent.as_deref() == Some(a.id.as_str());
    if !rematch {
        return true;
    }
    let waited = |c: &Candidate| now_ms.saturating_sub(c.free_since_ms) >= rules.rematch_after_ms;
    waited(a) && waited(b)
}

/// White to whoever is owed it: fewer whites so far, then not white last
/// time, then the higher in the standings.
fn colours(higher: &Candidate, lower: &Candidate) -> Board {
    let higher_white = match higher.white_minus_black.cmp(&lower.white_minus_black) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => match (higher.last_white, lower.last_white) {
            (Some(true), Some(false) | None) => false,
            (Some(false) | None, Some(true)) => true,
            _ => true,
        },
    };
    if higher_white {
        Board { white: higher.id.clone(), black: lower.id.clone() }
    } else {
        Board { white: lower.id.clone(), black: higher.id.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played<'a>(game: &'a str, outcome: Outcome, plies: u32, berserk: bool) -> Played<'a> {
        Played { game, opponent: "x", outcome, plies, berserk }
    }

    #[test]
    fn wins_score_two_and_a_streak_of_two_sets_the_player_on_fire_until_a_non_win() {
        let mut sheet = Sheet::default();
        assert_eq!(sheet.record(&played("g1", Outcome::Win, 40, false)), Some(2));
        assert_eq!(sheet.record(&played("g2", Outcome::Win, 40, false)), Some(2));
        assert!(sheet.on_fire());
        assert_eq!(sheet.record(&played("g3", Outcome::Win, 40, false)), Some(4));
        assert_eq!(sheet.record(&played("g4", Outcome::Draw, 40, false)), Some(2), "a draw on fire scores 2");
        assert!(!sheet.on_fire(), "a non-win puts the fire out");
        assert_eq!(sheet.record(&played("g5", Outcome::Win, 40, false)), Some(2));
        assert_eq!(sheet.record(&played("g6", Outcome::Loss, 40, false)), Some(0));
        assert_eq!(sheet.score, 12);
        assert_eq!(sheet.entries.iter().filter(|e| e.on_fire).count(), 2);
    }

    #[test]
    fn berserk_adds_one_point_to_a_win_long_enough_and_is_not_doubled() {
        let mut sheet = Sheet::default();
        assert_eq!(sheet.record(&played("g1", Outcome::Win, BERSERK_MIN_PLIES - 1, true)), Some(2), "too short");
        assert_eq!(sheet.record(&played("g2", Outcome::Win, BERSERK_MIN_PLIES, true)), Some(3));
        assert_eq!(sheet.record(&played("g3", Outcome::Win, 50, true)), Some(5), "on fire: 4 + 1");
        assert_eq!(sheet.record(&played("g4", Outcome::Loss, 50, true)), Some(0), "a berserk loss scores nothing");
    }

    #[test]
    fn short_draws_and_draws_after_a_draw_score_nothing() {
        let mut sheet = Sheet::default();
        assert_eq!(sheet.record(&played("g1", Outcome::Draw, SHORT_DRAW_PLIES - 1, false)), Some(0));
        assert_eq!(sheet.record(&played("g2", Outcome::Draw, 30, false)), Some(0), "a second draw in a row");
        assert_eq!(sheet.record(&played("g3", Outcome::Draw, LONG_DRAW_PLIES, false)), Some(1), "unless long");
        assert_eq!(sheet.record(&played("g4", Outcome::Win, 30, false)), Some(2));
        assert_eq!(sheet.record(&played("g5", Outcome::Draw, 30, false)), Some(1));
    }

    #[test]
    fn a_game_told_twice_is_recorded_once() {
        let mut sheet = Sheet::default();
        assert_eq!(sheet.record(&played("g1", Outcome::Win, 30, false)), Some(2));
        assert_eq!(sheet.record(&played("g1", Outcome::Win, 30, false)), None);
        assert_eq!((sheet.score, sheet.entries.len(), sheet.streak), (2, 1, 1));
    }

    fn candidate(id: &str, score: u32, rating: u32) -> Candidate {
        Candidate {
            id: id.into(),
            score,
            rating,
            white_minus_black: 0,
            last_white: None,
            last_opponent: None,
            free_since_ms: 0,
        }
    }

    fn pairs(boards: &[Board]) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = boards
            .iter()
            .map(|b| {
                if b.white < b.black {
                    (b.white.clone(), b.black.clone())
                } else {
                    (b.black.clone(), b.white.clone())
                }
            })
            .collect();
        pairs.sort();
        pairs
    }

    #[test]
    fn neighbours_in_the_standings_are_paired_and_the_odd_one_waits() {
        let free = [
            candidate("a", 10, 1500),
            candidate("b", 2, 1500),
            candidate("c", 9, 1400),
            candidate("d", 2, 1600),
            candidate("e", 0, 1500),
        ];
        let boards = pair_wave(&free, 0, &Pairing::default());
        assert_eq!(pairs(&boards), vec![("a".into(), "c".into()), ("b".into(), "d".into())]);
    }

    #[test]
    fn the_last_opponent_is_skipped_until_both_have_waited() {
        let mut a = candidate("a", 4, 1500);
        let mut b = candidate("b", 4, 1500);
        a.last_opponent = Some("b".into());
        b.last_opponent = Some("a".into());
        let c = candidate("c", 2, 1500);
        let boards = pair_wave(&[a.clone(), b.clone(), c.clone()], 1_000, &Pairing::default());
        assert_eq!(pairs(&boards), vec![("a".into(), "c".into())], "b waits rather than meet a again");
        let rules = Pairing::default();
        assert!(pair_wave(&[a.clone(), b.clone()], rules.rematch_after_ms - 1, &rules).is_empty());
        assert_eq!(pair_wave(&[a, b], rules.rematch_after_ms, &rules).len(), 1, "alone together long enough");
    }

    #[test]
    fn white_goes_to_whoever_is_owed_it() {
        let mut a = candidate("a", 4, 1500);
        let mut b = candidate("b", 2, 1500);
        a.white_minus_black = 1;
        assert_eq!(pair_wave(&[a.clone(), b.clone()], 0, &Pairing::default())[0].white, "b");
        a.white_minus_black = 0;
        a.last_white = Some(true);
        b.last_white = Some(false);
        assert_eq!(pair_wave(&[a.clone(), b.clone()], 0, &Pairing::default())[0].white, "b");
        a.last_white = None;
        b.last_white = None;
        assert_eq!(pair_wave(&[a, b], 0, &Pairing::default())[0].white, "a", "the higher placed, all else equal");
    }
}
