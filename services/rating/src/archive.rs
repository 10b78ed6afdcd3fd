//! The archive database: every finished game, each player's rating per
//! variant, and the record of which games moved ratings. One adapter for
//! Postgres (production) and SQLite (`fogblast up`), through sqlx's `Any`
//! driver: the schema keeps to types both share, and the few statements
//! that differ say so.
//!
//! Applying a game is one transaction: the archive insert, whose primary
//! key makes a second delivery of the same game a no-op, and for a rated
//! game the ratings. The ratings are worked out by [`rerate`] (no database
//! in it): this module reads what it needs (the later rated games of the
//! variant, both players' stored ratings) and writes its plan. The caller
//! acknowledges the message only after the commit, so a crash at any
//! point either applied the game or left it to be delivered again.

use std::collections::HashMap;

use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::rating::{ArchivedGame, LeaderboardEntry, RatingChange, VariantRating};
use fogblast_ratings::{Rating, Score, Settings};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

use crate::rerate::{archived_variant, rerate, Plan, RatedGame, RatedRow, Recorded, Stored};

/// A failure of the database.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migrating the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("unsupported database url {0:?}: use postgres:// or sqlite:")]
    Url(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Postgres,
    Sqlite,
}

/// A rating as it moved in one game.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub player: String,
    pub variant: Variant,
    pub before: Rating,
    pub after: Rating,
}

impl Change {
    /// Both players' changes in the game a plan applies, `[white, black]`.
    fn of(plan: &Plan) -> [Change; 2] {
        let rated = &plan.game;
        let players = [&rated.game.white, &rated.game.black];
        [0, 1].map(|side| Change {
            player: players[side].clone(),
            variant: rated.game.variant.into(),
            before: rated.befores[side],
            after: rated.afters[side],
        })
    }
}

/// What applying a game did.
#[derive(Clone, Debug, PartialEq)]
pub enum Applied {
    /// Already archived: nothing changed.
    Duplicate,
    /// Archived, and for a rated game between two players, both ratings moved.
    Archived { changes: Option<[Change; 2]> },
}

type Transaction<'c> = sqlx::Transaction<'c, sqlx::Any>;

#[derive(Clone, Debug)]
pub struct Archive {
    pool: AnyPool,
    backend: Backend,
    settings: Settings,
}

