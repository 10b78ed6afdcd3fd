//! Turns a `BestMove` request into a search the pool can run, or into the
//! reason it cannot be searched. Checks happen here, on the caller's task,
//! so a bad request never waits in the queue.

use std::time::Duration;

use fogblast_engine::{Clock, Level, Limits};
use fogblast_proto::engine as proto;
use fogblast_rules::{
    DrawReason, Game, GameError, Outcome, ParsePositionError, ParseUciError, Position, Uci, Variant, WinReason,
};

/// The most a caller may allow for one move. Every level stops far sooner;
/// anything above this is a caller's bug, not a wish.
pub const MAX_BUDGET_MS: u32 = 10 * 60 * 1000;

/// Why a request cannot be searched. Each becomes `INVALID_ARGUMENT` with
/// this text as its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("variant is unspecified: set STANDARD or ATOMIC")]
    VariantUnspecified,
    #[error("unknown variant {0}: expected STANDARD or ATOMIC")]
    UnknownVariant(i32),
    #[error("the engine does not play fog of war yet: only STANDARD and ATOMIC can be searched")]
    FogUnsupported,
    #[error("level is unspecified: set EASY, MEDIUM or HARD")]
    LevelUnspecified,
    #[error("unknown level {0}: expected EASY, MEDIUM or HARD")]
    UnknownLevel(i32),
    #[error("budget_ms {0} is over the {MAX_BUDGET_MS} ms one move may be allowed (0 leaves it to the level)")]
    BudgetTooLarge(u32),
    #[error("initial_fen {fen:?}: {source}")]
    BadFen { fen: String, source: ParsePositionError },
    #[error("moves[{index}]: {source}")]
    MoveSyntax { index: usize, source: ParseUciError },
    #[error("moves[{index}] {uci} is not a legal move in {fen}")]
    IllegalMove { index: usize, uci: String, fen: String },
    #[error("moves[{index}] {uci} comes after the game ended ({outcome})")]
    MoveAfterEnd { index: usize, uci: String, outcome: String },
    #[error("the game is already over ({0}): there is no move to find")]
    GameOver(String),
}

/// A checked request: the position to search and how.
#[derive(Clone, Debug)]
pub(crate) struct SearchTask {
    pub position: Position,
    /// Zobrist keys of the game's earlier positions, oldest first.
    pub history: Vec<u64>,
    pub level: Level,
    /// The caller's budget, `None` for the level's own.
    pub budget: Option<Duration>,
    pub clock: Option<Clock>,
    pub seed: u64,
}

impl SearchTask {
    pub fn from_request(request: &proto::BestMoveRequest) -> Result<SearchTask, RequestError> {
        let variant = variant_of(request.variant)?;
        let level = level_of(request.level)?;
        if request.budget_ms > MAX_BUDGET_MS {
            return Err(RequestError::BudgetTooLarge(request.budget_ms));
        }
        let initial = if request.initial_fen.trim().is_empty() {
            Position::new(variant)
        } else {
            Position::from_fen(&request.initial_fen, variant)
                .map_err(|source| RequestError::BadFen { fen: request.initial_fen.clone(), source })?
        };
        let mut game = Game::new(initial);
        for (index, text) in request.moves.iter().enumerate() {
            let uci: Uci = text.parse().map_err(|source| RequestError::MoveSyntax { index, source })?;
            let position = *game.position();
            let Some(m) = position.parse_uci(&uci) else {
                return Err(match game.outcome() {
                    Some(outcome) => {
                        RequestError::MoveAfterEnd { index, uci: uci.to_string(), outcome: describe(outcome) }
                    }
                    None => RequestError::IllegalMove { index, uci: uci.to_string(), fen: position.fen() },
                });
            };
            match game.play(m) {
                Ok(_) => {}
                Err(GameError::Finished(outcome)) => {
                    return Err(RequestError::MoveAfterEnd { index, uci: uci.to_string(), outcome: describe(outcome) })
                }
                Err(_) => return Err(RequestError::IllegalMove { index, uci: uci.to_string(), fen: position.fen() }),
            }
        }
        if let Some(outcome) = game.outcome() {
            return Err(RequestError::GameOver(describe(outcome)));
        }
        Ok(SearchTask {
            position: *game.position(),
            history: game.history_keys().to_vec(),
            level,
            budget: (request.budget_ms > 0).then(|| Duration::from_millis(request.budget_ms.into())),
            clock: request.clock.map(|clock| Clock {
                remaining: Duration::from_millis(clock.remaining_ms.into()),
                increment: Duration::from_millis(clock.increment_ms.into()),
                moves_to_go: None,
            }),
            seed: request.seed,
        })
    }

