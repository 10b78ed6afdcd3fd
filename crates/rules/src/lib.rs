//! The rules of Fogblast's three variants: standard chess, atomic chess and
//! fog of war (dark chess). One bitboard move generator serves them all; the
//! variants differ only in what a capture does and what counts as check.
//!
//! The crate does no I/O: the server, the engine and the tools build on it.
//!
//! ```
//! use fogblast_rules::{Position, Variant};
//!
//! let pos = Position::new(Variant::Atomic);
//! assert_eq!(pos.legal_moves().len(), 20);
//! ```

pub mod attacks;
mod bitboard;
mod board;
mod chess960;
mod color;
mod fen;
mod fog;
mod game;
mod movegen;
mod moves;
mod outcome;
pub mod perft;
mod piece;
mod position;
mod san;
mod setup;
mod square;
mod variant;
mod zobrist;

pub use bitboard::{Bitboard, Squares};
pub use board::Board;
pub use chess960::{chess960_back_rank, Chess960Error};
pub use color::{ByColor, Color};
pub use fen::{Fen, FenError, ParsePositionError, STARTING_FEN};
pub use fog::{fogged_board_fen, FogView};
pub use game::{Game, GameError};
pub use moves::{CastlingMode, CastlingSide, Move, MoveList, ParseUciError, Uci};
pub use outcome::{DrawReason, Outcome, WinReason};
pub use piece::{Piece, Role};
pub use position::{IllegalMove, MoveEffects, Position, PositionError};
pub use san::{San, SanError};
pub use setup::Setup;
pub use square::{File, ParseSquareError, Rank, Square};
pub use variant::{ParseVariantError, Variant};