impl Archive {
    /// Connects and brings the schema up to date.
    pub async fn connect(url: &str) -> Result<Archive, ArchiveError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(ArchiveError::Url(url.to_owned()));
        };
        // SQLite allows one writer; an in-memory database lives as long as
        // its one connection.
        let max = if backend == Backend::Sqlite { 1 } else { 16 };
        let pool = AnyPoolOptions::new().max_connections(max).connect(url).await?;
        match backend {
            Backend::Postgres => sqlx::migrate!("../../migrations").run(&pool).await?,
            Backend::Sqlite => sqlx::migrate!("../../migrations/sqlite").run(&pool).await?,
        }
        Ok(Archive { pool, backend, settings: Settings::LICHESS })
    }

    /// Archives a finished game and, when it is rated, moves both ratings
    /// (and those of the later games it reaches): all in one transaction,
    /// and nothing at all if the game is already in.
    pub async fn apply(&self, game: &GameFinished, now_ms: i64) -> Result<Applied, ArchiveError> {
        let mut tx = self.pool.begin().await?;
        if !insert_game(&mut tx, game, now_ms).await? {
            tx.rollback().await?;
            return Ok(Applied::Duplicate);
        }
        upsert_players(&mut tx, game, now_ms).await?;
        let changes = match RatedGame::from_finished(game, now_ms) {
            Some(rated) => {
                let plan = self.plan(&mut tx, &rated).await?;
                write_plan(&mut tx, &plan, now_ms).await?;
                Some(Change::of(&plan))
            }
            None => None,
        };
        tx.commit().await?;
        Ok(Applied::Archived { changes })
    }

    /// Reads what rating `game` in its place needs, locking it for the
    /// transaction, and works out the plan.
    async fn plan(&self, tx: &mut Transaction<'_>, game: &RatedGame) -> Result<Plan, ArchiveError> {
        let variant = game.variant.name();
        if self.backend == Backend::Postgres {
            // One variant's ratings are rated in one order: its rated games
            // are applied one at a time.
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))::TEXT")
                .bind(format!("fogblast-ratings:{variant}"))
                .execute(&mut **tx)
                .await?;
        }
        let later = rated_after(tx, game).await?;
        // In id order, like the rating rows the plan writes, so concurrent
        // games of the same players never lock in opposite orders.
        let mut seated = [&game.white, &game.black];
        seated.sort();
        let mut stored = HashMap::new();
        for player in seated {
            stored.insert(player, self.stored_rating(tx, player, variant, game.ended_ms).await?);
        }
        Ok(rerate(game, &later, [stored[&game.white], stored[&game.black]], &self.settings))
    }

    /// The player's rating as stored, locked for this transaction (before
    /// any growth of its deviation for time away); created at the defaults
    /// on their first game, as of `played_ms`.
    async fn stored_rating(
        &self,
        tx: &mut Transaction<'_>,
        player: &str,
        variant: &str,
        played_ms: i64,
    ) -> Result<Stored, ArchiveError> {
        let start = Stored::newcomer(played_ms);
        sqlx::query(
            "INSERT INTO ratings (player_id, variant, rating, deviation, volatility, last_rated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (player_id, variant) DO NOTHING",
        )
        .bind(player)
        .bind(variant)
        .bind(start.rating.rating)
        .bind(start.rating.deviation)
        .bind(start.rating.volatility)
        .bind(start.rated_ms)
        .execute(&mut **tx)
        .await?;
        let select = match self.backend {
            // Two games of one player applied at once must not both read
            // the old rating.
            Backend::Postgres => {
                "SELECT rating, deviation, volatility, last_rated_ms FROM ratings \
                 WHERE player_id = $1 AND variant = $2 FOR UPDATE"
            }
            // SQLite serialises writers already.
            Backend::Sqlite => {
                "SELECT rating, deviation, volatility, last_rated_ms FROM ratings WHERE player_id = $1 AND variant = $2"
            }
        };
        let row = sqlx::query(select).bind(player).bind(variant).fetch_one(&mut **tx).await?;
        Ok(Stored {
            rating: Rating {
                rating: row.try_get("rating")?,
                deviation: row.try_get("deviation")?,
                volatility: row.try_get("volatility")?,
            },
            rated_ms: row.try_get("last_rated_ms")?,
        })
    }

    /// The database, for the other tables that live in it.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub async fn profile(&self, player: &str) -> Result<Option<(String, Vec<VariantRating>, u32)>, ArchiveError> {
        let Some(row) =
            sqlx::query("SELECT name FROM players WHERE id = $1").bind(player).fetch_optional(&self.pool).await?
        else {
            return Ok(None);
        };
        let name: String = row.try_get("name")?;
        let rows = sqlx::query(
            "SELECT variant, rating, deviation, volatility, rated_games, wins, losses, draws FROM ratings \
             WHERE player_id = $1 ORDER BY variant",
        )
        .bind(player)
        .fetch_all(&self.pool)
        .await?;
        let mut ratings = Vec::with_capacity(rows.len());
        for row in rows {
            let deviation: f64 = row.try_get("deviation")?;
            let variant: String = row.try_get("variant")?;
            ratings.push(VariantRating {
                variant: stored_variant(&variant) as i32,
                rating: row.try_get("rating")?,
                deviation,
                volatility: row.try_get("volatility")?,
                provisional: Rating { rating: 0.0, deviation, volatility: 0.0 }.is_provisional(),
                rated_games: count(&row, "rated_games")?,
                wins: count(&row, "wins")?,
                losses: count(&row, "losses")?,
                draws: count(&row, "draws")?,
            });
        }
        let games = sqlx::query("SELECT COUNT(*) AS n FROM games WHERE white_id = $1 OR black_id = $1")
            .bind(player)
            .fetch_one(&self.pool)
            .await?;
        Ok(Some((name, ratings, count(&games, "n")?)))
    }

    pub async fn leaderboard(&self, variant: Variant, limit: u32) -> Result<Vec<LeaderboardEntry>, ArchiveError> {
        let Ok(variant) = fogblast_rules::Variant::try_from(variant) else { return Ok(Vec::new()) };
        let rows = sqlx::query(
            "SELECT r.player_id, p.name, r.rating, r.deviation, r.rated_games FROM ratings r \
             JOIN players p ON p.id = r.player_id WHERE r.variant = $1 AND r.deviation < $2 \
             ORDER BY r.rating DESC, r.player_id LIMIT $3",
        )
        .bind(variant.name())
        .bind(fogblast_ratings::PROVISIONAL_DEVIATION)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .enumerate()
            .map(|(i, row)| {
                Ok(LeaderboardEntry {
                    rank: i as u32 + 1,
                    player_id: row.try_get("player_id")?,
                    name: row.try_get("name")?,
                    rating: row.try_get("rating")?,
                    deviation: row.try_get("deviation")?,
                    rated_games: count(row, "rated_games")?,
                })
            })
            .collect()
    }

    pub async fn game(&self, id: &str) -> Result<Option<ArchivedGame>, ArchiveError> {
        let row = sqlx::query(&format!("{GAME_SELECT} WHERE g.id = $1")).bind(id).fetch_optional(&self.pool).await?;
        row.map(|row| archived(&row)).transpose()
    }

    /// A page of a player's games, newest first. The token is the last
    /// game's end time and id.
    pub async fn player_games(
        &self,
        player: &str,
        page_size: u32,
        token: Option<(i64, String)>,
    ) -> Result<(Vec<ArchivedGame>, Option<(i64, String)>), ArchiveError> {
        let (before_ms, before_id) = token.unwrap_or((i64::MAX, String::new()));
        let rows = sqlx::query(&format!(
            "{GAME_SELECT} WHERE (g.white_id = $1 OR g.black_id = $1) \
             AND (g.ended_ms < $2 OR (g.ended_ms = $2 AND g.id < $3)) \
             ORDER BY g.ended_ms DESC, g.id DESC LIMIT $4"
        ))
        .bind(player)
        .bind(before_ms)
        .bind(if before_ms == i64::MAX { "\u{10ffff}".to_owned() } else { before_id })
        .bind(i64::from(page_size) + 1)
        .fetch_all(&self.pool)
        .await?;
        let mut games = rows.iter().map(archived).collect::<Result<Vec<_>, _>>()?;
        let next = if games.len() > page_size as usize {
            games.truncate(page_size as usize);
            games.last().and_then(|g| g.game.as_ref()).map(|g| (g.ended_at_ms as i64, g.game_id.clone()))
        } else {
            None
        };
        Ok((games, next))
    }
}

