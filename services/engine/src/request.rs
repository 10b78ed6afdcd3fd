//! Turns a `BestMove` request into a search the pool can run, or into the
//! reason it cannot be searched. Checks happen here, on the caller's task,
//! so a bad request never waits in the queue.

use std::time::Duration;

use fogblast_engine::fog::{FogObservation, ObservationError, Sight};
use fogblast_engine::{Clock, FogLimits, Level, Limits};
use fogblast_proto::engine as proto;
use fogblast_rules::{
    Bitboard, Color, DrawReason, Game, GameError, Outcome, ParsePositionError, ParseUciError, Position, Square, Uci,
    Variant, WinReason,
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
    #[error("a FOG request must carry `fog`, the engine side's observations")]
    FogMissing,
    #[error("`fog` is for FOG requests only")]
    FogNotExpected,
    #[error("a FOG request must not carry `initial_fen` or `moves`: the engine is told only what its side observed")]
    FogWithPosition,
    #[error("fog.side is unspecified: set WHITE or BLACK")]
    FogSideUnspecified,
    #[error("fog.plies[{index}]: {source}")]
    FogPly { index: usize, source: ObservationError },
    #[error("fog.plies[{index}]: own_move is set on the opponent's ply, or missing on the engine's own")]
    FogMover { index: usize },
    #[error("fog: it is not the engine side's turn after the plies given")]
    FogNotOurTurn,
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
    #[error("depth {0} is over the {max} an analysis may ask for (0 leaves it to the pool)", max = crate::analysis::MAX_ANALYSIS_DEPTH)]
    DepthTooLarge(u32),
    #[error("a game of {0} plies is over the {max} an analysis takes", max = crate::analysis::MAX_ANALYSIS_PLIES)]
    GameTooLong(usize),
}

/// What a request asks about.
#[derive(Clone, Debug)]
pub(crate) enum Subject {
    /// Standard and atomic: the whole position.
    Position {
        position: Position,
        /// Zobrist keys of the game's earlier positions, oldest first.
        history: Vec<u64>,
    },
    /// Fog of war: only what the engine's side observed.
    Fog(FogObservation),
}

