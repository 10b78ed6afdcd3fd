//! Analysis: every position of a finished game searched to a fixed depth,
//! each score turned to white's side as lichess gives it. A game is checked
//! and replayed here, on the caller's task; the search threads then take
//! one position at a time ([`AnalysisTask::position`]), so a computer move
//! can take the thread between two positions, or stop one midway and have
//! it searched again (see `pool.rs`).

use fogblast_engine::{Limits, SearchReport};
use fogblast_proto::engine as proto;
use fogblast_rules::{CastlingMode, Color, Game, GameError, Position, Uci, Variant};

use crate::request::{describe, RequestError};

/// The deepest search a caller may ask of each position.
pub const MAX_ANALYSIS_DEPTH: u32 = 30;
/// The longest game analysed, in plies: past any real game's length, short
/// of a request made to keep a thread busy for hours.
pub const MAX_ANALYSIS_PLIES: usize = 1_000;

/// One position of the game and what came before it.
#[derive(Clone, Debug)]
pub(crate) struct AnalysedPosition {
    pub position: Position,
    /// Zobrist keys of the earlier positions, oldest first.
    pub history: Vec<u64>,
    /// The result when the game ended here (`1-0`, `0-1`, `1/2-1/2`).
    pub result: Option<&'static str>,
}

/// A checked analysis request.
#[derive(Clone, Debug)]
pub(crate) struct AnalysisTask {
    pub positions: Vec<AnalysedPosition>,
    pub depth: u32,
}

impl AnalysisTask {
    /// Checks and replays the game; `default_depth` applies when the
    /// request leaves the depth at 0.
    pub fn from_request(request: &proto::AnalyseRequest, default_depth: u32) -> Result<AnalysisTask, RequestError> {
        let variant = crate::request::variant_of(request.variant)?;
        if request.depth > MAX_ANALYSIS_DEPTH {
            return Err(RequestError::DepthTooLarge(request.depth));
        }
        if request.moves.len() > MAX_ANALYSIS_PLIES {
            return Err(RequestError::GameTooLong(request.moves.len()));
        }
        let initial = if request.initial_fen.trim().is_empty() || variant == Variant::Fog {
            Position::new(variant)
        } else {
            Position::from_fen(&request.initial_fen, variant)
                .map_err(|source| RequestError::BadFen { fen: request.initial_fen.clone(), source })?
        };
        let mut game = Game::new(initial);
        let mut positions = vec![AnalysedPosition::of(&game)];
        for (index, text) in request.moves.iter().enumerate() {
            let uci: Uci = text.parse().map_err(|source| RequestError::MoveSyntax { index, source })?;
            let position = *game.position();
            let illegal = || RequestError::IllegalMove { index, uci: uci.to_string(), fen: position.fen() };
            let after_end =
                |outcome| RequestError::MoveAfterEnd { index, uci: uci.to_string(), outcome: describe(outcome) };
            let Some(m) = position.parse_uci(&uci) else {
                return Err(game.outcome().map_or_else(illegal, after_end));
            };
            match game.play(m) {
                Ok(_) => {}
                Err(GameError::Finished(outcome)) => return Err(after_end(outcome)),
                Err(_) => return Err(illegal()),
            }
            positions.push(AnalysedPosition::of(&game));
        }
        let depth = if request.depth == 0 { default_depth } else { request.depth };
        Ok(AnalysisTask { positions, depth })
    }

    /// The limits of one position's search.
    pub fn limits(&self) -> Limits {
        Limits { depth: Some(self.depth), ..Limits::default() }
    }
}

impl AnalysedPosition {
    fn of(game: &Game) -> AnalysedPosition {
        AnalysedPosition {
            position: *game.position(),
            history: game.history_keys().to_vec(),
            result: game.outcome().map(|outcome| outcome.result_str()),
        }
    }

    /// The position's evaluation from a finished search of it.
    pub fn eval(&self, report: &SearchReport) -> proto::PositionEval {
        let white = if self.position.turn() == Color::White { 1 } else { -1 };
        let (cp, mate) = match report.mate_in_plies() {
            // Plies to moves: mate in 1 ply is mate in 1, in 3 plies in 2.
            Some(plies) => (None, Some(white * plies.signum() * ((plies.abs() + 1) / 2).max(1))),
            None => (Some(white * report.score), None),
        };
        let uci = |m: &fogblast_rules::Move| m.to_uci(CastlingMode::Standard).to_string();
        proto::PositionEval {
            cp,
            mate,
            best: report.best.as_ref().map(uci).unwrap_or_default(),
            line: report.pv.iter().map(uci).collect(),
            depth: report.depth,
            result: String::new(),
        }
    }

    /// The evaluation of a position that ends the game: its result, no score.
    pub fn finished(&self) -> Option<proto::PositionEval> {
        self.result.map(|result| proto::PositionEval { result: result.to_owned(), ..Default::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(variant: proto::Variant, moves: &[&str]) -> proto::AnalyseRequest {
        proto::AnalyseRequest {
            variant: variant.into(),
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn every_position_is_kept_with_its_history_and_the_last_with_its_result() {
        // Atomic: the knight takes on f7 and the explosion takes the king beside it.
        let moves = ["g1f3", "a7a6", "f3g5", "a6a5", "g5f7"];
        let task = AnalysisTask::from_request(&request(proto::Variant::Atomic, &moves), 6).unwrap();
        assert_eq!(task.positions.len(), 6);
        assert_eq!(task.positions[3].history.len(), 3);
        assert_eq!(task.positions[5].result, Some("1-0"));
        assert!(task.positions[..5].iter().all(|p| p.result.is_none()));
        assert_eq!(task.depth, 6);
    }

    #[test]
    fn bad_games_are_refused_with_the_move_at_fault() {
        let err = AnalysisTask::from_request(&request(proto::Variant::Standard, &["e2e4", "e2e4"]), 6).unwrap_err();
        assert!(matches!(err, RequestError::IllegalMove { index: 1, .. }), "{err}");
        let err = AnalysisTask::from_request(&request(proto::Variant::Standard, &["e2e9"]), 6).unwrap_err();
        assert!(matches!(err, RequestError::MoveSyntax { index: 0, .. }), "{err}");
        let mut deep = request(proto::Variant::Standard, &[]);
        deep.depth = MAX_ANALYSIS_DEPTH + 1;
        assert_eq!(AnalysisTask::from_request(&deep, 6).unwrap_err(), RequestError::DepthTooLarge(deep.depth));
        let after_end = ["g1f3", "a7a6", "f3g5", "a6a5", "g5f7", "a5a4"];
        let err = AnalysisTask::from_request(&request(proto::Variant::Atomic, &after_end), 6).unwrap_err();
        assert!(matches!(err, RequestError::MoveAfterEnd { index: 5, .. }), "{err}");
    }

    #[test]
    fn a_fog_game_is_replayed_on_the_true_board() {
        let task = AnalysisTask::from_request(&request(proto::Variant::Fog, &["e2e4", "d7d5", "e4d5"]), 4).unwrap();
        assert_eq!(task.positions.len(), 4);
        assert_eq!(task.positions[3].position.variant(), Variant::Fog);
    }
}
