//! Puzzles in the archive database: the puzzles with their Glicko-2
//! ratings, each player's puzzle rating (one, across both variants), and
//! each player's first attempt at each puzzle. Only the first attempt is
//! rated: the player against the puzzle as one game, both ratings moving,
//! as lichess rates puzzles. The answer itself is judged by the gateway
//! (it knows the rules); this keeps the score.

use std::time::Duration;

use fogblast_puzzles::Puzzle;
use fogblast_ratings::{decay, rate_game, Rating, Score, Settings};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::archive::{Archive, ArchiveError};

/// The deviation a starter puzzle begins with: its rating is a guess.
const NEW_PUZZLE_DEVIATION: f64 = 300.0;

/// A puzzle as kept, with its current rating.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredPuzzle {
    /// The puzzle, its `rating` the current one.
    pub puzzle: Puzzle,
    pub deviation: f64,
    /// Rated attempts so far.
    pub plays: u32,
}

/// A player's puzzle rating and counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PuzzleStanding {
    pub rating: Rating,
    pub attempts: u32,
    pub solved: u32,
}

/// What one attempt did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptRecord {
    /// `false` when the player had tried the puzzle before: nothing moved.
    pub rated: bool,
    pub player_before: Rating,
    pub player: PuzzleStanding,
    pub puzzle_before: f64,
    pub puzzle_after: f64,
}

/// Why an attempt was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum AttemptError {
    #[error("no puzzle has the id `{0}`")]
    NoPuzzle(String),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
}

