//! The rating service's puzzle calls: each argument checked, each refusal
//! a status with an `ErrorDetail`.

// `Status` is what tonic answers with; boxing it here would only unbox it.
#![allow(clippy::result_large_err)]

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::ids::PlayerId;
use fogblast_proto::rating::{
    DailyPuzzleRequest, NextPuzzleRequest, PuzzleAttemptRequest, PuzzleAttemptResult, PuzzleRating,
    PuzzleRatingRequest, PuzzleRecord, PuzzleRequest,
};
use tonic::Status;

use crate::archive::{Archive, ArchiveError};
use crate::puzzles::{AttemptError, PuzzleStanding, StoredPuzzle};

fn bad(message: impl Into<String>) -> Status {
    ServiceError::new(ErrorCode::BadRequest, message).into_status()
}

fn not_found(message: impl Into<String>) -> Status {
    ServiceError::new(ErrorCode::NotFound, message).into_status()
}

fn unavailable(error: ArchiveError) -> Status {
    ServiceError::new(ErrorCode::Unavailable, format!("the archive is unavailable: {error}")).into_status()
}

fn player(id: &str) -> Result<PlayerId, Status> {
    PlayerId::parse(id).map_err(|e| bad(e.to_string()))
}

/// A puzzle id as the generator writes them: eight lowercase letters and digits.
fn puzzle_id(id: &str) -> Result<&str, Status> {
    let valid = id.len() == 8 && id.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
    valid.then_some(id).ok_or_else(|| bad(format!("`{id}` is not a puzzle id (eight lowercase letters and digits)")))
}

fn record(stored: StoredPuzzle) -> PuzzleRecord {
    let StoredPuzzle { puzzle, deviation, plays } = stored;
    PuzzleRecord {
        id: puzzle.id,
        variant: puzzle.variant,
        fen: puzzle.fen,
        solution: puzzle.solution,
        themes: puzzle.themes,
        rating: puzzle.rating,
        deviation,
        plays,
        source: puzzle.source,
    }
}

fn rating(standing: PuzzleStanding) -> PuzzleRating {
    PuzzleRating {
        rating: standing.rating.rating,
        deviation: standing.rating.deviation,
        attempts: standing.attempts,
        solved: standing.solved,
        provisional: standing.rating.is_provisional(),
    }
}

pub async fn get(archive: &Archive, request: PuzzleRequest) -> Result<PuzzleRecord, Status> {
    let id = puzzle_id(&request.id)?;
    let stored = archive.puzzle(id).await.map_err(unavailable)?;
    stored.map(record).ok_or_else(|| not_found(format!("no puzzle {id}")))
}

pub async fn daily(archive: &Archive, request: DailyPuzzleRequest) -> Result<PuzzleRecord, Status> {
    let stored = archive.daily_puzzle(request.day).await.map_err(unavailable)?;
    stored.map(record).ok_or_else(|| not_found("there are no puzzles yet"))
}

pub async fn next(archive: &Archive, request: NextPuzzleRequest) -> Result<PuzzleRecord, Status> {
    let player = player(&request.player_id)?;
    let variant = match request.variant.as_str() {
        "" => None,
        v @ ("atomic" | "fog") => Some(v),
        other => return Err(bad(format!("puzzles are atomic or fog, not `{other}`"))),
    };
    let stored = archive.next_puzzle(player.as_str(), variant).await.map_err(unavailable)?;
    stored.map(record).ok_or_else(|| not_found("there are no puzzles of that variant"))
}

pub async fn record_attempt(archive: &Archive, request: PuzzleAttemptRequest) -> Result<PuzzleAttemptResult, Status> {
    let player = player(&request.player_id)?;
    let id = puzzle_id(&request.puzzle_id)?;
    let done =
        archive.record_puzzle_attempt(player.as_str(), id, request.solved).await.map_err(|error| match error {
            AttemptError::NoPuzzle(id) => not_found(format!("no puzzle {id}")),
            AttemptError::Archive(error) => unavailable(error),
        })?;
    Ok(PuzzleAttemptResult {
        rated: done.rated,
        player_before: done.player_before.rating,
        player: Some(rating(done.player)),
        puzzle_before: done.puzzle_before,
        puzzle_after: done.puzzle_after,
    })
}

pub async fn standing(archive: &Archive, request: PuzzleRatingRequest) -> Result<PuzzleRating, Status> {
    let player = player(&request.player_id)?;
    archive.puzzle_standing(player.as_str()).await.map(rating).map_err(unavailable)
}