/// A checked request: what to search and how.
#[derive(Clone, Debug)]
pub(crate) struct SearchTask {
    pub subject: Subject,
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
        let subject = match (variant, &request.fog) {
            (Variant::Fog, None) => return Err(RequestError::FogMissing),
            (Variant::Fog, Some(fog)) => {
                if !request.initial_fen.trim().is_empty() || !request.moves.is_empty() {
                    return Err(RequestError::FogWithPosition);
                }
                Subject::Fog(fog_observation(fog)?)
            }
            (_, Some(_)) => return Err(RequestError::FogNotExpected),
            (_, None) => position_of(request, variant)?,
        };
        Ok(SearchTask {
            subject,
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
        self.level.limits(self.clock, self.budget_within(time_left), self.seed)
    }

    /// The fog-of-war limits when at most `time_left` remains.
    pub fn fog_limits(&self, time_left: Option<Duration>) -> FogLimits {
        self.level.fog_limits(self.clock, self.budget_within(time_left), self.seed)
    }

    fn budget_within(&self, time_left: Option<Duration>) -> Option<Duration> {
        match (self.budget, time_left) {
            (Some(budget), Some(left)) => Some(budget.min(left)),
            (budget, left) => budget.or(left),
        }
    }

    /// The position searched, in FEN, for logs; fog requests have none.
    pub fn describe(&self) -> String {
        match &self.subject {
            Subject::Position { position, .. } => position.fen(),
            Subject::Fog(obs) => format!("fog of war, {} to move after {} plies", obs.color(), obs.plies().len()),
        }
    }
}

/// The observation a fog request carries, checked ply by ply.
fn fog_observation(fog: &proto::FogObservation) -> Result<FogObservation, RequestError> {
    let color = match proto::Side::try_from(fog.side) {
        Ok(proto::Side::White) => Color::White,
        Ok(proto::Side::Black) => Color::Black,
        _ => return Err(RequestError::FogSideUnspecified),
    };
    let mut obs = FogObservation::new(color);
    for (index, ply) in fog.plies.iter().enumerate() {
        let ours = obs.turn() == color;
        if ours == ply.own_move.is_empty() {
            return Err(RequestError::FogMover { index });
        }
        let fail = |source| RequestError::FogPly { index, source };
        if ours {
            let uci: Uci = ply
                .own_move
                .parse()
                .map_err(|_| fail(ObservationError::BadMove { ply: index, text: ply.own_move.clone() }))?;
            let sight = Sight::parse(&ply.view, None).map_err(fail)?;
            obs.push_own(uci, sight).map_err(fail)?;
        } else {
            let sight = Sight::parse(&ply.view, Some(&ply.en_passant)).map_err(fail)?;
            let mut lost = Bitboard::EMPTY;
            for text in &ply.lost {
                let sq: Square = text.parse().map_err(|_| fail(ObservationError::BadLostSquare(text.clone())))?;
                lost.set(sq);
            }
            obs.push_opponent(sight, lost).map_err(fail)?;
        }
    }
    if obs.turn() != color {
        return Err(RequestError::FogNotOurTurn);
    }
    Ok(obs)
}

fn position_of(request: &proto::BestMoveRequest, variant: Variant) -> Result<Subject, RequestError> {
    {
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
        Ok(Subject::Position { position: *game.position(), history: game.history_keys().to_vec() })
    }
}

pub(crate) fn variant_of(value: i32) -> Result<Variant, RequestError> {
    let variant = proto::Variant::try_from(value).map_err(|_| RequestError::UnknownVariant(value))?;
    Variant::try_from(variant).map_err(|_| RequestError::VariantUnspecified)
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
pub(crate) fn describe(outcome: Outcome) -> String {
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
        let Subject::Position { position, history } = task.subject else { panic!("a position request") };
        assert_eq!(history.len(), 4);
        assert_eq!(history[0], Position::new(Variant::Atomic).zobrist_hash());
        assert_eq!(position.zobrist_hash(), history[0]);
    }

    fn fog_request(side: proto::Side, plies: Vec<proto::FogPly>) -> proto::BestMoveRequest {
        proto::BestMoveRequest {
            variant: proto::Variant::Fog.into(),
            level: proto::Level::Easy.into(),
            fog: Some(proto::FogObservation { side: side.into(), plies }),
            ..Default::default()
        }
    }

    /// The plies a server sends black after 1. e4.
    fn after_e4() -> Vec<proto::FogPly> {
        let mut pos = Position::new(Variant::Fog);
        let m = pos.parse_uci(&"e2e4".parse().unwrap()).unwrap();
        pos.play_unchecked(m);
        let view = pos.fog_view(Color::Black);
        vec![proto::FogPly { view: view.board_fen(), ..Default::default() }]
    }

    #[test]
    fn fog_requests_carry_observations_only() {
        let task = SearchTask::from_request(&fog_request(proto::Side::Black, after_e4())).unwrap();
        let Subject::Fog(obs) = &task.subject else { panic!("a fog request") };
        assert_eq!(obs.color(), Color::Black);
        assert_eq!(obs.plies().len(), 1);

        let mut with_moves = fog_request(proto::Side::Black, after_e4());
        with_moves.moves = vec!["e2e4".into()];
        assert_eq!(SearchTask::from_request(&with_moves).unwrap_err(), RequestError::FogWithPosition);
        let mut with_fen = fog_request(proto::Side::Black, after_e4());
        with_fen.initial_fen = fogblast_rules::STARTING_FEN.into();
        assert_eq!(SearchTask::from_request(&with_fen).unwrap_err(), RequestError::FogWithPosition);
        let mut missing = fog_request(proto::Side::Black, after_e4());
        missing.fog = None;
        assert_eq!(SearchTask::from_request(&missing).unwrap_err(), RequestError::FogMissing);
        let mut atomic = fog_request(proto::Side::Black, after_e4());
        atomic.variant = proto::Variant::Atomic.into();
        assert_eq!(SearchTask::from_request(&atomic).unwrap_err(), RequestError::FogNotExpected);
    }

    #[test]
    fn malformed_fog_plies_are_refused() {
        // White is to move after one ply: not black's turn.
        assert_eq!(
            SearchTask::from_request(&fog_request(proto::Side::White, after_e4())).unwrap_err(),
            RequestError::FogMover { index: 0 }
        );
        assert_eq!(
            SearchTask::from_request(&fog_request(proto::Side::Unspecified, after_e4())).unwrap_err(),
            RequestError::FogSideUnspecified
        );
        let mut bad_view = after_e4();
        bad_view[0].view = "8/8/8".into();
        let err = SearchTask::from_request(&fog_request(proto::Side::Black, bad_view)).unwrap_err();
        assert!(matches!(err, RequestError::FogPly { index: 0, .. }), "{err}");
        let mut bad_lost = after_e4();
        bad_lost[0].lost = vec!["z9".into()];
        let err = SearchTask::from_request(&fog_request(proto::Side::Black, bad_lost)).unwrap_err();
        assert!(matches!(err, RequestError::FogPly { index: 0, .. }), "{err}");
        // White's first move with nothing before it: white to move, no plies.
        assert!(SearchTask::from_request(&fog_request(proto::Side::White, vec![])).is_ok());
        assert_eq!(
            SearchTask::from_request(&fog_request(proto::Side::Black, vec![])).unwrap_err(),
            RequestError::FogNotOurTurn
        );
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
