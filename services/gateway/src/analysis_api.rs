//! Computer analysis over HTTP: `POST /api/games/{id}/analysis` asks for a
//! finished game's analysis, `GET` the same path answers its state and,
//! once done, the evaluation of every position, each move's class and
//! each side's accuracy. The rating service keeps analyses with the
//! archive and the engine pool computes them; this module checks that the
//! game is over (a game in play, fog of war above all, is never analysed),
//! and renders the answer.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{GetStateRequest, Status};
use fogblast_proto::ids::GameId;
use fogblast_proto::rating::{AnalysisRequest, AnalysisState, GameAnalysis, GameRequest, MoveClass};
use serde::Serialize;

use crate::deadline::within;
use crate::http::{client_ip, error_response};
use crate::Gateway;

const RATING: &str = "rating service";

/// A game's analysis as the API writes it.
#[derive(Debug, Serialize)]
pub struct AnalysisView {
    pub game: String,
    /// `queued`, `done` or `failed`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    pub depth: u32,
    pub requested_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<i64>,
    pub positions: Vec<PositionView>,
    pub moves: Vec<MoveView>,
    pub accuracy: Accuracy,
}

/// One position's evaluation, from white's side.
#[derive(Debug, Serialize)]
pub struct PositionView {
    pub ply: usize,
    pub cp: Option<i32>,
    pub mate: Option<i32>,
    pub best: Option<String>,
    pub line: Vec<String>,
    /// The result, on the position that ends the game.
    pub result: Option<String>,
}

/// One move judged.
#[derive(Debug, Serialize)]
pub struct MoveView {
    pub ply: u32,
    pub uci: String,
    /// `inaccuracy`, `mistake`, `blunder`, or none.
    pub judgement: Option<&'static str>,
    /// `?!`, `?` or `??`.
    pub mark: Option<&'static str>,
    pub better: Option<String>,
    pub win_before: f64,
    pub win_after: f64,
    pub accuracy: f64,
}

#[derive(Debug, Serialize)]
pub struct Accuracy {
    pub white: Option<f64>,
    pub black: Option<f64>,
}

fn state_name(state: AnalysisState) -> &'static str {
    match state {
        AnalysisState::Done => "done",
        AnalysisState::Failed => "failed",
        AnalysisState::Queued | AnalysisState::Unspecified => "queued",
    }
}

fn judgement(class: MoveClass) -> Option<(&'static str, &'static str)> {
    match class {
        MoveClass::Inaccuracy => Some(("inaccuracy", "?!")),
        MoveClass::Mistake => Some(("mistake", "?")),
        MoveClass::Blunder => Some(("blunder", "??")),
        MoveClass::Sound | MoveClass::Unspecified => None,
    }
}

