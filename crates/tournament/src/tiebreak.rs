//! Tie-breaks for equal scores.