const GAME_SELECT: &str = "SELECT g.id, g.variant, g.chess960, g.initial_fen, g.white_id, g.white_name, \
    g.white_computer, g.white_level, g.black_id, g.black_name, g.black_computer, g.black_level, g.rated, g.result, \
    g.reason, g.moves, g.clocks, g.clock_initial_ms, g.clock_increment_ms, g.final_fen, g.created_ms, g.started_ms, \
    g.ended_ms, g.tournament_id, g.white_berserk, g.black_berserk, r.white_before, r.white_after, r.white_deviation, r.black_before, r.black_after, r.black_deviation \
    FROM games g LEFT JOIN rated_games r ON r.game_id = g.id";

/// The variant of a name the archive stored.
fn stored_variant(name: &str) -> Variant {
    fogblast_rules::Variant::from_name(name).map_or(Variant::Unspecified, Variant::from)
}

fn count(row: &AnyRow, column: &str) -> Result<u32, sqlx::Error> {
    let value: i64 = row.try_get(column)?;
    Ok(u32::try_from(value).unwrap_or(u32::MAX))
}

fn flag(row: &AnyRow, column: &str) -> Result<bool, sqlx::Error> {
    Ok(row.try_get::<i64, _>(column)? != 0)
}

fn archived(row: &AnyRow) -> Result<ArchivedGame, ArchiveError> {
    let player = |side: &str| -> Result<FinishedPlayer, sqlx::Error> {
        Ok(FinishedPlayer {
            id: row.try_get::<Option<String>, _>(format!("{side}_id").as_str())?.unwrap_or_default(),
            name: row.try_get(format!("{side}_name").as_str())?,
            computer: flag(row, &format!("{side}_computer"))?,
            level: row.try_get::<i64, _>(format!("{side}_level").as_str())? as i32,
            berserk: flag(row, &format!("{side}_berserk"))?,
        })
    };
    let split = |text: String| -> Vec<String> { text.split_whitespace().map(str::to_owned).collect() };
    let initial: Option<i64> = row.try_get("clock_initial_ms")?;
    let increment: Option<i64> = row.try_get("clock_increment_ms")?;
    let variant: String = row.try_get("variant")?;
    let game = GameFinished {
        game_id: row.try_get("id")?,
        variant: stored_variant(&variant) as i32,
        chess960: flag(row, "chess960")?,
        initial_fen: row.try_get("initial_fen")?,
        white: Some(player("white")?),
        black: Some(player("black")?),
        rated: flag(row, "rated")?,
        result: row.try_get("result")?,
        reason: row.try_get::<i64, _>("reason")? as i32,
        moves: split(row.try_get("moves")?),
        clock_ms: split(row.try_get("clocks")?).iter().filter_map(|c| c.parse().ok()).collect(),
        clock: initial
            .map(|initial| ClockSettings { initial_ms: initial as u32, increment_ms: increment.unwrap_or(0) as u32 }),
        final_fen: row.try_get("final_fen")?,
        created_at_ms: row.try_get::<i64, _>("created_ms")? as u64,
        started_at_ms: row.try_get::<i64, _>("started_ms")? as u64,
        ended_at_ms: row.try_get::<i64, _>("ended_ms")? as u64,
        tournament_id: row.try_get("tournament_id")?,
    };
    let change = |side: &str| -> Result<Option<RatingChange>, sqlx::Error> {
        let before: Option<f64> = row.try_get(format!("{side}_before").as_str())?;
        let after: Option<f64> = row.try_get(format!("{side}_after").as_str())?;
        let deviation: Option<f64> = row.try_get(format!("{side}_deviation").as_str())?;
        Ok(match (before, after, deviation) {
            (Some(before), Some(after), Some(deviation)) => Some(RatingChange {
                before,
                after,
                deviation,
                provisional: deviation >= fogblast_ratings::PROVISIONAL_DEVIATION,
            }),
            _ => None,
        })
    };
    Ok(ArchivedGame { game: Some(game), white_rating: change("white")?, black_rating: change("black")? })
}

