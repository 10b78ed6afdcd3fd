//! The three computer levels players pick from. Each is a fixed setting:
//! how deep and how long it may search, and how much noise blurs its
//! judgement so the weaker levels make human-sized mistakes.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::search::{Limits, Overlook};
use crate::time::Clock;

/// A computer opponent's strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Easy,
    Medium,
    Hard,
}

/// What a level may spend on one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelSettings {
    /// Deepest iteration searched.
    pub max_depth: Option<u32>,
    /// Most nodes searched.
    pub max_nodes: Option<u64>,
    /// Longest time for one move; less when the clock is short.
    pub max_time: Duration,
    /// Each leaf evaluation is moved by up to this many centipawns.
    pub eval_noise: i32,
    /// Percent of its own moves, and of the replies to them, the level does
    /// not look at (see [`Limits::overlook`]).
    pub overlook: Overlook,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Easy, Level::Medium, Level::Hard];

    pub const fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
        }
    }

    pub const fn settings(self) -> LevelSettings {
        match self {
            Level::Easy => LevelSettings {
                max_depth: Some(2),
                max_nodes: Some(2_000),
                max_time: Duration::from_millis(300),
                eval_noise: 150,
                overlook: Overlook { captures: 60, wins: 98, replies: 12 },
            },
            Level::Medium => LevelSettings {
                max_depth: Some(4),
                max_nodes: Some(30_000),
                max_time: Duration::from_millis(600),
                eval_noise: 40,
                overlook: Overlook::NONE,
            },
            Level::Hard => LevelSettings {
                max_depth: None,
                max_nodes: None,
                max_time: Duration::from_secs(1),
                eval_noise: 0,
                overlook: Overlook::NONE,
            },
        }
    }

    /// The search limits for one move: the level's caps, the time `budget`
    /// the caller allows (if any), and the side's clock (if the game has
    /// one). `seed` makes the noise repeatable.
    pub fn limits(self, clock: Option<Clock>, budget: Option<Duration>, seed: u64) -> Limits {
        let settings = self.settings();
        let movetime = budget.map_or(settings.max_time, |b| b.min(settings.max_time));
        Limits {
            depth: settings.max_depth,
            nodes: settings.max_nodes,
            movetime: Some(movetime),
            clock,
            eval_noise: settings.eval_noise,
            overlook: settings.overlook,
            seed,
            ..Limits::default()
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a level.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown level {0:?} (expected easy, medium or hard)")]
pub struct ParseLevelError(pub String);

impl FromStr for Level {
    type Err = ParseLevelError;

    fn from_str(s: &str) -> Result<Level, ParseLevelError> {
        match s.to_ascii_lowercase().as_str() {
            "easy" | "1" => Ok(Level::Easy),
            "medium" | "2" => Ok(Level::Medium),
            "hard" | "3" => Ok(Level::Hard),
            _ => Err(ParseLevelError(s.to_owned())),
        }
    }
}
