//! A player's rating in one variant, and the score of one game, in the
//! units players see: Glicko's 1500-centred scale, not Glicko-2's internal
//! one.

/// A player at or above this deviation has a provisional rating: lichess
/// shows it with a question mark and keeps it off leaderboards.
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

/// A Glicko-2 rating on the Glicko scale. Keep one per player and variant.
///
/// All three values must be finite and the volatility positive. Ratings
/// built by [`Rating::default`] or returned by this crate always are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// The estimated strength, 1500 for a newcomer.
    pub rating: f64,
    /// The rating deviation (RD): how uncertain the estimate is, as one
    /// standard deviation on the rating scale.
    pub deviation: f64,
    /// How erratic the player's results are; it sets how fast the deviation
    /// grows while the player is away.
    pub volatility: f64,
}

impl Rating {
    /// A newcomer's rating, lichess's default: 1500, deviation 500,
    /// volatility 0.09.
    pub const DEFAULT: Rating = Rating::new(1500.0, 500.0, 0.09);

    /// A rating from its three parts.
    pub const fn new(rating: f64, deviation: f64, volatility: f64) -> Rating {
        Rating { rating, deviation, volatility }
    }

    /// Whether the rating is still provisional: its deviation is
    /// [`PROVISIONAL_DEVIATION`] (110) or more.
    pub fn is_provisional(&self) -> bool {
        self.deviation >= PROVISIONAL_DEVIATION
    }
}

impl Default for Rating {
    /// [`Rating::DEFAULT`].
    fn default() -> Rating {
        Rating::DEFAULT
    }
}

/// The result of one game for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Score {
    Win,
    Draw,
    Loss,
}

impl Score {
    /// The score as Glicko-2 counts it: 1, ½ or 0.
    pub fn value(self) -> f64 {
        match self {
            Score::Win => 1.0,
            Score::Draw => 0.5,
            Score::Loss => 0.0,
        }
    }

    /// The same game's score for the opponent.
    pub fn opponent(self) -> Score {
        match self {
            Score::Win => Score::Loss,
            Score::Draw => Score::Draw,
            Score::Loss => Score::Win,
        }
    }
}
