//! Puzzles over HTTP, in lichess's puzzle API shape where it fits:
//! `GET /api/puzzle/daily`, `GET /api/puzzle/{id}`, and for the page (with
//! the player's token) `GET /api/puzzle/next`, `GET /api/puzzle/rating`
//! and `POST /api/puzzle/{id}/attempt`. The rating service keeps the
//! puzzles and the ratings; this module judges each answer itself with
//! `fogblast-puzzles` (the page's word is never taken) and refuses an
//! answer meant for another puzzle, or not a puzzle answer at all, before
//! anything is recorded.
//!
//! A fog puzzle's `fen` is the solver's view (`*` on fogged squares):
//! puzzles keep nothing more, so nothing hidden can leak.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Json;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::rating::{
    DailyPuzzleRequest, NextPuzzleRequest, PuzzleAttemptRequest, PuzzleRating, PuzzleRatingRequest, PuzzleRecord,
    PuzzleRequest,
};
use fogblast_puzzles::{Attempt, Puzzle};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::deadline::within;
use crate::http::json_or_error;
use crate::recovery::bearer_player;
use crate::Gateway;

const RATING: &str = "rating service";
/// The longest attempt read: a puzzle line is at most five plies.
const MAX_ATTEMPT_MOVES: usize = 16;

fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
}

fn puzzle_of(record: &PuzzleRecord) -> Puzzle {
    Puzzle {
        id: record.id.clone(),
        variant: record.variant.clone(),
        fen: record.fen.clone(),
        solution: record.solution.clone(),
        themes: record.themes.clone(),
        rating: record.rating,
        source: record.source.clone(),
    }
}

/// The ply the puzzle starts at, counted from the game's first move, from
/// the fullmove number and side to move of its FEN.
fn initial_ply(fen: &str) -> u32 {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let fullmoves: u32 = fields.last().and_then(|f| f.parse().ok()).unwrap_or(1);
    2 * fullmoves.saturating_sub(1) + u32::from(fields.get(1) == Some(&"b"))
}

/// What the page needs to play a puzzle without rules of its own: the
/// position after each ply of the solution (atomic: explosions drawn; fog:
/// the view with the solver's move made) and the solver's moves at each of
/// its turns (fog: the moves to squares it sees).
fn line_positions(record: &PuzzleRecord) -> (Vec<String>, Vec<Vec<String>>) {
    let puzzle = puzzle_of(record);
    let (Ok(mut pos), Ok(variant)) = (puzzle.position(), puzzle.variant()) else {
        return (Vec::new(), Vec::new());
    };
    let view = (variant == fogblast_rules::Variant::Fog)
        .then(|| fogblast_puzzles::view::parse_view(&record.fen).ok())
        .flatten();
    let mut positions = Vec::new();
    let mut legal = Vec::new();
    for (ply, text) in record.solution.iter().enumerate() {
        if ply % 2 == 0 {
            let moves = match &view {
                Some(view) => fogblast_puzzles::fog::candidate_moves(view),
                None => pos.legal_moves().into_iter().collect(),
            };
            legal.push(moves.into_iter().map(fogblast_puzzles::uci).collect());
        }
        let Some(m) = fogblast_puzzles::parse_move(&pos, text, None) else { break };
        pos.play_unchecked(m);
        positions.push(match &view {
            // The fog stays where it was: the solver sees no more for moving.
            Some(view) => fogblast_rules::fogged_board_fen(pos.board(), view.visible),
            None => pos.fen(),
        });
    }
    (positions, legal)
}

/// A puzzle in lichess's shape: `game` (the variant as lichess's perf, and
/// the starting position) and `puzzle` (id, rating, plays, solution,
/// themes, initialPly), with `fen`, `variant`, `view`, and the line's
/// `positions` and `legal` moves (see [`line_positions`]) added.
pub fn puzzle_json(record: &PuzzleRecord) -> Value {
    let fog = record.variant == "fog";
    let (positions, legal) = line_positions(record);
    let (key, name) = if fog { ("fogOfWar", "Fog of war") } else { ("atomic", "Atomic") };
    json!({
        "game": {
            "id": Value::Null,
            "perf": { "key": key, "name": name },
            "rated": true,
            "players": [],
            "pgn": "",
            "fen": record.fen,
            "source": record.source,
        },
        "puzzle": {
            "id": record.id,
            "rating": record.rating.round(),
            "plays": record.plays,
            "solution": record.solution,
            "themes": record.themes,
            "initialPly": initial_ply(&record.fen),
            "fen": record.fen,
            "variant": record.variant,
            "view": fog,
            "positions": positions,
            "legal": legal,
        },
    })
}

fn rating_json(rating: &PuzzleRating) -> Value {
    json!({
        "rating": rating.rating.round(),
        "deviation": rating.deviation.round(),
        "provisional": rating.provisional,
        "attempts": rating.attempts,
        "solved": rating.solved,
    })
}