impl From<sqlx::Error> for AttemptError {
    fn from(error: sqlx::Error) -> AttemptError {
        AttemptError::Archive(error.into())
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

const PUZZLE_COLUMNS: &str = "id, variant, fen, solution, themes, rating, deviation, plays, source";

fn stored_puzzle(row: &AnyRow) -> Result<StoredPuzzle, sqlx::Error> {
    let words = |column: &str| -> Result<Vec<String>, sqlx::Error> {
        let text: String = row.try_get(column)?;
        Ok(text.split_whitespace().map(str::to_owned).collect())
    };
    let plays: i64 = row.try_get("plays")?;
    Ok(StoredPuzzle {
        puzzle: Puzzle {
            id: row.try_get("id")?,
            variant: row.try_get("variant")?,
            fen: row.try_get("fen")?,
            solution: words("solution")?,
            themes: words("themes")?,
            rating: row.try_get("rating")?,
            source: row.try_get("source")?,
        },
        deviation: row.try_get("deviation")?,
        plays: u32::try_from(plays).unwrap_or(u32::MAX),
    })
}

impl Archive {
    /// Adds `puzzles` when the archive has none yet (a fresh database gets
    /// the starter set); the number added.
    pub async fn seed_puzzles(&self, puzzles: &[Puzzle]) -> Result<u64, ArchiveError> {
        let count: i64 = sqlx::query("SELECT COUNT(*) AS n FROM puzzles").fetch_one(self.pool()).await?.try_get("n")?;
        if count > 0 {
            return Ok(0);
        }
        self.add_puzzles(puzzles).await
    }

    /// Adds `puzzles`, leaving any id already kept as it is; the number added.
    pub async fn add_puzzles(&self, puzzles: &[Puzzle]) -> Result<u64, ArchiveError> {
        let mut tx = self.pool().begin().await?;
        let mut added = 0;
        for puzzle in puzzles {
            let done = sqlx::query(
                "INSERT INTO puzzles (id, variant, fen, solution, themes, rating, deviation, volatility, plays, \
                 source, created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10) ON CONFLICT (id) DO NOTHING",
            )
            .bind(&puzzle.id)
            .bind(&puzzle.variant)
            .bind(&puzzle.fen)
            .bind(puzzle.solution.join(" "))
            .bind(puzzle.themes.join(" "))
            .bind(puzzle.rating)
            .bind(NEW_PUZZLE_DEVIATION)
            .bind(Rating::DEFAULT.volatility)
            .bind(&puzzle.source)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
            added += done.rows_affected();
        }
        tx.commit().await?;
        Ok(added)
    }

    /// The puzzle with id `id`.
    pub async fn puzzle(&self, id: &str) -> Result<Option<StoredPuzzle>, ArchiveError> {
        let row = sqlx::query(&format!("SELECT {PUZZLE_COLUMNS} FROM puzzles WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(stored_puzzle).transpose()?)
    }

    /// The puzzle of day `day` (days since 1970-01-01): the puzzles taken
    /// in turn by id, the same for everyone all day.
    pub async fn daily_puzzle(&self, day: i64) -> Result<Option<StoredPuzzle>, ArchiveError> {
        let count: i64 = sqlx::query("SELECT COUNT(*) AS n FROM puzzles").fetch_one(self.pool()).await?.try_get("n")?;
        if count == 0 {
            return Ok(None);
        }
        let row = sqlx::query(&format!("SELECT {PUZZLE_COLUMNS} FROM puzzles ORDER BY id LIMIT 1 OFFSET $1"))
            .bind(day.rem_euclid(count))
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(stored_puzzle).transpose()?)
    }

    /// The puzzle (of `variant`, if given) nearest the player's puzzle
    /// rating among those they have not tried; when they have tried them
    /// all, the nearest of all.
    pub async fn next_puzzle(&self, player: &str, variant: Option<&str>) -> Result<Option<StoredPuzzle>, ArchiveError> {
        let rating = self.puzzle_standing(player).await?.rating.rating;
        let variant_filter = if variant.is_some() { "AND variant = $3" } else { "AND $3 = $3" };
        for untried in [true, false] {
            let tried_filter = if untried {
                "id NOT IN (SELECT puzzle_id FROM puzzle_attempts WHERE player_id = $1)"
            } else {
                "$1 = $1"
            };
            let sql = format!(
                "SELECT {PUZZLE_COLUMNS} FROM puzzles WHERE {tried_filter} {variant_filter} \
                 ORDER BY ABS(rating - $2), id LIMIT 1"
            );
            let row = sqlx::query(&sql)
                .bind(player)
                .bind(rating)
                .bind(variant.unwrap_or(""))
                .fetch_optional(self.pool())
                .await?;
            if let Some(row) = row {
                return Ok(Some(stored_puzzle(&row)?));
            }
        }
        Ok(None)
    }

    /// The player's puzzle rating: a newcomer's until their first attempt.
    pub async fn puzzle_standing(&self, player: &str) -> Result<PuzzleStanding, ArchiveError> {
        let row = sqlx::query(
            "SELECT rating, deviation, volatility, attempts, solved FROM puzzle_ratings WHERE player_id = $1",
        )
        .bind(player)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            return Ok(PuzzleStanding { rating: Rating::DEFAULT, attempts: 0, solved: 0 });
        };
        let attempts: i64 = row.try_get("attempts")?;
        let solved: i64 = row.try_get("solved")?;
        Ok(PuzzleStanding {
            rating: Rating::new(row.try_get("rating")?, row.try_get("deviation")?, row.try_get("volatility")?),
            attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            solved: u32::try_from(solved).unwrap_or(u32::MAX),
        })
    }

    /// Rates the player's attempt at a puzzle, judged `solved` or not: the
    /// first attempt moves both ratings, a later one changes nothing.
    pub async fn record_puzzle_attempt(
        &self,
        player: &str,
        puzzle_id: &str,
        solved: bool,
    ) -> Result<AttemptRecord, AttemptError> {
        let now = now_ms();
        // Read before the transaction: SQLite's pool has one connection.
        let standing = self.puzzle_standing(player).await?;
        let mut tx = self.pool().begin().await?;
        let row = sqlx::query("SELECT rating, deviation, volatility FROM puzzles WHERE id = $1")
            .bind(puzzle_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| AttemptError::NoPuzzle(puzzle_id.to_owned()))?;
        let puzzle = Rating::new(row.try_get("rating")?, row.try_get("deviation")?, row.try_get("volatility")?);
        let last_ms: Option<i64> = sqlx::query("SELECT last_ms FROM puzzle_ratings WHERE player_id = $1")
            .bind(player)
            .fetch_optional(&mut *tx)
            .await?
            .map(|row| row.try_get("last_ms"))
            .transpose()?;
        let settings = Settings::LICHESS;
        let away = Duration::from_millis(u64::try_from(now - last_ms.unwrap_or(now)).unwrap_or(0));
        let player_before = decay(standing.rating, away, &settings);
        let score = if solved { Score::Win } else { Score::Loss };
        let (player_after, puzzle_after) = rate_game(player_before, puzzle, score, &settings);
        // Only the first attempt is kept (and rated), also when two race.
        let first = sqlx::query(
            "INSERT INTO puzzle_attempts (player_id, puzzle_id, solved, rating_before, rating_after, attempted_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (player_id, puzzle_id) DO NOTHING",
        )
        .bind(player)
        .bind(puzzle_id)
        .bind(i64::from(solved))
        .bind(player_before.rating)
        .bind(player_after.rating)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !first {
            tx.rollback().await?;
            return Ok(AttemptRecord {
                rated: false,
                player_before: standing.rating,
                player: standing,
                puzzle_before: puzzle.rating,
                puzzle_after: puzzle.rating,
            });
        }
        sqlx::query(
            "INSERT INTO puzzle_ratings (player_id, rating, deviation, volatility, attempts, solved, last_ms) \
             VALUES ($1, $2, $3, $4, 1, $5, $6) ON CONFLICT (player_id) DO UPDATE SET rating = excluded.rating, \
             deviation = excluded.deviation, volatility = excluded.volatility, \
             attempts = puzzle_ratings.attempts + 1, solved = puzzle_ratings.solved + excluded.solved, \
             last_ms = excluded.last_ms",
        )
        .bind(player)
        .bind(player_after.rating)
        .bind(player_after.deviation)
        .bind(player_after.volatility)
        .bind(i64::from(solved))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE puzzles SET rating = $1, deviation = $2, volatility = $3, plays = plays + 1 WHERE id = $4")
            .bind(puzzle_after.rating)
            .bind(puzzle_after.deviation)
            .bind(puzzle_after.volatility)
            .bind(puzzle_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        let player = PuzzleStanding {
            rating: player_after,
            attempts: standing.attempts + 1,
            solved: standing.solved + u32::from(solved),
        };
        Ok(AttemptRecord {
            rated: true,
            player_before,
            player,
            puzzle_before: puzzle.rating,
            puzzle_after: puzzle_after.rating,
        })
    }

    /// Archived atomic and fog games to cut puzzles from, analysed ones
    /// first, then newest first: id, variant, starting FEN and UCI moves.
    pub async fn games_for_puzzles(
        &self,
        limit: i64,
    ) -> Result<Vec<(String, String, String, Vec<String>)>, ArchiveError> {
        let rows = sqlx::query(
            "SELECT id, variant, initial_fen, moves FROM games WHERE variant IN ('atomic', 'fog') \
             ORDER BY (CASE WHEN id IN (SELECT game_id FROM analyses) THEN 0 ELSE 1 END), created_ms DESC LIMIT $1",
        )
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let moves: String = row.try_get("moves")?;
                Ok((
                    row.try_get("id")?,
                    row.try_get("variant")?,
                    row.try_get("initial_fen")?,
                    moves.split_whitespace().map(str::to_owned).collect(),
                ))
            })
            .collect()
    }
}
