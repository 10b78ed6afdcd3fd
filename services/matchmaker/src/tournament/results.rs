//! Results reach tournaments from the stream of finished games, the one
//! the rating service reads: a durable consumer of its own puts each
//! tournament game's result in its tournament's inbox (once: a second
//! delivery finds it there, or already counted) and acknowledges it only
//! then. Any replica may take a delivery; the tournament's driver counts it.

use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::{ConsumerConfig, Delivery, EventBus};
use fogblast_proto::events::GameFinished;
use prost::Message;
use tokio::sync::watch;
use tracing::{debug, warn};

use super::{ReportedResult, TournamentStore};

/// The durable consumer's name: replicas share its deliveries.
pub const CONSUMER: &str = "matchmaker-tournaments";

/// What a finished game tells its tournament; `None` for a game of none.
pub fn reported(game: &GameFinished) -> Option<(String, ReportedResult)> {
    if game.tournament_id.is_empty() {
        return None;
    }
    let berserk = |p: &Option<fogblast_proto::events::FinishedPlayer>| p.as_ref().is_some_and(|p| p.berserk);
    let result = ReportedResult {
        game: game.game_id.clone(),
        result: game.result.clone(),
        plies: game.moves.len() as u32,
        white_berserk: berserk(&game.white),
        black_berserk: berserk(&game.black),
    };
    Some((game.tournament_id.clone(), result))
}

/// Consumes finished games until `stop`.
pub async fn run(store: Arc<dyn TournamentStore>, bus: Arc<dyn EventBus>, stop: watch::Receiver<bool>) {
    let config = ConsumerConfig {
        name: CONSUMER.to_owned(),
        filter: "games.finished.>".to_owned(),
        ack_wait: Duration::from_secs(30),
    };
    fogblast_bus::consume_until_stopped(bus.as_ref(), config, 16, stop, |delivery| {
        let store = store.as_ref();
        async move { handle(store, delivery.as_ref()).await }
    })
    .await;
}

async fn handle(store: &dyn TournamentStore, delivery: &dyn Delivery) {
    let Ok(game) = GameFinished::decode(delivery.message().payload.as_ref()) else {
        // Unreadable: the rating service reports it; nothing to count.
        let _ = delivery.ack().await;
        return;
    };
    if let Some((tournament, result)) = reported(&game) {
        match store.report(&tournament, &result).await {
            Ok(added) => debug!(%tournament, game = %result.game, added, "tournament result reported"),
            Err(error) => {
                // Not acknowledged: delivered again after the ack wait.
                return warn!(%tournament, game = %result.game, %error, "a tournament result was not kept");
            }
        }
    }
    if let Err(error) = delivery.ack().await {
        warn!(game = %game.game_id, %error, "acknowledgement failed; the result is kept once all the same");
    }
}
