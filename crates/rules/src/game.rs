//! A game from its start: the moves played, the keys of the positions they
//! led through, and with them threefold repetition and takebacks.

use crate::moves::{CastlingMode, Move, Uci};
use crate::outcome::{DrawReason, Outcome};
use crate::position::{IllegalMove, MoveEffects, Position};

/// Why a move could not be added to a game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("the game is over ({0})")]
    Finished(Outcome),
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
    #[error("{0} is not a legal move here")]
    UnknownMove(String),
    #[error(transparent)]
    Syntax(#[from] crate::moves::ParseUciError),
}

/// A game in progress or finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    initial: Position,
    position: Position,
    moves: Vec<Move>,
    /// Zobrist keys of every position so far, the initial one first.
    keys: Vec<u64>,
}

impl Game {
    pub fn new(initial: Position) -> Game {
        Game { initial, position: initial, moves: Vec::new(), keys: vec![initial.zobrist_hash()] }
    }

    pub fn initial(&self) -> &Position {
        &self.initial
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Zobrist keys of the positions before the current one, oldest
    /// first: the history a search needs to see repetitions.
    pub fn history_keys(&self) -> &[u64] {
        &self.keys[..self.keys.len() - 1]
    }

    /// Plies played.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// Plays a legal move unless the game is already over.
    pub fn play(&mut self, m: Move) -> Result<MoveEffects, GameError> {
        if let Some(outcome) = self.outcome() {
            return Err(GameError::Finished(outcome));
        }
        let (next, effects) = self.position.play(m)?;
        self.position = next;
        self.moves.push(m);
        self.keys.push(next.zobrist_hash());
        Ok(effects)
    }

    /// Plays `m`, known to be legal in a game not over: the checks of
    /// [`Game::play`] each generate the legal moves again.
    fn play_known_legal(&mut self, m: Move) -> MoveEffects {
        let effects = self.position.effects_of(m);
        self.position.play_unchecked(m);
        self.moves.push(m);
        self.keys.push(self.position.zobrist_hash());
        effects
    }

    /// Plays a move given as UCI text (castling as `e1g1` or king takes rook).
    pub fn play_uci(&mut self, text: &str) -> Result<MoveEffects, GameError> {
        let uci: Uci = text.parse()?;
        if let Some(outcome) = self.outcome() {
            return Err(GameError::Finished(outcome));
        }
        let m = self.position.parse_uci(&uci).ok_or_else(|| GameError::UnknownMove(text.to_owned()))?;
        // Found among the legal moves, and the game is not over.
        Ok(self.play_known_legal(m))
    }

    /// Takes back the last `plies` moves (all of them if there are fewer).
    pub fn undo(&mut self, plies: usize) {
        let keep = self.moves.len().saturating_sub(plies);
        self.moves.truncate(keep);
        self.keys.truncate(keep + 1);
        self.position = self.initial;
        for &m in &self.moves {
            self.position.play_unchecked(m);
        }
    }

    /// How often the current position has occurred, counting this time.
    /// Only positions since the last capture or pawn move can repeat.
    pub fn repetitions(&self) -> usize {
        let current = *self.keys.last().expect("the initial key is always there");
        let window = (self.position.halfmoves() as usize + 1).min(self.keys.len());
        self.keys[self.keys.len() - window..].iter().rev().step_by(2).filter(|&&k| k == current).count()
    }

    /// The outcome by the rules, threefold repetition included.
    pub fn outcome(&self) -> Option<Outcome> {
        self.position
            .outcome()
            .or_else(|| (self.repetitions() >= 3).then_some(Outcome::Draw { reason: DrawReason::ThreefoldRepetition }))
    }

    /// The moves in UCI, space separated.
    pub fn uci_moves(&self, mode: CastlingMode) -> String {
        self.moves.iter().map(|m| m.to_uci(mode).to_string()).collect::<Vec<_>>().join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    /// A move given as UCI takes the checked-once path; a move given as a
    /// `Move` is checked in full. Both must leave the same game behind,
    /// with the same effects, ply by ply, to the end of the game.
    #[test]
    fn a_move_by_uci_plays_exactly_as_the_move_itself() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut plies = 0;
        for variant in Variant::ALL {
            for _ in 0..20 {
                let mut by_uci = Game::new(Position::new(variant));
                let mut by_move = by_uci.clone();
                while by_move.outcome().is_none() && by_move.ply() < 300 {
                    let legal = by_move.position().legal_moves();
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    let m = legal[(seed >> 33) as usize % legal.len()];
                    let text = m.to_uci(CastlingMode::Standard).to_string();
                    assert_eq!(by_uci.play_uci(&text), by_move.play(m), "{variant:?} {text}");
                    assert_eq!(by_uci, by_move);
                    plies += 1;
                }
                if let Some(outcome) = by_move.outcome() {
                    let any = by_move.initial().legal_moves()[0].to_uci(CastlingMode::Standard).to_string();
                    assert_eq!(by_uci.play_uci(&any), Err(GameError::Finished(outcome)));
                }
            }
        }
        assert!(plies > 3_000, "{plies} plies played");
    }
}
