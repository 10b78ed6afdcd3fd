//! The knobs of the rating system, and lichess's values for them, kept in
//! one place so the numbers players compare with lichess are easy to audit.

/// How the rating system is tuned.
///
/// [`Settings::LICHESS`] is what Fogblast uses. Beside it, the defaults of
/// Glickman's paper (<http://www.glicko.net/glicko/glicko2.pdf>):
///
/// | Value | Lichess | Glickman's paper |
/// | --- | --- | --- |
/// | Newcomer's [`crate::Rating::DEFAULT`] (rating / deviation / volatility) | 1500 / 500 / 0.09 | 1500 / 350 / 0.06 |
/// | [`tau`](Self::tau) (τ) | 0.75 | 0.3 to 1.2 (0.5 in its example) |
/// | [`min_deviation`](Self::min_deviation) | 45 | none |
/// | [`max_deviation`](Self::max_deviation) | 500 | none |
/// | [`max_volatility`](Self::max_volatility) | 0.1 | none |
/// | [`crate::PROVISIONAL_DEVIATION`] | 110 | none |
/// | [`rating_periods_per_day`](Self::rating_periods_per_day) | 0.21436 (a period is about 4.67 days) | the organiser's choice |
/// | [`periods_per_update`](Self::periods_per_update) | 0 | 1 |
/// | Volatility convergence tolerance ε | 0.000001 | 0.000001 |
///
/// Lichess chose 0.21436 periods per day so that a typical player's
/// deviation (60, volatility 0.06) grows to the provisional 110 after a year
/// without rated games.
///
/// The deviation bounds need `0 <= min_deviation <= max_deviation`, τ must
/// be positive, and every value finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// τ, which limits how much the volatility may change in one update.
    pub tau: f64,
    /// Every update raises a smaller deviation to this, so that an
    /// established rating still moves.
    pub min_deviation: f64,
    /// Every update lowers a larger deviation to this, however long the
    /// player was away.
    pub max_deviation: f64,
    /// Every update lowers a larger volatility to this.
    pub max_volatility: f64,
    /// How many rating periods one day away from rated games counts as,
    /// for [`crate::decay`].
    pub rating_periods_per_day: f64,
    /// How many rating periods step 6 of an update adds to the deviation
    /// before the games are counted. The paper closes one period per update,
    /// so 1. Lichess rates each game as it ends and counts the time between
    /// games with [`crate::decay`] instead, so 0.
    pub periods_per_update: f64,
}

impl Settings {
    /// Lichess's settings (see the table above).
    pub const LICHESS: Settings = Settings {
        tau: 0.75,
        min_deviation: 45.0,
        max_deviation: 500.0,
        max_volatility: 0.1,
        rating_periods_per_day: 0.21436,
        periods_per_update: 0.0,
    };

    /// `rating` with its deviation and volatility brought within bounds.
    pub(crate) fn bound(&self, rating: crate::Rating) -> crate::Rating {
        crate::Rating {
            rating: rating.rating,
            deviation: rating.deviation.clamp(self.min_deviation, self.max_deviation),
            volatility: rating.volatility.min(self.max_volatility),
        }
    }
}

impl Default for Settings {
    /// [`Settings::LICHESS`].
    fn default() -> Settings {
        Settings::LICHESS
    }
}
