//! The matchmaker: quick pairing by rating and the lobby of open boards.
//! Seeks wait in pools (variant, clock, rated) kept in Redis; each pool is
//! paired in lichess-style waves by exactly one replica at a time, the
//! holder of the pool's lease, and every pairing commit is fenced by that
//! lease and refused if either seek is gone, so several replicas can run at
//! once and no seek is ever paired twice or after it was cancelled. Paired
//! players are seated through the game service and told on `player.<id>`;
//! lobby changes go out on the bus subject `lobby`.
//!
//! The service is a library: the `fogblast matchmaker` command, the
//! benchmark and the tests all start it through [`run`].
//! `docs/matchmaker.md` describes the API, the rules and the Redis keys.

use std::future::Future;
use std::sync::Arc;

use fogblast_bus::EventBus;
use fogblast_proto::matchmaker::matchmaker_server::MatchmakerServer;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::transport::server::TcpIncoming;
use tracing::{info, warn};

mod config;
mod core;
pub mod games;
mod metrics;
pub mod notices;
pub mod pairing;
pub mod pool;
mod pools;
pub mod ratings;
mod service;
pub mod store;
pub mod tournament;
mod waves;

pub use crate::core::{Matchmaker, SetupError};
pub use config::{MatchmakerConfig, MatchmakerSettings};
pub use games::{Games, PretendGames, ShardRouter};
pub use pool::PoolKey;
pub use pools::preferred;
pub use store::{MatchBackend, MatchStore, MemoryMatchStore, RedisMatchStore, StoreError};
pub use waves::WaveReport;

/// Why a matchmaker replica could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("reading the listener's address: {0}")]
    Listener(#[source] std::io::Error),
    #[error("serving gRPC: {0}")]
    Grpc(#[from] tonic::transport::Error),
    #[error("serving metrics: {0}")]
    MetricsServer(#[source] std::io::Error),
}

/// Serves the matchmaker on `grpc_listener` and the HTTP endpoints on
/// `metrics_listener`, and pairs the pools this replica gets, until
/// `shutdown` completes; then lets go of its pools' leases and stops.
pub async fn run(
    config: MatchmakerConfig,
    store: MatchStore,
    bus: Arc<dyn EventBus>,
    games: Arc<dyn Games>,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let grpc_addr = grpc_listener.local_addr().map_err(ServeError::Listener)?;
    let metrics_addr = metrics_listener.local_addr().map_err(ServeError::Listener)?;
    let drain = config.drain();
    let tournament_store = store.tournaments().clone();
    let limits = config.settings.tournament_limits();
    let schedule = tournament::schedule::parse(&config.settings.tournament_schedule).map_err(|e| {
        SetupError::Config(fogblast_proto::error::ServiceError::new(
            fogblast_proto::error::ErrorCode::BadRequest,
            format!("--tournament-schedule: {e}"),
        ))
    })?;
    let ratings = ratings::Ratings::new(config.rating_addr.as_deref()).map_err(SetupError::Config)?;
    let matchmaker = Matchmaker::new(config, store, bus.clone(), games.clone())?;
    let tournaments = Arc::new(tournament::commands::Tournaments {
        store: tournament_store,
        bus: bus.clone(),
        games,
        ratings,
        replica: matchmaker.replica().to_owned(),
        limits,
        schedule,
    });
    let (stop_tx, stop) = watch::channel(false);
    let pools = tokio::spawn(matchmaker.clone().manage_pools(stop.clone()));
    let driver = tokio::spawn(tournaments.clone().drive(Arc::new(tournament::driver::Memory::default()), stop.clone()));
    let results = tokio::spawn(tournament::results::run(tournaments.store.clone(), bus.clone(), stop.clone()));
    let lobby = tokio::spawn(matchmaker.clone().publish_lobby(stop.clone()));
    let mut http_stop = stop.clone();
    let metrics = matchmaker.metrics();
    let http = tokio::spawn(fogblast_runtime::serve_admin(
        metrics_listener,
        metrics.registry(),
        metrics.readiness(),
        async move {
            let _ = http_stop.changed().await;
        },
    ));
    info!(replica = %matchmaker.replica(), grpc = %grpc_addr, metrics = %metrics_addr, "matchmaker listening");
    let service = MatchmakerServer::new(service::MatchmakerService::new(matchmaker.clone(), tournaments.clone()));
    let (served, _) = fogblast_runtime::serve_with_drain(shutdown, drain, |signal| {
        fogblast_runtime::grpc_server()
            .layer(fogblast_telemetry::GrpcTraceLayer)
            .add_service(service)
            .serve_with_incoming_shutdown(TcpIncoming::from(grpc_listener).with_nodelay(Some(true)), signal)
    })
    .await;
    info!(replica = %matchmaker.replica(), "matchmaker stopping: letting go of its pools");
    let _ = stop_tx.send(true);
    let _ = pools.await;
    let _ = lobby.await;
    let _ = driver.await;
    let _ = results.await;
    let http_served = match http.await {
        Ok(result) => result.map_err(ServeError::MetricsServer),
        Err(error) => {
            warn!(%error, "metrics server task failed");
            Ok(())
        }
    };
    info!(replica = %matchmaker.replica(), "matchmaker stopped");
    served?;
    http_served
}
