//! The `Engine` gRPC service: checks a request, queues it for a search
//! thread and waits for the answer without ever searching on the runtime.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use fogblast_proto::engine::engine_server::Engine;
use fogblast_proto::engine::{AnalyseRequest, AnalyseResponse, BestMoveRequest, BestMoveResponse};
use tokio::sync::oneshot;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::analysis::AnalysisTask;
use crate::config::AnalysisSettings;
use crate::deadline;
use crate::metrics::{Metrics, Outcome};
use crate::pool::{AnalysisJob, AnalysisResult, Answer, Job, JobResult, SubmitError, Submitter};
use crate::request::SearchTask;

#[derive(Debug)]
pub(crate) struct EngineService {
    pool: Submitter,
    metrics: Arc<Metrics>,
    queue: u32,
    analysis: AnalysisSettings,
}

impl EngineService {
    pub fn new(pool: Submitter, metrics: Arc<Metrics>, queue: u32, analysis: AnalysisSettings) -> EngineService {
        EngineService { pool, metrics, queue, analysis }
    }

    async fn analysis(&self, request: &AnalyseRequest) -> Result<AnalyseResponse, Status> {
        let task = AnalysisTask::from_request(request, self.analysis.analysis_depth)
            .map_err(|err| Status::invalid_argument(err.to_string()))?;
        let (reply, answer) = oneshot::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(cancel.clone());
        let job = AnalysisJob { task, cancel, reply, enqueued: Instant::now() };
        self.pool.submit_analysis(job).map_err(|(err, _)| match err {
            SubmitError::QueueFull => Status::resource_exhausted(format!(
                "the analysis queue is full ({} games waiting); retry later or on another replica",
                self.analysis.analysis_queue
            )),
            SubmitError::Closed => Status::unavailable("the engine pool is shutting down"),
        })?;
        match answer.await {
            Ok(AnalysisResult::Analysed { positions, nodes, elapsed }) => {
                Ok(AnalyseResponse { positions, nodes, elapsed_ms: elapsed.as_millis().try_into().unwrap_or(u32::MAX) })
            }
            Ok(AnalysisResult::Stopped) => Err(Status::unavailable("the engine pool is shutting down")),
            Ok(AnalysisResult::Failed) | Err(_) => Err(Status::internal("the analysis failed")),
        }
    }

    async fn answer(&self, request: &BestMoveRequest, answer_by: Option<Instant>) -> Result<BestMoveResponse, Status> {
        let task = SearchTask::from_request(request).map_err(|err| Status::invalid_argument(err.to_string()))?;
        let (reply, answer) = oneshot::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        // However this call ends (answered, timed out, dropped by its
        // caller), a search still running for it stops.
        let _cancel_on_drop = CancelOnDrop(cancel.clone());
        let job = Job { task, answer_by, cancel, reply, enqueued: Instant::now() };
        self.pool.submit(job).map_err(|err| match err {
            SubmitError::QueueFull => Status::resource_exhausted(format!(
                "the engine queue is full ({} requests waiting); retry later or on another replica",
                self.queue
            )),
            SubmitError::Closed => Status::unavailable("the engine pool is shutting down"),
        })?;
        let result = match answer_by {
            Some(due) => tokio::time::timeout_at(due.into(), answer)
                .await
                .map_err(|_| Status::deadline_exceeded("the deadline passed before the engine had a move"))?,
            None => answer.await,
        };
        match result {
            Ok(JobResult::Searched(answer)) => Ok(response(answer)),
            Ok(JobResult::Refused(reason)) => Err(Status::invalid_argument(reason)),
            Ok(JobResult::Expired) => Err(expired()),
            Ok(JobResult::ShuttingDown) => Err(Status::unavailable("the engine pool is shutting down")),
            Ok(JobResult::Failed) | Err(_) => Err(Status::internal("the search failed")),
        }
    }
}

#[tonic::async_trait]
impl Engine for EngineService {
    async fn best_move(&self, request: Request<BestMoveRequest>) -> Result<Response<BestMoveResponse>, Status> {
        let answer_by = deadline::answer_by(request.metadata(), Instant::now());
        let request = request.into_inner();
        let span = tracing::info_span!(
            "best_move",
            variant = request.variant().as_str_name(),
            level = request.level().as_str_name(),
            moves = request.moves.len(),
            budget_ms = request.budget_ms,
        );
        let result = self.answer(&request, answer_by).instrument(span.clone()).await;
        let _entered = span.enter();
        match &result {
            Ok(answer) => {
                self.metrics.answered(Outcome::Ok);
                tracing::debug!(uci = %answer.uci, depth = answer.depth, nodes = answer.nodes, "answered");
            }
            Err(status) => {
                self.metrics.answered(Outcome::of(status.code()));
                tracing::info!(code = ?status.code(), message = status.message(), "refused");
            }
        }
        result.map(Response::new)
    }

    async fn analyse(&self, request: Request<AnalyseRequest>) -> Result<Response<AnalyseResponse>, Status> {
        let request = request.into_inner();
        let span =
            tracing::info_span!("analyse", variant = request.variant().as_str_name(), moves = request.moves.len());
        let result = self.analysis(&request).instrument(span.clone()).await;
        if let Err(status) = &result {
            let _entered = span.enter();
            tracing::info!(code = ?status.code(), message = status.message(), "analysis refused");
        }
        result.map(Response::new)
    }
}

fn response(answer: Answer) -> BestMoveResponse {
    BestMoveResponse {
        uci: answer.uci,
        score_cp: answer.score,
        mate_in: answer.mate_in,
        depth: answer.depth,
        nodes: answer.nodes,
        elapsed_ms: answer.elapsed.as_millis().try_into().unwrap_or(u32::MAX),
    }
}

fn expired() -> Status {
    Status::deadline_exceeded("the deadline passed before a search thread was free")
}

/// Raises the flag when dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
