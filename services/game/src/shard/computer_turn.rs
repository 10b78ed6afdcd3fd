//! The computer's turn: when a commit leaves the computer to move, the
//! shard asks the engine pool (once per game at a time) and plays its
//! answer as a command like any other.

use std::sync::Arc;
use std::time::Duration;

use fogblast_proto::game::Status;
use fogblast_proto::ids::GameId;
use tracing::warn;

use super::Shard;
use crate::commands::Command;

impl Shard {
    /// Asks the engine for the computer's move, unless already asking.
    pub(super) fn spawn_think(self: &Arc<Self>, game: GameId) {
        if !self.thinking.start(&game) {
            return;
        }
        let shard = self.clone();
        // A child of whatever set it off (the opponent's move), so the
        // engine's work joins that move's trace.
        let span = tracing::info_span!("game.think", game = %game, variant = tracing::field::Empty);
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                shard.think(&game).await;
                shard.thinking.finish(&game);
            },
            span,
        ));
    }

    async fn think(self: &Arc<Self>, game: &GameId) {
        let mut backoff = Duration::from_millis(200);
        loop {
            let Ok((live, _)) = self.current(game).await else { return };
            let turn = live.game.position().turn();
            if !self.ownership.owns(game) || live.status() != Status::Playing || !live.is_computer(turn) {
                return;
            }
            let Ok(now) = self.store.now_ms().await else { return };
            tracing::Span::current().record("variant", live.variant().name());
            match self.engines.best_move(&live, now).await {
                Ok(uci) => {
                    let ply = live.ply() as u32;
                    if let Err(error) = self.execute(game, Command::ComputerMove { uci: uci.clone(), ply }, "").await {
                        warn!(game = %game, uci, %error, "the computer's move was not applied");
                    }
                    return;
                }
                Err(error) => {
                    warn!(game = %game, %error, "no engine answered; trying again");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}
