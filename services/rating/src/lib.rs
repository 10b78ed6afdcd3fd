//! The rating service: a durable consumer of the finished-games stream
//! that archives every game and moves Glicko-2 ratings (one per variant)
//! exactly once per rated game, plus a gRPC service for profiles,
//! leaderboards, archived games and PGN export. Postgres in production,
//! SQLite for `fogblast up`.
//!
//! The service is a library: the `fogblast rating` command, `fogblast up`
//! and the tests all start it through [`run`].

use std::future::Future;
use std::sync::Arc;

use fogblast_bus::{ConsumerConfig, EventBus};
use fogblast_proto::rating::rating_server::RatingServer;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::transport::server::TcpIncoming;
use tracing::{info, warn};

pub mod analyses;
mod analysis_results;
pub mod archive;
mod config;
pub mod consumer;
mod export;
pub mod judgement;
mod metrics;
mod puzzle_service;
pub mod puzzles;
mod recovery;
pub mod rerate;
mod service;

pub use archive::{Applied, Archive, ArchiveError};
pub use config::{RatingConfig, RatingSettings};

/// Why the rating service could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("setting up metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("serving gRPC: {0}")]
    Grpc(#[from] tonic::transport::Error),
    #[error("serving metrics: {0}")]
    MetricsServer(#[source] std::io::Error),
    #[error("reading the listener's address: {0}")]
    Listener(#[source] std::io::Error),
}

/// Consumes finished games and serves gRPC on `grpc_listener` until
/// `shutdown` completes.
pub async fn run(
    config: RatingConfig,
    bus: Arc<dyn EventBus>,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = grpc_listener.local_addr().map_err(ServeError::Listener)?;
    let metrics_addr = metrics_listener.local_addr().map_err(ServeError::Listener)?;
    let archive = Archive::connect(&config.settings.database_url).await?;
    let seeded = archive.seed_puzzles(&fogblast_puzzles::starter_set()).await?;
    if seeded > 0 {
        info!(puzzles = seeded, "starter puzzles added");
    }
    let metrics = Arc::new(metrics::Metrics::new()?);
    let (stop_tx, stop) = watch::channel(false);
    let consumer_config = ConsumerConfig {
        name: config.settings.consumer.clone(),
        filter: "games.finished.>".to_owned(),
        ack_wait: config.settings.ack_wait(),
    };
    let results =
        tokio::spawn(analysis_results::run(archive.clone(), bus.clone(), consumer_config.clone(), stop.clone()));
    let consumer =
        tokio::spawn(consumer::run(archive.clone(), bus.clone(), metrics.clone(), consumer_config, stop.clone()));
    let mut http_stop = stop.clone();
    let ready: fogblast_runtime::Readiness = Arc::new(|| Ok(()));
    let http = tokio::spawn(fogblast_runtime::serve_admin(metrics_listener, metrics.registry(), ready, async move {
        let _ = http_stop.changed().await;
    }));
    info!(grpc = %addr, metrics = %metrics_addr, consumer = %config.settings.consumer, "rating service listening");
    let (served, _) = fogblast_runtime::serve_with_drain(shutdown, config.drain(), |signal| {
        fogblast_runtime::grpc_server()
            .layer(fogblast_telemetry::GrpcTraceLayer)
            .add_service(RatingServer::new(service::RatingService::new(archive, bus)))
            .serve_with_incoming_shutdown(TcpIncoming::from(grpc_listener).with_nodelay(Some(true)), signal)
    })
    .await;
    let _ = stop_tx.send(true);
    let _ = consumer.await;
    let _ = results.await;
    let http_served = match http.await {
        Ok(result) => result.map_err(ServeError::MetricsServer),
        Err(error) => {
            warn!(%error, "metrics server task failed");
            Ok(())
        }
    };
    info!("rating service stopped");
    served?;
    http_served
}
