//! The shard's periodic pass and the stream of finished games: deadlines
//! and unpublished games this shard owns now (including those whose timers
//! or publishers died with another shard), and eviction of what it need no
//! longer hold.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use fogblast_proto::ids::GameId;
use fogblast_store::StoreError;
use tracing::warn;

use super::Shard;

/// Entries read per page of the deadlines and the outbox.
const SWEEP_PAGE: usize = 500;
/// Pages read per sweep, at most: the sweep reaches 10,000 entries deep.
const SWEEP_PAGES: usize = 20;

/// The games a background task works on now, so a second task for the
/// same game is not started while the first runs.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    games: Mutex<HashSet<GameId>>,
}

impl InFlight {
    /// Claims `game`; false when a task already holds it.
    pub(super) fn start(&self, game: &GameId) -> bool {
        self.games.lock().expect("in-flight lock").insert(game.clone())
    }

    pub(super) fn finish(&self, game: &GameId) {
        self.games.lock().expect("in-flight lock").remove(game);
    }
}

impl Shard {
    /// Publishes a finished game to the stream, unless already publishing.
    pub(super) fn spawn_publish(self: &Arc<Self>, game: GameId) {
        if !self.publishing.start(&game) {
            return;
        }
        let shard = self.clone();
        let span = tracing::info_span!("game.publish_finished", game = %game, otel.kind = "producer");
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                if let Err(error) = crate::publisher::publish(&shard, &game).await {
                    warn!(game = %game, %error, "finished game not published yet; the sweep will retry");
                }
                shard.publishing.finish(&game);
            },
            span,
        ));
    }

    /// One pass over the deadlines and the outbox: handles the due games
    /// and unpublished finished games this shard owns now, including those
    /// whose timers died with another shard.
    pub async fn sweep(self: &Arc<Self>) -> Result<(), StoreError> {
        let now = self.store.now_ms().await?;
        // Page past what this shard cannot act on (other shards' games, a
        // computer's turn while the engines are down), so one stuck kind of
        // entry never hides another.
        for page in 0..SWEEP_PAGES {
            let due = self.store.due_games(now, page * SWEEP_PAGE, SWEEP_PAGE).await?;
            let last_page = due.len() < SWEEP_PAGE;
            for (game, _) in due {
                if self.ownership.owns(&game) {
                    let shard = self.clone();
                    tokio::spawn(async move { shard.on_due(&game).await });
                }
            }
            if last_page {
                break;
            }
        }
        for page in 0..SWEEP_PAGES {
            let unpublished = self.store.unpublished(page * SWEEP_PAGE, SWEEP_PAGE).await?;
            let last_page = unpublished.len() < SWEEP_PAGE;
            for game in unpublished {
                if self.ownership.owns(&game) {
                    self.spawn_publish(game);
                }
            }
            if last_page {
                break;
            }
        }
        self.evict();
        Ok(())
    }

    /// Drops games this shard no longer owns, and finished games nobody
    /// watches, from memory; the store keeps them.
    fn evict(&self) {
        let watched = self.watchers.prune();
        let held = self.games.evict(|game| self.ownership.owns(game), &watched);
        self.metrics.games_cached.set(held as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_is_worked_on_by_one_task_at_a_time() {
        let in_flight = InFlight::default();
        let game = GameId::parse("abcdefghij").unwrap();
        assert!(in_flight.start(&game));
        assert!(!in_flight.start(&game), "a second task waits for the first");
        in_flight.finish(&game);
        assert!(in_flight.start(&game));
    }
}