/// Inserts the game into the archive; `false` if it was there already.
async fn insert_game(tx: &mut Transaction<'_>, game: &GameFinished, now_ms: i64) -> Result<bool, ArchiveError> {
    let white = game.white.clone().unwrap_or_default();
    let black = game.black.clone().unwrap_or_default();
    let clock = game.clock.unwrap_or(ClockSettings { initial_ms: 0, increment_ms: 0 });
    let inserted = sqlx::query(
        "INSERT INTO games (id, variant, chess960, initial_fen, white_id, white_name, white_computer, white_level, \
         black_id, black_name, black_computer, black_level, rated, result, reason, moves, clocks, \
         clock_initial_ms, clock_increment_ms, final_fen, created_ms, started_ms, ended_ms, archived_ms, \
         tournament_id, white_berserk, black_berserk) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, \
         $22, $23, $24, $25, $26, $27) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&game.game_id)
    .bind(archived_variant(game).name())
    .bind(i64::from(game.chess960))
    .bind(&game.initial_fen)
    .bind(Some(white.id.clone()).filter(|id| !id.is_empty()))
    .bind(&white.name)
    .bind(i64::from(white.computer))
    .bind(i64::from(white.level))
    .bind(Some(black.id.clone()).filter(|id| !id.is_empty()))
    .bind(&black.name)
    .bind(i64::from(black.computer))
    .bind(i64::from(black.level))
    .bind(i64::from(game.rated))
    .bind(&game.result)
    .bind(i64::from(game.reason))
    .bind(game.moves.join(" "))
    .bind(game.clock_ms.iter().map(u64::to_string).collect::<Vec<_>>().join(" "))
    .bind(game.clock.map(|_| i64::from(clock.initial_ms)))
    .bind(game.clock.map(|_| i64::from(clock.increment_ms)))
    .bind(&game.final_fen)
    .bind(game.created_at_ms as i64)
    .bind(game.started_at_ms as i64)
    .bind(game.ended_at_ms as i64)
    .bind(now_ms)
    .bind(&game.tournament_id)
    .bind(i64::from(white.berserk))
    .bind(i64::from(black.berserk))
    .execute(&mut **tx)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Adds the game's people to the players, or updates the name they play
/// under (a player who plays without a name keeps the one they had).
async fn upsert_players(tx: &mut Transaction<'_>, game: &GameFinished, now_ms: i64) -> Result<(), ArchiveError> {
    // In id order, like the rating rows, so concurrent games of the same
    // players never lock in opposite orders.
    let mut seated: Vec<&FinishedPlayer> =
        [&game.white, &game.black].into_iter().flatten().filter(|p| !p.id.is_empty() && !p.computer).collect();
    seated.sort_by(|a, b| a.id.cmp(&b.id));
    for player in seated {
        sqlx::query(
            "INSERT INTO players (id, name, created_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET name = CASE WHEN excluded.name = '' THEN players.name ELSE excluded.name END",
        )
        .bind(&player.id)
        .bind(&player.name)
        .bind(now_ms)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// The rated games of `game`'s variant that finished after it, in the
/// order they finished, with each side's stored rating before them.
async fn rated_after(tx: &mut Transaction<'_>, game: &RatedGame) -> Result<Vec<Recorded>, ArchiveError> {
    let rows = sqlx::query(
        "SELECT game_id, ended_ms, white_id, black_id, white_score, \
         white_prior_rating, white_prior_deviation, white_prior_volatility, white_prior_rated_ms, \
         black_prior_rating, black_prior_deviation, black_prior_volatility, black_prior_rated_ms \
         FROM rated_games WHERE variant = $1 AND (ended_ms > $2 OR (ended_ms = $2 AND game_id > $3)) \
         ORDER BY ended_ms, game_id",
    )
    .bind(game.variant.name())
    .bind(game.ended_ms)
    .bind(&game.game_id)
    .fetch_all(&mut **tx)
    .await?;
    let prior = |row: &AnyRow, side: &str| -> Result<Stored, sqlx::Error> {
        Ok(Stored {
            rating: Rating {
                rating: row.try_get(format!("{side}_prior_rating").as_str())?,
                deviation: row.try_get(format!("{side}_prior_deviation").as_str())?,
                volatility: row.try_get(format!("{side}_prior_volatility").as_str())?,
            },
            rated_ms: row.try_get(format!("{side}_prior_rated_ms").as_str())?,
        })
    };
    let mut later = Vec::with_capacity(rows.len());
    for row in &rows {
        let score: f64 = row.try_get("white_score")?;
        let white_score = if score >= 1.0 {
            Score::Win
        } else if score <= 0.0 {
            Score::Loss
        } else {
            Score::Draw
        };
        let rated = RatedGame {
            game_id: row.try_get("game_id")?,
            variant: game.variant,
            ended_ms: row.try_get("ended_ms")?,
            white: row.try_get("white_id")?,
            black: row.try_get("black_id")?,
            white_score,
        };
        later.push(Recorded { game: rated, priors: [prior(row, "white")?, prior(row, "black")?] });
    }
    Ok(later)
}

/// Writes a plan: the game's row of the rated games, the rows of the
/// games rated again, and every rating it changes (in player id order).
async fn write_plan(tx: &mut Transaction<'_>, plan: &Plan, now_ms: i64) -> Result<(), ArchiveError> {
    record_rated(tx, &plan.game, Some(now_ms)).await?;
    for rerated in &plan.rerated {
        record_rated(tx, rerated, None).await?;
    }
    let variant = plan.game.game.variant.name();
    for player in &plan.players {
        sqlx::query(
            "UPDATE ratings SET rating = $1, deviation = $2, volatility = $3, rated_games = rated_games + $4, \
             wins = wins + $5, losses = losses + $6, draws = draws + $7, \
             last_rated_ms = CASE WHEN last_rated_ms > $8 THEN last_rated_ms ELSE $8 END \
             WHERE player_id = $9 AND variant = $10",
        )
        .bind(player.stored.rating.rating)
        .bind(player.stored.rating.deviation)
        .bind(player.stored.rating.volatility)
        .bind(player.rated_games)
        .bind(player.wins)
        .bind(player.losses)
        .bind(player.draws)
        .bind(player.stored.rated_ms)
        .bind(&player.player)
        .bind(variant)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Writes what a rated game moved: a new row for the game being applied
/// (rated as of `new_at_ms`), the row replaced for one rated again.
async fn record_rated(tx: &mut Transaction<'_>, rated: &RatedRow, new_at_ms: Option<i64>) -> Result<(), ArchiveError> {
    let statement = if new_at_ms.is_some() {
        "INSERT INTO rated_games (white_before, white_after, white_deviation, white_volatility, \
         white_prior_rating, white_prior_deviation, white_prior_volatility, white_prior_rated_ms, \
         black_before, black_after, black_deviation, black_volatility, \
         black_prior_rating, black_prior_deviation, black_prior_volatility, black_prior_rated_ms, \
         game_id, variant, ended_ms, white_id, black_id, white_score, rated_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
         $21, $22, $23)"
    } else {
        "UPDATE rated_games SET white_before = $1, white_after = $2, white_deviation = $3, white_volatility = $4, \
         white_prior_rating = $5, white_prior_deviation = $6, white_prior_volatility = $7, \
         white_prior_rated_ms = $8, black_before = $9, black_after = $10, black_deviation = $11, \
         black_volatility = $12, black_prior_rating = $13, black_prior_deviation = $14, \
         black_prior_volatility = $15, black_prior_rated_ms = $16 \
         WHERE game_id = $17 AND variant = $18"
    };
    let mut query = sqlx::query(statement);
    for (prior, after) in rated.priors.iter().zip(rated.afters) {
        query = query
            .bind(prior.rating.rating)
            .bind(after.rating)
            .bind(after.deviation)
            .bind(after.volatility)
            .bind(prior.rating.rating)
            .bind(prior.rating.deviation)
            .bind(prior.rating.volatility)
            .bind(prior.rated_ms);
    }
    let game = &rated.game;
    query = query.bind(&game.game_id).bind(game.variant.name());
    if let Some(now_ms) = new_at_ms {
        query =
            query.bind(game.ended_ms).bind(&game.white).bind(&game.black).bind(game.white_score.value()).bind(now_ms);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use fogblast_proto::events::FinishedPlayer;

    use super::*;

    fn finished(id: &str, white: &str, black: &str, result: &str, ended_ms: u64, rated: bool) -> GameFinished {
        let person = |id: &str| FinishedPlayer { id: id.into(), name: id.to_uppercase(), ..Default::default() };
        GameFinished {
            game_id: id.into(),
            variant: Variant::Atomic as i32,
            rated,
            white: Some(person(white)),
            black: Some(person(black)),
            result: result.into(),
            reason: fogblast_proto::game::EndReason::Resign as i32,
            ended_at_ms: ended_ms,
            ..Default::default()
        }
    }

    async fn ratings(archive: &Archive) -> Vec<Vec<VariantRating>> {
        let mut all = Vec::new();
        for player in ["ann", "bob", "cid"] {
            all.push(archive.profile(player).await.unwrap().map(|p| p.1).unwrap_or_default());
        }
        all
    }

    #[tokio::test]
    async fn a_game_delivered_again_after_later_games_changes_nothing() {
        let archive = Archive::connect("sqlite::memory:").await.unwrap();
        let late = finished("late", "ann", "cid", "0-1", 2_000, true);
        let early = finished("early", "ann", "bob", "1-0", 1_000, true);
        assert!(matches!(archive.apply(&late, 3_000).await.unwrap(), Applied::Archived { changes: Some(_) }));
        let Applied::Archived { changes: Some(changes) } = archive.apply(&early, 3_100).await.unwrap() else {
            panic!("the early game is rated");
        };
        assert_eq!(changes[0].before, Rating::default());
        let rated = ratings(&archive).await;
        assert_eq!(rated[0][0].rated_games, 2);
        for game in [&early, &late] {
            assert_eq!(archive.apply(game, 3_200).await.unwrap(), Applied::Duplicate);
        }
        assert_eq!(ratings(&archive).await, rated);
    }

    #[tokio::test]
    async fn a_casual_game_is_archived_and_rates_nobody() {
        let archive = Archive::connect("sqlite::memory:").await.unwrap();
        let casual = finished("casual", "ann", "bob", "1-0", 1_000, false);
        assert_eq!(archive.apply(&casual, 2_000).await.unwrap(), Applied::Archived { changes: None });
        let (name, ratings, games) = archive.profile("ann").await.unwrap().expect("ann is a player");
        assert_eq!((name.as_str(), ratings.len(), games), ("ANN", 0, 1));
        let archived = archive.game("casual").await.unwrap().expect("archived");
        assert_eq!((archived.white_rating, archived.game.map(|g| g.variant())), (None, Some(Variant::Atomic)));
    }
}
