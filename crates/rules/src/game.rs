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

    /// Plays a move given as UCI text (castling as `e1g1` or king takes rook).
    pub fn play_uci(&mut self, text: &str) -> Result<MoveEffects, GameError> {
        let uci: Uci = text.parse()?;
        if let Some(outcome) = self.outcome() {
            return Err(GameError::Finished(outcome));
        }
        let m = self.position.parse_uci(&uci).ok_or_else(|| GameError::UnknownMove(text.to_owned()))?;
        self.play(m)
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
