//! Fogblast's computer player for atomic and standard chess: iterative
//! deepening principal variation search over `fogblast-rules`, with an
//! evaluation that knows explosions (corrected at full strength in atomic
//! chess by a small trained network, [`nnue`]), and three playing levels. The
//! fog-of-war player ([`fog`]) is told only what its side observed and
//! never a position: see [`best_fog_move`].
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use fogblast_engine::{Limits, Searcher};
//! use fogblast_rules::{Position, Variant};
//!
//! let mut searcher = Searcher::new(1);
//! let limits = Limits { depth: Some(3), ..Limits::default() };
//! let report = searcher.search(&Position::new(Variant::Atomic), &[], &limits, &AtomicBool::new(false), &mut |_| {});
//! assert!(report.best.is_some());
//! ```

mod clock;
mod eval;
pub mod fog;
mod level;
mod newcomer;
pub mod nnue;
mod ordering;
mod search;
mod time;
mod tt;
pub mod uci;

pub use clock::Instant;
pub use eval::{evaluate, evaluate_with, piece_value, term, Weights, ATOMIC_WEIGHTS};
pub use fog::{best_fog_move, FogLimits, FogObservation, FogReport, FogSettings, Sight};
pub use level::{Level, LevelSettings, ParseLevelError};
pub use newcomer::newcomer_move;
pub use search::{Limits, Overlook, SearchReport, Searcher, MATE};
pub use time::{Clock, TimeBudget, Unrest};
