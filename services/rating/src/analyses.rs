//! The archive's analyses: one row per game, made by its first request and
//! finished once by the engine pool's result, on Postgres and SQLite alike.
//! A second request finds the row and adds nothing; a second result (the
//! pool analysed a game twice) finds it finished and changes nothing.

use fogblast_proto::engine::{AnalysisFinished, PositionEval};
use fogblast_proto::rating::AnalysisState;
use prost::Message as _;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::archive::{Archive, ArchiveError};

/// An analysis as the archive keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredAnalysis {
    pub game_id: String,
    pub state: AnalysisState,
    pub error: String,
    pub depth: u32,
    pub positions: Vec<PositionEval>,
    pub requested_ms: i64,
    pub finished_ms: i64,
}

/// What a request did.
#[derive(Clone, Debug, PartialEq)]
pub enum Requested {
    /// The game's first request: a new analysis, queued.
    New(StoredAnalysis),
    /// The game already had one; nothing changed.
    Existing(StoredAnalysis),
    /// The requester already waits for `max` analyses; nothing changed.
    TooMany { max: u32 },
}

const SELECT: &str =
    "SELECT game_id, state, error, depth, positions, requested_ms, finished_ms FROM analyses WHERE game_id = $1";

impl Archive {
    /// Records the first request for a game's analysis, unless `requester`
    /// already waits for `max_waiting`.
    pub async fn request_analysis(
        &self,
        game_id: &str,
        requester: &str,
        now_ms: i64,
        max_waiting: u32,
    ) -> Result<Requested, ArchiveError> {
        if let Some(existing) = self.analysis(game_id).await? {
            return Ok(Requested::Existing(existing));
        }
        let waiting: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM analyses WHERE requester = $1 AND state = 'queued'")
                .bind(requester)
                .fetch_one(self.pool())
                .await?;
        if waiting >= i64::from(max_waiting) {
            return Ok(Requested::TooMany { max: max_waiting });
        }
        let inserted = sqlx::query(
            "INSERT INTO analyses (game_id, state, requester, requested_ms) VALUES ($1, 'queued', $2, $3) \
             ON CONFLICT (game_id) DO NOTHING",
        )
        .bind(game_id)
        .bind(requester)
        .bind(now_ms)
        .execute(self.pool())
        .await?
        .rows_affected()
            == 1;
        let stored = self.analysis(game_id).await?.ok_or(ArchiveError::Database(sqlx::Error::RowNotFound))?;
        Ok(if inserted { Requested::New(stored) } else { Requested::Existing(stored) })
    }

    /// Keeps the engine pool's result; `false` when the game's analysis was
    /// already finished (the result came twice) and nothing changed.
    pub async fn finish_analysis(&self, finished: &AnalysisFinished, now_ms: i64) -> Result<bool, ArchiveError> {
        let state = if finished.error.is_empty() { "done" } else { "failed" };
        let changed = sqlx::query(
            "INSERT INTO analyses (game_id, state, requester, requested_ms, finished_ms, depth, error, positions) \
             VALUES ($1, $2, '', $3, $4, $5, $6, $7) \
             ON CONFLICT (game_id) DO UPDATE SET state = excluded.state, finished_ms = excluded.finished_ms, \
             depth = excluded.depth, error = excluded.error, positions = excluded.positions \
             WHERE analyses.state = 'queued'",
        )
        .bind(&finished.game_id)
        .bind(state)
        .bind(now_ms)
        .bind(if finished.finished_at_ms > 0 { finished.finished_at_ms } else { now_ms })
        .bind(i64::from(finished.depth))
        .bind(&finished.error)
        .bind(finished.encode_to_vec())
        .execute(self.pool())
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// A game's analysis, if one was requested.
    pub async fn analysis(&self, game_id: &str) -> Result<Option<StoredAnalysis>, ArchiveError> {
        let row = sqlx::query(SELECT).bind(game_id).fetch_optional(self.pool()).await?;
        row.map(|row| stored(&row)).transpose()
    }
}

fn stored(row: &AnyRow) -> Result<StoredAnalysis, ArchiveError> {
    let state = match row.try_get::<String, _>("state")?.as_str() {
        "done" => AnalysisState::Done,
        "failed" => AnalysisState::Failed,
        _ => AnalysisState::Queued,
    };
    let bytes: Option<Vec<u8>> = row.try_get("positions")?;
    let positions = match bytes {
        Some(bytes) => {
            AnalysisFinished::decode(bytes.as_slice())
                .map_err(|e| ArchiveError::Database(sqlx::Error::Decode(Box::new(e))))?
                .positions
        }
        None => Vec::new(),
    };
    Ok(StoredAnalysis {
        game_id: row.try_get("game_id")?,
        state,
        error: row.try_get("error")?,
        depth: u32::try_from(row.try_get::<i64, _>("depth")?).unwrap_or(0),
        positions,
        requested_ms: row.try_get("requested_ms")?,
        finished_ms: row.try_get("finished_ms")?,
    })
}
