//! PGN for Fogblast's finished games: [`write_game`] turns a [`GameRecord`]
//! into PGN with the Seven Tag Roster, lichess-style `Variant`,
//! `TimeControl`, `UTCDate`/`UTCTime` tags, `[%eval]` and `[%clk]` comments, and
//! [`read_games`] reads PGN back, replaying its SAN with `fogblast-rules`
//! into UCI moves, clocks and a result. Players download and import games
//! this way, and other tools (lichess, python-chess) read what we write.
//!
//! The crate does no I/O: callers hand it strings and get strings back.
//!
//! ```
//! use fogblast_pgn::{read_game, write_game, GameRecord, GameResult};
//! use fogblast_rules::Variant;
//!
//! let record = GameRecord {
//!     event: "Casual atomic game".into(),
//!     site: "https://fogblast.example/g/abc".into(),
//!     white: "alice".into(),
//!     black: "bob".into(),
//!     result: GameResult::WhiteWins,
//!     variant: Variant::Atomic,
//!     moves: ["g1f3", "f7f6", "f3e5", "f6e5", "e2e4"].map(String::from).to_vec(),
//!     ..GameRecord::default()
//! };
//! let pgn = write_game(&record).unwrap();
//! assert!(pgn.contains("[Variant \"Atomic\"]"));
//! assert!(pgn.ends_with("1. Nf3 f6 2. Ne5 fxe5 3. e4 1-0\n"));
//!
//! let game = read_game(&pgn).unwrap();
//! assert_eq!(game.variant, Variant::Atomic);
//! assert_eq!(game.moves, record.moves);
//! assert_eq!(game.result, GameResult::WhiteWins);
//! ```

mod clock;
mod date;
mod eval;
mod read;
mod tags;
mod write;

pub use eval::Eval;
pub use read::{games, read_game, read_games, Games, PgnError, PgnErrorKind, PgnGame};
pub use tags::{GameResult, ParseResultError, ParseTimeControlError, TimeControl};
pub use write::{write_game, write_games, GameRecord, WriteError};