/// `GET /api/puzzle/daily`: the day's puzzle (UTC), the same for everyone.
pub async fn daily(State(gateway): State<Arc<Gateway>>) -> Response {
    let result = async {
        let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let day = i64::try_from(seconds / 86_400).unwrap_or(0);
        let timeout = gateway.config.settings.rating_timeout();
        let record =
            within(timeout, RATING, gateway.rating_for("puzzles need")?.get_daily_puzzle(DailyPuzzleRequest { day }))
                .await?;
        Ok(puzzle_json(&record))
    }
    .await;
    json_or_error(result)
}

/// `GET /api/puzzle/{id}`.
pub async fn get(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> Response {
    let result = async {
        let timeout = gateway.config.settings.rating_timeout();
        let record =
            within(timeout, RATING, gateway.rating_for("puzzles need")?.get_puzzle(PuzzleRequest { id })).await?;
        Ok(puzzle_json(&record))
    }
    .await;
    json_or_error(result)
}

#[derive(Debug, Default, Deserialize)]
pub struct NextQuery {
    #[serde(default)]
    variant: Option<String>,
}

/// `GET /api/puzzle/next?variant=atomic|fog`: a puzzle near the token's
/// player's puzzle rating they have not tried, with their rating.
pub async fn next(State(gateway): State<Arc<Gateway>>, headers: HeaderMap, Query(query): Query<NextQuery>) -> Response {
    let result = async {
        let player = bearer_player(&gateway, &headers)?;
        let variant = query.variant.unwrap_or_default();
        let request = NextPuzzleRequest { player_id: player.to_string(), variant };
        let timeout = gateway.config.settings.rating_timeout();
        let record = within(timeout, RATING, gateway.rating_for("puzzles need")?.next_puzzle(request)).await?;
        Ok(puzzle_json(&record))
    }
    .await;
    json_or_error(result)
}

/// `GET /api/puzzle/rating`: the token's player's puzzle rating.
pub async fn player_rating(State(gateway): State<Arc<Gateway>>, headers: HeaderMap) -> Response {
    let result = async {
        let player = bearer_player(&gateway, &headers)?;
        let timeout = gateway.config.settings.rating_timeout();
        let request = PuzzleRatingRequest { player_id: player.to_string() };
        let standing = within(timeout, RATING, gateway.rating_for("puzzles need")?.get_puzzle_rating(request)).await?;
        Ok(rating_json(&standing))
    }
    .await;
    json_or_error(result)
}

#[derive(Debug, Deserialize)]
pub struct AttemptBody {
    /// The puzzle the answer is for; it must be the one in the path.
    puzzle: String,
    /// The line as played: the solver's moves and the replies, in UCI.
    moves: Vec<String>,
}

/// `POST /api/puzzle/{id}/attempt` with `{"puzzle": id, "moves": [...]}`:
/// judges the line played, rates the player's first attempt at the puzzle,
/// and answers the verdict, both ratings and the change.
pub async fn attempt(
    State(gateway): State<Arc<Gateway>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<AttemptBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let result = async {
        let player = bearer_player(&gateway, &headers)?;
        let Json(body) = body.map_err(|rejection| {
            bad(format!("an attempt is {{\"puzzle\": id, \"moves\": [UCI moves]}}: {}", rejection.body_text()))
        })?;
        if body.puzzle != id {
            return Err(ServiceError::new(
                ErrorCode::Conflict,
                format!("this answer is for puzzle {}, not puzzle {id}", body.puzzle),
            ));
        }
        if body.moves.len() > MAX_ATTEMPT_MOVES {
            return Err(bad(format!("an attempt has at most {MAX_ATTEMPT_MOVES} moves")));
        }
        let timeout = gateway.config.settings.rating_timeout();
        let mut client = gateway.rating_for("puzzles need")?;
        let record = within(timeout, RATING, client.get_puzzle(PuzzleRequest { id: id.clone() })).await?;
        let verdict = puzzle_of(&record).check_attempt(&body.moves).map_err(|error| bad(error.to_string()))?;
        let solved = verdict == Attempt::Solved;
        let request = PuzzleAttemptRequest { player_id: player.to_string(), puzzle_id: id.clone(), solved };
        let done = within(timeout, RATING, client.record_puzzle_attempt(request)).await?;
        let after = done.player.unwrap_or_default();
        let mut player = rating_json(&after);
        player["before"] = json!(done.player_before.round());
        player["change"] = json!(after.rating.round() - done.player_before.round());
        Ok(json!({
            "puzzle": { "id": id, "before": done.puzzle_before.round(), "rating": done.puzzle_after.round() },
            "solved": solved,
            "failedAt": match verdict { Attempt::Failed { ply } => Some(ply), Attempt::Solved => None },
            "solution": record.solution,
            "rated": done.rated,
            "player": player,
        }))
    }
    .await;
    json_or_error(result)
}
