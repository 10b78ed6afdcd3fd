//! The players of one round as the pairing sees them: pairing numbers,
//! scores, the colours of games actually played, preferences, floats, who
//! may meet whom under the absolute criteria, and the completion check that
//! every bracket consults before it commits to a pairing.

use super::colour::{self, Color, Preference, Strength};
use super::matching;
use super::{ColorPlayed, Float, SwissPlayer, SwissSettings};
use std::cmp::Ordering;
use std::collections::HashMap;

/// One player prepared for pairing; its index in [`Field::entrants`] is its
/// pairing number minus one.
#[derive(Debug, Clone)]
pub(crate) struct Entrant {
    pub id: String,
    pub pairing_number: u32,
    pub score: u32,
    pub played: Vec<Color>,
    pub preference: Preference,
    pub byes: u32,
    /// Rounds not played for any reason (byes, absences, late entry).
    pub unplayed: u32,
    /// The float received in the previous round and the one before.
    pub last_float: Float,
    pub float_before: Float,
    pub topscorer: bool,
    pub active: bool,
}

#[derive(Debug)]
pub(crate) struct Field {
    pub entrants: Vec<Entrant>,
    met: Vec<Vec<bool>>,
    pub initial: Color,
    pub budget: usize,
}

impl Field {
    pub fn new(players: &[SwissPlayer], round: u32, rounds_total: u32, settings: &SwissSettings) -> Field {
        let mut order: Vec<&SwissPlayer> = players.iter().collect();
        // The initial ranking list: rating, then id, so every replica agrees.
        order.sort_by(|a, b| b.rating.cmp(&a.rating).then_with(|| a.id.cmp(&b.id)));
        let index: HashMap<&str, usize> = order.iter().enumerate().map(|(i, p)| (p.id.as_str(), i)).collect();
        let last_round = round == rounds_total && settings.topscorer_exception;
        let entrants = order.iter().enumerate().map(|(i, p)| entrant(p, i as u32 + 1, round, last_round)).collect();
        let n = order.len();
        let mut met = vec![vec![false; n]; n];
        for (i, p) in order.iter().enumerate() {
            for opponent in &p.opponents {
                if let Some(&j) = index.get(opponent.as_str()) {
                    met[i][j] = true;
                    met[j][i] = true;
                }
            }
        }
        Field { entrants, met, initial: settings.initial_color, budget: settings.search_budget }
    }

    pub fn score(&self, i: usize) -> u32 {
        self.entrants[i].score
    }

    /// The absolute criteria C1 and C3: no second game between two players,
    /// and no two non-topscorers with the same absolute colour preference.
    pub fn compatible(&self, a: usize, b: usize) -> bool {
        if a == b || self.met[a][b] {
            return false;
        }
        let (ea, eb) = (&self.entrants[a], &self.entrants[b]);
        let both_absolute =
            ea.preference.strength == Strength::Absolute && eb.preference.strength == Strength::Absolute;
        // C3, which topscorers escape in the last round.
        let clash = both_absolute && ea.preference.color == eb.preference.color;
        !clash || ea.topscorer || eb.topscorer
    }

    /// Pairing order: score, then pairing number.
    pub fn rank_order(&self, a: usize, b: usize) -> Ordering {
        self.score(b).cmp(&self.score(a)).then(a.cmp(&b))
    }

    /// The colour `a` gets against `b`.
    pub fn colour_of(&self, a: usize, b: usize) -> Color {
        let (high, low) = if self.rank_order(a, b) == Ordering::Less { (a, b) } else { (b, a) };
        let high_colour = colour::allocate(self.side(high), self.side(low), self.initial);
        if high == a {
            high_colour
        } else {
            high_colour.opposite()
        }
    }

    fn side(&self, i: usize) -> colour::Side<'_> {
        let e = &self.entrants[i];
        colour::Side { played: &e.played, preference: e.preference, pairing_number: e.pairing_number }
    }

    /// Whether the players in `set` can all be paired among themselves.
    pub fn pairable(&self, set: &[usize]) -> bool {
        matching::has_perfect_matching(set.len(), &|x, y| self.compatible(set[x], set[y]))
    }
}

fn entrant(p: &SwissPlayer, pairing_number: u32, round: u32, last_round: bool) -> Entrant {
    let played: Vec<Color> = p
        .colors
        .iter()
        .filter_map(|c| match c {
            ColorPlayed::White => Some(Color::White),
            ColorPlayed::Black => Some(Color::Black),
            ColorPlayed::Bye | ColorPlayed::Absent => None,
        })
        .collect();
    let byes = p.colors.iter().filter(|c| **c == ColorPlayed::Bye).count() as u32;
    let float_at = |back: usize| p.floats.len().checked_sub(back).map_or(Float::None, |i| p.floats[i]);
    // A topscorer has more than half the points possible so far (C.04.3 A.7);
    // the notion only matters when the last round is paired.
    let topscorer = last_round && p.points_x2 > round.saturating_sub(1);
    Entrant {
        id: p.id.clone(),
        pairing_number,
        score: p.points_x2,
        preference: colour::preference(&played),
        unplayed: (p.colors.len() - played.len()) as u32,
        played,
        byes,
        last_float: float_at(1),
        float_before: float_at(2),
        topscorer,
        active: !p.withdrawn,
    }
}
