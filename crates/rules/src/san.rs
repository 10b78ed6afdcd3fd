//! Standard algebraic notation (SAN) for moves, as PGN uses it.
