//! The archive's side of the analysis queue: requests go out on
//! `analysis.requested.<game id>` (the engine pool's durable consumer takes
//! them), and results come back on `analysis.finished.<game id>`, each kept
//! once by a durable consumer of its own (`<consumer>-analysis`) and
//! acknowledged after the commit. The subjects and message ids are the
//! engine service's (docs/engine-service.md, "The analysis queue").

use std::sync::Arc;

use bytes::Bytes;
use fogblast_bus::{BusError, ConsumerConfig, Delivery, EventBus};
use fogblast_proto::engine::{AnalyseRequest, AnalysisFinished, AnalysisRequested, Variant as EngineVariant};
use fogblast_proto::events::GameFinished;
use prost::Message;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::archive::Archive;
use crate::consumer::now_ms;

/// Requests: `analysis.requested.<game id>`.
const REQUESTED_SUBJECT: &str = "analysis.requested";
/// Results: `analysis.finished.<game id>`.
const FINISHED_SUBJECT: &str = "analysis.finished";

/// Puts an archived game on the analysis queue. Publishing the same game
/// again within the stream's duplicate window adds nothing.
pub async fn publish_request(bus: &dyn EventBus, game: &GameFinished) -> Result<(), BusError> {
    let variant = fogblast_rules::Variant::try_from(game.variant())
        .map_err(|_| BusError::new(format!("game {} has no variant", game.game_id)))?;
    let request = AnalysisRequested {
        game_id: game.game_id.clone(),
        game: Some(AnalyseRequest {
            variant: EngineVariant::from(variant).into(),
            initial_fen: game.initial_fen.clone(),
            moves: game.moves.clone(),
            depth: 0,
        }),
        requested_at_ms: now_ms(),
    };
    let subject = format!("{REQUESTED_SUBJECT}.{}", game.game_id);
    let id = format!("analysis-requested-{}", game.game_id);
    bus.publish_durable(&subject, &id, Vec::new(), Bytes::from(request.encode_to_vec())).await?;
    Ok(())
}

/// Keeps the results until `stop` is set.
pub async fn run(archive: Archive, bus: Arc<dyn EventBus>, consumer: ConsumerConfig, stop: watch::Receiver<bool>) {
    let config = ConsumerConfig {
        name: format!("{}-analysis", consumer.name),
        filter: format!("{FINISHED_SUBJECT}.>"),
        ack_wait: consumer.ack_wait,
    };
    fogblast_bus::consume_until_stopped(bus.as_ref(), config, 4, stop, |delivery| {
        let archive = &archive;
        async move { keep(archive, delivery.as_ref()).await }
    })
    .await;
}

async fn keep(archive: &Archive, delivery: &dyn Delivery) {
    let Ok(finished) = AnalysisFinished::decode(delivery.message().payload.as_ref()) else {
        warn!(subject = %delivery.message().subject, "unreadable analysis result dropped");
        let _ = delivery.ack().await;
        return;
    };
    match archive.finish_analysis(&finished, now_ms()).await {
        Ok(kept) => {
            info!(game = %finished.game_id, kept, error = %finished.error, "analysis result");
            if let Err(error) = delivery.ack().await {
                warn!(game = %finished.game_id, %error, "analysis result not acknowledged: it comes again");
            }
        }
        Err(error) => warn!(game = %finished.game_id, %error, "analysis result not kept: it comes again"),
    }
}
