//! Finished games leave for other services as `GameFinished` on the
//! durable stream, subject `games.finished.<variant>`, with the game id as
//! the message id. The commit that ends a game also puts it in the store's
//! outbox; it leaves the outbox only once the stream acknowledged it, and
//! the sweep retries whatever is left, on whichever shard owns the game
//! then. A resend after a crash is dropped by the stream's deduplication,
//! and the rating service keys on the game id too.
//!
//! A rematch both players agreed to goes through the outbox as well: the
//! commit that records it puts the game back in, and the game leaves only
//! once the rematch exists (made by the command at once, or here by the
//! sweep if that failed). Its end is published again with it, and dropped
//! by the stream as a duplicate.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::ids::GameId;
use prost::Message;
use tracing::{info, warn};

use crate::record::LiveGame;
use crate::shard::Shard;

/// Why a finished game was not published this time.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Store(#[from] fogblast_store::StoreError),
    #[error(transparent)]
    Bus(#[from] fogblast_bus::BusError),
    #[error("{0}")]
    Unreadable(String),
    #[error("the rematch: {0}")]
    Rematch(fogblast_proto::error::ServiceError),
}

pub fn subject(live: &LiveGame) -> String {
    format!("games.finished.{}", live.variant().name())
}

pub fn finished_event(live: &LiveGame) -> GameFinished {
    let record = &live.record;
    let player = |seat: Option<&fogblast_proto::record::Seat>| {
        let berserk = seat.is_some_and(|s| s.berserk);
        let player = seat.and_then(|s| s.player.clone()).unwrap_or_default();
        FinishedPlayer { id: player.id, name: player.name, computer: player.computer, level: player.level, berserk }
    };
    GameFinished {
        game_id: record.game_id.clone(),
        variant: record.variant,
        chess960: record.chess960,
        initial_fen: record.initial_fen.clone(),
        white: Some(player(record.white.as_ref())),
        black: Some(player(record.black.as_ref())),
        rated: record.rated,
        result: record.result.clone(),
        reason: record.reason,
        moves: record.moves.clone(),
        clock_ms: if record.clock.is_some() { record.clock_ms.clone() } else { Vec::new() },
        clock: record.clock,
        final_fen: live.fen(),
        created_at_ms: record.created_at_ms,
        started_at_ms: record.started_at_ms,
        ended_at_ms: record.ended_at_ms,
        tournament_id: record.tournament_id.clone(),
    }
}

/// Carries out what a finished game left in the outbox (its rematch
/// made, its end published) and takes it out.
pub async fn publish(shard: &Arc<Shard>, game: &GameId) -> Result<(), PublishError> {
    let Some(stored) = shard.store.load(game).await? else {
        warn!(game = %game, "a finished game expired before it was published");
        shard.store.mark_published(game).await?;
        return Ok(());
    };
    let record = fogblast_proto::record::GameRecord::decode(stored.record.as_slice())
        .map_err(|e| PublishError::Unreadable(e.to_string()))?;
    let live = LiveGame::from_record(record).map_err(|e| PublishError::Unreadable(e.to_string()))?;
    if !live.record.rematch_game_id.is_empty() {
        let now = shard.store.now_ms().await?;
        shard.create_rematch(&live, now).await.map_err(PublishError::Rematch)?;
    }
    let event = finished_event(&live);
    let ack = shard
        .bus
        .publish_durable(&subject(&live), game.as_str(), Vec::new(), Bytes::from(event.encode_to_vec()))
        .await?;
    shard.store.mark_published(game).await?;
    // A game back in the outbox for its rematch is published again and
    // dropped by the stream: counted once, when the stream first took it.
    if !ack.duplicate {
        shard.metrics.games_published.inc();
        let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        shard.metrics.publish_delay_seconds.observe(now_ms.saturating_sub(event.ended_at_ms) as f64 / 1000.0);
    }
    info!(game = %game, result = %event.result, duplicate = ack.duplicate, "finished game published");
    Ok(())
}
