//! The engine pool: Fogblast's computer players behind one gRPC call,
//! `BestMove`. Searches run on a fixed set of threads fed by a bounded
//! queue, so a burst of requests is refused quickly instead of piling up,
//! and a request whose caller has given up is never searched. Prometheus
//! metrics are served on a second listener.
//!
//! The service is a library: the `fogblast engine` command, `fogblast up`
//! and the tests all start it through [`run`].

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::EventBus;
use fogblast_proto::engine::engine_server::EngineServer;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tonic::transport::server::TcpIncoming;
use tracing::{info, warn};

mod analysis;
pub mod analysis_queue;
mod config;
mod deadline;
mod metrics;
mod pool;
mod request;
mod service;

pub use analysis::{MAX_ANALYSIS_DEPTH, MAX_ANALYSIS_PLIES};
pub use config::{AnalysisSettings, EngineConfig, EngineSettings};
pub use request::{RequestError, MAX_BUDGET_MS};

use metrics::Metrics;
use pool::{Pool, PoolSize};
use service::EngineService;

/// After the drain time runs out and the pool aborts, how long calls still
/// open get to hear that it is shutting down.
const ABORT_GRACE: Duration = Duration::from_secs(2);

/// The pool's threads and queues as `config` sizes them.
fn pool_size(config: &EngineConfig) -> PoolSize {
    PoolSize {
        workers: config.settings.workers,
        queue: config.settings.queue,
        hash_mb: config.settings.hash_mb,
        analysis_workers: config.analysis.threads(config.settings.workers),
        analysis_queue: config.analysis.analysis_queue,
    }
}

/// Stops the pool taking work and waits for its threads to end.
async fn close(pool: Pool) {
    pool.close();
    if tokio::task::spawn_blocking(move || pool.join()).await.is_err() {
        warn!("waiting for the search threads failed");
    }
}

/// Why the engine pool could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("setting up metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("starting a search thread: {0}")]
    SpawnWorker(#[source] std::io::Error),
    #[error("reading the listener's address: {0}")]
    Listener(#[source] std::io::Error),
    #[error("serving gRPC: {0}")]
    Grpc(#[from] tonic::transport::Error),
    #[error("serving metrics: {0}")]
    MetricsServer(#[source] std::io::Error),
}

/// Serves `BestMove` on `grpc_listener` and `/metrics` on
/// `metrics_listener` until `shutdown` completes. Then it stops accepting
/// calls, lets those already accepted finish for up to
/// `config.drain_ms` (after which the rest are refused and their searches
/// stopped), and ends the search threads.
pub async fn run(
    config: EngineConfig,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    serve(config, None, grpc_listener, metrics_listener, shutdown).await
}

/// [`run`], and also takes analyses from the durable queue on `bus`
/// (`analysis.requested.>`), publishing each result on
/// `analysis.finished.<game id>`. Shutdown stops the analyses unfinished
/// and unacknowledged, for another replica to take.
pub async fn run_with_analysis_queue(
    config: EngineConfig,
    bus: Arc<dyn EventBus>,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    serve(config, Some(bus), grpc_listener, metrics_listener, shutdown).await
}

async fn serve(
    config: EngineConfig,
    bus: Option<Arc<dyn EventBus>>,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let grpc_addr = grpc_listener.local_addr().map_err(ServeError::Listener)?;
    let metrics_addr = metrics_listener.local_addr().map_err(ServeError::Listener)?;
    let metrics = Arc::new(Metrics::new(config.settings.workers)?);
    let size = pool_size(&config);
    let pool = Pool::start(size, metrics.clone()).map_err(ServeError::SpawnWorker)?;

    let (stop_metrics, metrics_stopped) = oneshot::channel::<()>();
    let metrics_server =
        tokio::spawn(fogblast_runtime::serve_admin(metrics_listener, metrics.registry(), metrics.readiness(), async {
            let _ = metrics_stopped.await;
        }));

    let (stop_queue, queue_stopped) = watch::channel(false);
    let queue = bus.map(|bus| {
        let threads = size.analysis_workers as usize;
        tokio::spawn(analysis_queue::run(bus, pool.submitter(), config.analysis.clone(), threads, queue_stopped))
    });
    let (draining_tx, draining) = oneshot::channel();
    let draining_metrics = metrics.clone();
    let analysis = pool.submitter();
    let signal = async move {
        shutdown.await;
        info!("shutting down: no new calls; draining those accepted, stopping analyses");
        draining_metrics.set_draining();
        analysis.stop_analysis();
        let _ = stop_queue.send(true);
        let _ = draining_tx.send(());
    };
    let service = EngineService::new(pool.submitter(), metrics.clone(), config.settings.queue, config.analysis.clone());
    let server = fogblast_runtime::grpc_server()
        .layer(fogblast_telemetry::GrpcTraceLayer)
        .add_service(EngineServer::new(service))
        // Without NODELAY a small reply can wait for the peer's delayed ACK.
        .serve_with_incoming_shutdown(TcpIncoming::from(grpc_listener).with_nodelay(Some(true)), signal);
    info!(
        grpc = %grpc_addr,
        metrics = %metrics_addr,
        workers = config.settings.workers,
        queue = config.settings.queue,
        hash_mb = config.settings.hash_mb,
        analysis_workers = size.analysis_workers,
        analysis_depth = config.analysis.analysis_depth,
        "engine pool listening"
    );

    let mut server = pin!(server);
    let served = tokio::select! {
        served = &mut server => served,
        Ok(()) = draining => match tokio::time::timeout(config.drain_timeout(), &mut server).await {
            Ok(served) => served,
            Err(_) => {
                warn!(drain_ms = config.drain_ms, "drain time ran out: refusing queued calls, stopping searches");
                pool.abort();
                tokio::time::timeout(ABORT_GRACE, &mut server).await.unwrap_or(Ok(()))
            }
        },
    };

    if let Some(queue) = queue {
        let _ = queue.await;
    }
    close(pool).await;
    let _ = stop_metrics.send(());
    let metrics_served = match metrics_server.await {
        Ok(result) => result.map_err(ServeError::MetricsServer),
        Err(err) => {
            warn!(error = %err, "metrics server task failed");
            Ok(())
        }
    };
    info!("engine pool stopped");
    served?;
    metrics_served
}
