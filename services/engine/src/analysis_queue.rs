//! The durable analysis queue: requests taken from the bus
//! (`analysis.requested.<game id>`), analysed on the pool's analysis lane,
//! and their results published (`analysis.finished.<game id>`) before the
//! request is acknowledged. While a game is analysed its replica reports
//! progress, so the request stays with it; a replica that dies stops
//! reporting, and the request goes to another replica after the ack wait.
//! Both messages carry the game id in their message id, so a request made twice
//! is one request, and a game analysed twice (a replica died between
//! publishing and acknowledging) is one result.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use fogblast_bus::{ConsumerConfig, Delivery, EventBus};
use fogblast_proto::engine::{AnalysisFinished, AnalysisRequested};
use prost::Message as _;
use tokio::sync::{oneshot, watch};
use tracing::{info, warn};

use crate::analysis::AnalysisTask;
use crate::config::AnalysisSettings;
use crate::pool::{AnalysisJob, AnalysisResult, SubmitError, Submitter};

/// Requests: `analysis.requested.<game id>`.
pub const REQUESTED_SUBJECT: &str = "analysis.requested";
/// Results: `analysis.finished.<game id>`.
pub const FINISHED_SUBJECT: &str = "analysis.finished";

/// A request's message id: one stream holds requests, results and finished
/// games, and deduplicates by message id across all of them.
pub fn request_message_id(game_id: &str) -> String {
    format!("analysis-requested-{game_id}")
}

/// A result's message id.
pub fn result_message_id(game_id: &str) -> String {
    format!("analysis-finished-{game_id}")
}

/// How long to wait before offering an analysis again to a full lane.
const FULL_LANE_PAUSE: Duration = Duration::from_millis(200);

/// Takes analyses from the queue until `stop` changes, `concurrency` at a time.
pub(crate) async fn run(
    bus: Arc<dyn EventBus>,
    pool: Submitter,
    settings: AnalysisSettings,
    concurrency: usize,
    stop: watch::Receiver<bool>,
) {
    let config = ConsumerConfig {
        name: settings.analysis_consumer.clone(),
        filter: format!("{REQUESTED_SUBJECT}.>"),
        ack_wait: settings.ack_wait(),
    };
    let (bus, settings) = (&bus, &settings);
    fogblast_bus::consume_until_stopped(&**bus, config, concurrency, stop, |delivery| {
        let pool = pool.clone();
        async move { handle(&**bus, &pool, settings, delivery).await }
    })
    .await;
}

/// One request: analysed and its result published, then acknowledged; or,
/// when the pool stopped it, left for another replica.
async fn handle(bus: &dyn EventBus, pool: &Submitter, settings: &AnalysisSettings, delivery: Box<dyn Delivery>) {
    let Ok(request) = AnalysisRequested::decode(delivery.message().payload.clone()) else {
        warn!(subject = %delivery.message().subject, "unreadable analysis request dropped");
        let _ = delivery.ack().await;
        return;
    };
    let game_id = request.game_id.clone();
    let game = request.game.unwrap_or_default();
    let mut finished = AnalysisFinished { game_id: game_id.clone(), ..Default::default() };
    match AnalysisTask::from_request(&game, settings.analysis_depth) {
        Err(error) => finished.error = error.to_string(),
        Ok(task) => {
            finished.depth = task.depth;
            match analyse(pool, task, &*delivery, settings.ack_wait()).await {
                Some(Ok(positions)) => finished.positions = positions,
                Some(Err(error)) => finished.error = error,
                None => {
                    info!(game = %game_id, "analysis stopped unfinished: left to another replica");
                    return;
                }
            }
        }
    }
    finished.finished_at_ms = now_ms();
    let subject = format!("{FINISHED_SUBJECT}.{game_id}");
    let payload = Bytes::from(finished.encode_to_vec());
    if let Err(error) = bus.publish_durable(&subject, &result_message_id(&game_id), Vec::new(), payload).await {
        warn!(game = %game_id, %error, "analysis result not published: the request comes again");
        return;
    }
    if let Err(error) = delivery.ack().await {
        warn!(game = %game_id, %error, "analysis request not acknowledged: it may be analysed again");
    }
    info!(game = %game_id, error = %finished.error, "analysis published");
}

/// Runs the task on the pool's analysis lane, reporting progress on the
/// delivery meanwhile; `None` when the pool stopped it, an error when a
/// search failed (which would fail again anywhere).
async fn analyse(
    pool: &Submitter,
    task: AnalysisTask,
    delivery: &dyn Delivery,
    ack_wait: Duration,
) -> Option<Result<Vec<fogblast_proto::engine::PositionEval>, String>> {
    let (reply, mut answer) = oneshot::channel();
    let mut job = AnalysisJob { task, cancel: Arc::new(AtomicBool::new(false)), reply, enqueued: Instant::now() };
    loop {
        match pool.submit_analysis(job) {
            Ok(()) => break,
            Err((SubmitError::Closed, _)) => return None,
            Err((SubmitError::QueueFull, returned)) => {
                job = *returned;
                tokio::time::sleep(FULL_LANE_PAUSE).await;
                let _ = delivery.in_progress().await;
            }
        }
    }
    let mut progress = tokio::time::interval(ack_wait / 3);
    progress.tick().await;
    loop {
        tokio::select! {
            result = &mut answer => return match result {
                Ok(AnalysisResult::Analysed { positions, .. }) => Some(Ok(positions)),
                Ok(AnalysisResult::Failed) => Some(Err("the analysis failed: a search could not finish".to_owned())),
                Ok(AnalysisResult::Stopped) | Err(_) => None,
            },
            _ = progress.tick() => {
                if let Err(error) = delivery.in_progress().await {
                    warn!(%error, "analysis progress not reported");
                }
            }
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis().try_into().unwrap_or(i64::MAX))
}
