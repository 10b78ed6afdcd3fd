//! Player ratings for Fogblast: Mark Glickman's Glicko-2 system with the
//! settings lichess uses, so a rating here means what players expect from a
//! lichess rating. A player has one [`Rating`] per variant; the caller keeps
//! them apart and passes in the right one. The crate is pure arithmetic, with
//! no I/O and no clock: the caller says how long a player has been away.
//!
//! Lichess rates each game the moment it ends, as a rating period of its own,
//! and lets the deviation grow with the time between a player's games. So a
//! rated game is two calls: [`decay`] each player's rating for the time since
//! their last rated game, then [`rate_game`].
//!
//! ```
//! use std::time::Duration;
//! use fogblast_ratings::{decay, rate_game, Rating, Score, Settings};
//!
//! let settings = Settings::LICHESS;
//! let white = Rating::new(1650.0, 60.0, 0.06);
//! let black = Rating::default(); // a newcomer: 1500, deviation 500
//!
//! let white = decay(white, Duration::from_secs(30 * 24 * 3600), &settings);
//! let (white, black) = rate_game(white, black, Score::Win, &settings);
//! assert!(white.rating > 1650.0 && black.rating < 1500.0);
//! assert!(!white.is_provisional() && black.is_provisional());
//! ```
//!
//! Step 5's volatility iteration, step 6's deviation growth and the scale
//! conversions follow the paper, <http://www.glicko.net/glicko/glicko2.pdf>;
//! [`Settings`] lists where lichess departs from its defaults.

mod glicko2;
mod rating;
mod settings;

pub use glicko2::{decay, rate, rate_game};
pub use rating::{Rating, Score, PROVISIONAL_DEVIATION};
pub use settings::Settings;
