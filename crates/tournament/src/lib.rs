//! Tournaments as rules, without I/O: how an arena scores its games and
//! pairs its free players ([`arena`]), how a Swiss event pairs each round
//! ([`swiss`]), and the tie-breaks that order equal scores ([`tiebreak`]).
//! The matchmaker keeps the state and drives the clock; everything it
//! decides about a tournament is decided here, so it is tested here.

pub mod arena;
pub mod swiss;
pub mod tiebreak;