    /// The search limits when at most `time_left` remains before the
    /// answer is due.
    pub fn limits(&self, time_left: Option<Duration>) -> Limits {
        let budget = match (self.budget, time_left) {
            (Some(budget), Some(left)) => Some(budget.min(left)),
            (budget, left) => budget.or(left),
        };
        self.level.limits(self.clock, budget, self.seed)
    }
}

fn variant_of(value: i32) -> Result<Variant, RequestError> {
    match proto::Variant::try_from(value) {
        Ok(proto::Variant::Standard) => Ok(Variant::Standard),
        Ok(proto::Variant::Atomic) => Ok(Variant::Atomic),
        Ok(proto::Variant::Fog) => Err(RequestError::FogUnsupported),
        Ok(proto::Variant::Unspecified) => Err(RequestError::VariantUnspecified),
        Err(_) => Err(RequestError::UnknownVariant(value)),
    }
}

fn level_of(value: i32) -> Result<Level, RequestError> {
    match proto::Level::try_from(value) {
        Ok(proto::Level::Easy) => Ok(Level::Easy),
        Ok(proto::Level::Medium) => Ok(Level::Medium),
        Ok(proto::Level::Hard) => Ok(Level::Hard),
        Ok(proto::Level::Unspecified) => Err(RequestError::LevelUnspecified),
        Err(_) => Err(RequestError::UnknownLevel(value)),
    }
}

/// An outcome in words, for error messages: `1-0, white's king exploded`.
fn describe(outcome: Outcome) -> String {
    let why = match outcome {
        Outcome::Decisive { winner, reason } => {
            let loser = !winner;
            match reason {
                WinReason::Checkmate => format!("{loser} is checkmated"),
                WinReason::KingExploded => format!("{loser}'s king exploded"),
                WinReason::KingCaptured => format!("{loser}'s king was captured"),
                WinReason::Timeout => format!("{loser} ran out of time"),
            }
        }
        Outcome::Draw { reason } => match reason {
            DrawReason::Stalemate => "stalemate".to_owned(),
            DrawReason::NoMoves => "no moves".to_owned(),
            DrawReason::InsufficientMaterial => "insufficient material".to_owned(),
            DrawReason::ThreefoldRepetition => "threefold repetition".to_owned(),
            DrawReason::FiftyMoves => "fifty moves without a capture or pawn move".to_owned(),
            DrawReason::TimeoutVsInsufficientMaterial => "time out against insufficient material".to_owned(),
        },
    };
    format!("{outcome}, {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(moves: &[&str]) -> proto::BestMoveRequest {
        proto::BestMoveRequest {
            variant: proto::Variant::Atomic.into(),
            level: proto::Level::Easy.into(),
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn history_holds_every_earlier_position() {
        let task = SearchTask::from_request(&request(&["g1f3", "g8f6", "f3g1", "f6g8"])).unwrap();
        assert_eq!(task.history.len(), 4);
        assert_eq!(task.history[0], Position::new(Variant::Atomic).zobrist_hash());
        assert_eq!(task.position.zobrist_hash(), task.history[0]);
    }

    #[test]
    fn the_sooner_of_budget_and_deadline_limits_the_search() {
        let mut task = SearchTask::from_request(&request(&[])).unwrap();
        task.level = Level::Hard;
        let ms = Duration::from_millis;
        assert_eq!(task.limits(None).movetime, Some(ms(1000)));
        assert_eq!(task.limits(Some(ms(300))).movetime, Some(ms(300)));
        task.budget = Some(ms(200));
        assert_eq!(task.limits(Some(ms(300))).movetime, Some(ms(200)));
        assert_eq!(task.limits(Some(ms(100))).movetime, Some(ms(100)));
    }

    #[test]
    fn repetition_ends_the_game() {
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        let moves: Vec<&str> = shuffle.iter().chain(&shuffle).copied().collect();
        let err = SearchTask::from_request(&request(&moves)).unwrap_err();
        assert!(matches!(&err, RequestError::GameOver(why) if why.contains("threefold")), "{err}");
    }
}
