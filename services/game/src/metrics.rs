//! What a game shard reports to Prometheus, and the HTTP listener serving
//! `/metrics`, `/healthz` (the process is alive) and `/readyz` (the shard
//! holds its lease and may serve). Each shard has its own registry, so
//! several shards in one process keep separate counts.

use std::future::Future;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus::{
    exponential_buckets, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};
use tokio::net::TcpListener;

use crate::ownership::Ownership;

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Commands answered, by RPC and outcome code.
    pub commands: IntCounterVec,
    /// Time to answer a command, by RPC: for `make_move` this is the
    /// MakeMove latency the service promises.
    pub command_seconds: HistogramVec,
    pub moves: IntCounter,
    /// Commits refused because another writer got there first.
    pub commit_conflicts: IntCounter,
    pub games_finished: IntCounter,
    pub games_published: IntCounter,
    pub games_cached: IntGauge,
    pub watchers: IntGauge,
}

impl Metrics {
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let commands = IntCounterVec::new(
            Opts::new("fogblast_game_commands_total", "Commands answered, by rpc and outcome."),
            &["rpc", "outcome"],
        )?;
        let command_seconds = HistogramVec::new(
            HistogramOpts::new("fogblast_game_command_seconds", "Time to answer a command, by rpc.")
                .buckets(exponential_buckets(0.0001, 2.0, 16)?),
            &["rpc"],
        )?;
        let moves = IntCounter::new("fogblast_game_moves_total", "Moves applied (players' and the computer's).")?;
        let commit_conflicts =
            IntCounter::new("fogblast_game_commit_conflicts_total", "Commits refused for a stale version or epoch.")?;
        let games_finished = IntCounter::new("fogblast_game_games_finished_total", "Games this shard ended.")?;
        let games_published =
            IntCounter::new("fogblast_game_games_published_total", "Finished games acknowledged by the stream.")?;
        let games_cached = IntGauge::new("fogblast_game_games_cached", "Games held in memory by this shard.")?;
        let watchers = IntGauge::new("fogblast_game_watch_streams", "Open Watch streams.")?;
        registry.register(Box::new(commands.clone()))?;
        registry.register(Box::new(command_seconds.clone()))?;
        registry.register(Box::new(moves.clone()))?;
        registry.register(Box::new(commit_conflicts.clone()))?;
        registry.register(Box::new(games_finished.clone()))?;
        registry.register(Box::new(games_published.clone()))?;
        registry.register(Box::new(games_cached.clone()))?;
        registry.register(Box::new(watchers.clone()))?;
        Ok(Metrics {
            registry,
            commands,
            command_seconds,
            moves,
            commit_conflicts,
            games_finished,
            games_published,
            games_cached,
            watchers,
        })
    }

    fn render(&self) -> String {
        TextEncoder::new().encode_to_string(&self.registry.gather()).unwrap_or_default()
    }
}

#[derive(Clone)]
struct HttpState {
    metrics: Arc<Metrics>,
    ownership: Arc<Ownership>,
}

/// Serves the HTTP endpoints until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    ownership: Arc<Ownership>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/metrics", get(render_metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .with_state(HttpState { metrics, ownership });
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn render_metrics(State(state): State<HttpState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}

async fn ready(State(state): State<HttpState>) -> impl IntoResponse {
    if state.ownership.serving() {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not serving: the shard holds no lease")
    }
}
