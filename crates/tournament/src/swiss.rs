//! The Swiss system's pairings.
