//! The durable consumer of `games.finished.>`: each finished game is
//! archived and rated in one transaction, acknowledged only after the
//! commit, and then both players hear of their new ratings on
//! `player.<id>` (a `RatingChanged` notice, which gateways write as the
//! `rating` frame). A game delivered again finds itself archived and changes
//! nothing; a crash before the acknowledgement means the game comes again.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use fogblast_bus::{ConsumerConfig, Delivery, EventBus};
use fogblast_proto::events::GameFinished;
use fogblast_proto::notices::{player_notice, player_subject, PlayerNotice, RatingChanged};
use prost::Message;
use tokio::sync::watch;
use tracing::{debug, info, warn, Instrument};

use crate::archive::{Applied, Archive, Change};
use crate::metrics::Metrics;

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Consumes until `stop` is set.
pub async fn run(
    archive: Archive,
    bus: Arc<dyn EventBus>,
    metrics: Arc<Metrics>,
    consumer: ConsumerConfig,
    stop: watch::Receiver<bool>,
) {
    // Several games at once: each is its own transaction, and a player's
    // rating row is locked while one of its games is applied.
    fogblast_bus::consume_until_stopped(bus.as_ref(), consumer, IN_FLIGHT, stop, |delivery| {
        let (archive, bus, metrics) = (&archive, bus.as_ref(), metrics.as_ref());
        async move {
            // The publisher's trace goes on here (see fogblast_telemetry).
            let message = delivery.message();
            let span = tracing::info_span!(
                "rating.apply",
                otel.kind = "consumer",
                subject = %message.subject,
                redeliveries = delivery.redeliveries(),
                game = tracing::field::Empty,
            );
            fogblast_telemetry::follow_headers(&span, &message.headers);
            handle(archive, bus, metrics, delivery.as_ref()).instrument(span).await
        }
    })
    .await;
}

/// Finished games applied at once.
const IN_FLIGHT: usize = 16;

async fn handle(archive: &Archive, bus: &dyn EventBus, metrics: &Metrics, delivery: &dyn Delivery) {
    let game = match GameFinished::decode(delivery.message().payload.as_ref()) {
        Ok(game) => game,
        Err(error) => {
            // It will never decode: acknowledge it so it does not block the stream.
            warn!(subject = %delivery.message().subject, %error, "dropping an unreadable finished game");
            metrics.unreadable.inc();
            let _ = delivery.ack().await;
            return;
        }
    };
    tracing::Span::current().record("game", game.game_id.as_str());
    let mut attempt = 0;
    let applied = loop {
        match archive.apply(&game, now_ms()).await {
            Ok(applied) => break applied,
            // A conflict with a concurrent transaction is worth another go now.
            Err(error) if attempt < 3 => {
                attempt += 1;
                debug!(game = %game.game_id, %error, attempt, "applying again");
                tokio::time::sleep(Duration::from_millis(20 * attempt)).await;
            }
            Err(error) => {
                // Not acknowledged: it comes again after the ack wait.
                warn!(game = %game.game_id, %error, "finished game not applied; it will be delivered again");
                metrics.failures.inc();
                return;
            }
        }
    };
    if let Err(error) = delivery.ack().await {
        // Applied but not acknowledged: the redelivery will be a duplicate.
        warn!(game = %game.game_id, %error, "acknowledgement failed");
    }
    match applied {
        Applied::Duplicate => {
            metrics.duplicates.inc();
            debug!(game = %game.game_id, "already applied");
        }
        Applied::Archived { changes } => {
            metrics.archived.inc();
            metrics.lag_seconds.observe((now_ms() - game.ended_at_ms as i64).max(0) as f64 / 1000.0);
            if let Some(changes) = changes {
                metrics.rated.inc();
                info!(game = %game.game_id, "game rated");
                for change in &changes {
                    notify(bus, &game.game_id, change).await;
                }
            }
        }
    }
}

/// The notice of a rating change, for the player's gateways to write as
/// the protocol's `rating` frame.
pub fn rating_notice(game: &str, change: &Change) -> PlayerNotice {
    let changed = RatingChanged {
        game_id: game.to_owned(),
        variant: change.variant as i32,
        rating: change.after.rating,
        deviation: change.after.deviation,
        previous_rating: change.before.rating,
        provisional: change.after.is_provisional(),
    };
    PlayerNotice { notice: Some(player_notice::Notice::RatingChanged(changed)) }
}

async fn notify(bus: &dyn EventBus, game: &str, change: &Change) {
    let notice = Bytes::from(rating_notice(game, change).encode_to_vec());
    if let Err(error) = bus.publish(&player_subject(&change.player), Vec::new(), notice).await {
        warn!(player = %change.player, %error, "rating change not sent");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_proto::game::Variant;
    use fogblast_ratings::Rating;

    #[test]
    fn a_rating_notice_carries_the_change_unrounded() {
        let before = Rating { rating: 1500.0, deviation: 350.0, ..Rating::default() };
        let after = Rating { rating: 1561.7, deviation: 290.2, ..Rating::default() };
        let change = Change { player: "p".into(), variant: Variant::Atomic, before, after };
        let notice = rating_notice("4vtrzhaexber", &change);
        let Some(player_notice::Notice::RatingChanged(changed)) = notice.notice else { panic!("{notice:?}") };
        assert_eq!((changed.game_id.as_str(), changed.variant()), ("4vtrzhaexber", Variant::Atomic));
        assert_eq!((changed.rating, changed.deviation, changed.previous_rating), (1561.7, 290.2, 1500.0));
        assert!(changed.provisional);
    }
}