pub fn view(analysis: GameAnalysis) -> AnalysisView {
    let state = analysis.state();
    let positions = analysis
        .positions
        .into_iter()
        .enumerate()
        .map(|(ply, eval)| PositionView {
            ply,
            cp: eval.cp,
            mate: eval.mate,
            best: Some(eval.best).filter(|best| !best.is_empty()),
            line: eval.line,
            result: Some(eval.result).filter(|result| !result.is_empty()),
        })
        .collect();
    let moves = analysis
        .moves
        .into_iter()
        .map(|judged| {
            let named = judgement(judged.class());
            MoveView {
                ply: judged.ply,
                uci: judged.uci,
                judgement: named.map(|(name, _)| name),
                mark: named.map(|(_, mark)| mark),
                better: Some(judged.better).filter(|better| !better.is_empty()),
                win_before: round1(judged.win_before),
                win_after: round1(judged.win_after),
                accuracy: round1(judged.accuracy),
            }
        })
        .collect();
    AnalysisView {
        game: analysis.game_id,
        state: state_name(state),
        error: analysis.error,
        depth: analysis.depth,
        requested_ms: analysis.requested_at_ms,
        finished_ms: Some(analysis.finished_at_ms).filter(|ms| *ms > 0),
        positions,
        moves,
        accuracy: Accuracy { white: analysis.white_accuracy.map(round1), black: analysis.black_accuracy.map(round1) },
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Refuses a game the game service still plays: nothing of it, fog of war
/// above all, may be analysed before its end. `true` when the game service
/// still holds the game, ended.
async fn refuse_unfinished(gateway: &Gateway, game: &GameId) -> Result<bool, ServiceError> {
    match game_service_status(gateway, game).await? {
        Some(Status::Ended) => Ok(true),
        Some(Status::Waiting) => Err(ServiceError::new(
            ErrorCode::Conflict,
            format!("game {game} has not started: only a finished game can be analysed"),
        )),
        Some(_) => Err(ServiceError::new(
            ErrorCode::Conflict,
            format!("game {game} is still being played: only a finished game can be analysed"),
        )),
        // Finished games leave the game service; the archive answers for them.
        None => Ok(false),
    }
}

fn parse(id: &str) -> Result<GameId, ServiceError> {
    GameId::parse(id).map_err(|e| ServiceError::new(ErrorCode::BadRequest, e.to_string()))
}

/// `POST /api/games/{id}/analysis`: 202 while queued, 200 once done.
pub async fn request(
    State(gateway): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let requester = client_ip(&gateway, peer, &headers).to_string();
    let result = async {
        let game = parse(&id)?;
        let just_ended = refuse_unfinished(&gateway, &game).await?;
        let request = AnalysisRequest { game_id: game.to_string(), requester };
        let timeout = gateway.config.settings.rating_timeout();
        match within(timeout, RATING, gateway.rating_for("analysis needs")?.request_analysis(request)).await {
            Err(error) if error.code == ErrorCode::NotFound && just_ended => Err(ServiceError::new(
                ErrorCode::Conflict,
                format!("game {game} has just ended and is not archived yet: ask again in a moment"),
            )),
            answer => answer,
        }
    }
    .await;
    match result {
        Ok(analysis) => {
            let status = if analysis.state() == AnalysisState::Queued { StatusCode::ACCEPTED } else { StatusCode::OK };
            (status, Json(view(analysis))).into_response()
        }
        Err(error) => error_response(&error),
    }
}

/// `GET /api/games/{id}/analysis`: the analysis, or `state: "none"` for a
/// game (in play, just ended or archived) nobody asked to analyse, so a
/// page that looks for one on every finished game is not answered with an
/// error; 404 only for a game that does not exist.
pub async fn get(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> Response {
    let result = async {
        let game = parse(&id)?;
        let request = GameRequest { game_id: game.to_string() };
        let timeout = gateway.config.settings.rating_timeout();
        match within(timeout, RATING, gateway.rating_for("analysis needs")?.get_analysis(request)).await {
            Ok(analysis) => Ok(Json(view(analysis)).into_response()),
            Err(error) if error.code == ErrorCode::NotFound => {
                if game_exists(&gateway, &game).await? {
                    Ok(Json(serde_json::json!({ "game": game.as_str(), "state": "none" })).into_response())
                } else {
                    Err(ServiceError::new(ErrorCode::NotFound, format!("no game {game}")))
                }
            }
            Err(error) => Err(error),
        }
    }
    .await;
    result.unwrap_or_else(|error| error_response(&error))
}

/// Whether the game service holds `game` or the archive has it.
async fn game_exists(gateway: &Gateway, game: &GameId) -> Result<bool, ServiceError> {
    if game_service_status(gateway, game).await?.is_some() {
        return Ok(true);
    }
    match crate::archive_api::archived_record(gateway, game.as_str()).await {
        Ok(archived) => Ok(archived.game.is_some()),
        Err(error) if error.code == ErrorCode::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

/// The status of `game` in the game service; `None` once it has left it
/// (finished games do, after a while) or if it never was.
pub(crate) async fn game_service_status(gateway: &Gateway, game: &GameId) -> Result<Option<Status>, ServiceError> {
    let request = GetStateRequest { game_id: game.to_string(), player_id: String::new() };
    match gateway.router.get_state(request).await {
        Ok(state) => Ok(Some(state.status())),
        Err(error) if error.code == ErrorCode::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}
