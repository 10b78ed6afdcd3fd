//! The game service: sharded, authoritative games and clocks. Each shard
//! registers in the store with a heartbeat lease and an epoch, owns the
//! games that rendezvous hashing gives it, and changes a game only by a
//! commit that the store refuses if the game moved on (version) or a newer
//! owner wrote it (epoch). Clocks are settled on the store's time; flags,
//! aborts and the computer's turns are timers backed by the store's
//! deadline set, which every shard sweeps, so a game whose shard died goes
//! on at its new owner. Finished games are published to the durable stream
//! from an outbox until acknowledged.
//!
//! The service is a library: the `fogblast game` command, `fogblast up` and
//! the tests all start it through [`run`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use fogblast_bus::EventBus;
use fogblast_proto::game::game_server::GameServer;
use fogblast_proto::ids::ShardId;
use fogblast_store::GameStore;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::transport::server::TcpIncoming;
use tracing::{info, warn};

pub mod audience;
pub mod clock;
mod command_stream;
pub mod commands;
mod computer;
mod config;
pub mod create;
pub mod deadlines;
pub mod engine_view;
mod metrics;
mod ownership;
mod public_events;
mod publisher;
pub mod record;
pub mod refusal;
mod service;
mod shard;
mod watch_stream;

pub use audience::{state_for, Viewer};
pub use config::{GameConfig, GameSettings, Timeouts};
pub use publisher::{finished_event, subject as finished_subject};
pub use record::LiveGame;

/// Why a shard could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("setting up metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("reading the listener's address: {0}")]
    Listener(#[source] std::io::Error),
    #[error("registering the shard: {0}")]
    Register(#[from] fogblast_store::StoreError),
    #[error("engine address: {0}")]
    EngineAddress(#[source] tonic::transport::Error),
    #[error("invalid shard id: {0}")]
    ShardId(#[from] fogblast_proto::ids::InvalidId),
    #[error("serving gRPC: {0}")]
    Grpc(#[from] tonic::transport::Error),
    #[error("serving metrics: {0}")]
    MetricsServer(#[source] std::io::Error),
}

/// Levers for fault drills: what a test or an operator's drill flips to
/// make a healthy shard misbehave on purpose.
#[derive(Clone, Debug, Default)]
pub struct Drills {
    /// While set, the shard stops renewing its lease (as if paused), and
    /// other shards take its games once the lease runs out.
    pub heartbeat_paused: Arc<AtomicBool>,
    /// While set, the shard does not read membership again: its view goes
    /// stale, as one that registered before the last shard did for a moment.
    pub view_frozen: Arc<AtomicBool>,
}

/// Serves the game service on `grpc_listener` and the HTTP endpoints on
/// `metrics_listener` until `shutdown` completes; then gives up the lease
/// so other shards take the games at once, and stops.
pub async fn run(
    config: GameConfig,
    store: Arc<dyn GameStore>,
    bus: Arc<dyn EventBus>,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    run_with_drills(config, store, bus, grpc_listener, metrics_listener, shutdown, Drills::default()).await
}

/// [`run`], with levers for fault drills.
pub async fn run_with_drills(
    config: GameConfig,
    store: Arc<dyn GameStore>,
    bus: Arc<dyn EventBus>,
    grpc_listener: TcpListener,
    metrics_listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    drills: Drills,
) -> Result<(), ServeError> {
    let grpc_addr = grpc_listener.local_addr().map_err(ServeError::Listener)?;
    let metrics_addr = metrics_listener.local_addr().map_err(ServeError::Listener)?;
    let advertise = config.advertise.clone().unwrap_or_else(|| advertised(grpc_addr));
    let shard_id = match &config.shard_id {
        Some(id) => ShardId::parse(id)?,
        None => ShardId::parse(&format!("shard-{:08x}", rand::random::<u32>()))?,
    };
    let engines = computer::EnginePool::new(&config.engine_addrs).map_err(ServeError::EngineAddress)?;
    let ownership = ownership::Ownership::register(
        store.clone(),
        shard_id.clone(),
        advertise.clone(),
        config.settings.lease(),
        drills.heartbeat_paused,
        drills.view_frozen,
    )
    .await?;
    let metrics = Arc::new(metrics::Metrics::new()?);
    let shard = Arc::new(shard::Shard::new(store, bus, ownership.clone(), config.clone(), metrics.clone(), engines));

    let (stop_tx, stop) = watch::channel(false);
    let heartbeat = tokio::spawn(ownership.clone().heartbeat(stop.clone()));
    let peers = tokio::spawn(ownership.clone().watch_peers(config.settings.peer_check_interval(), stop.clone()));
    let sweeper = tokio::spawn(sweep_loop(shard.clone(), stop.clone()));
    tokio::spawn(count_departures(ownership.changes(), metrics.clone(), stop.clone()));
    let mut http_stop = stop.clone();
    let readiness = metrics::readiness(ownership.clone());
    let http =
        tokio::spawn(fogblast_runtime::serve_admin(metrics_listener, metrics.registry(), readiness, async move {
            let _ = http_stop.changed().await;
        }));

    let leaving = ownership.clone();
    let signal = async move {
        shutdown.await;
        info!("shutting down: giving up the lease so other shards take the games");
        leaving.leave().await;
    };
    info!(shard = %shard_id, grpc = %grpc_addr, advertise = %advertise, metrics = %metrics_addr, "game shard listening");
    let (served, _) = fogblast_runtime::serve_with_drain(signal, config.drain(), |signal| {
        fogblast_runtime::grpc_server()
            .layer(fogblast_telemetry::GrpcTraceLayer)
            .add_service(GameServer::new(service::GameService::new(shard)))
            // Small frames both ways: without NODELAY a reply can wait for the
            // peer's delayed ACK (tens of milliseconds).
            .serve_with_incoming_shutdown(TcpIncoming::from(grpc_listener).with_nodelay(Some(true)), signal)
    })
    .await;
    let _ = stop_tx.send(true);
    let _ = heartbeat.await;
    let _ = peers.await;
    let _ = sweeper.await;
    let http_served = match http.await {
        Ok(result) => result.map_err(ServeError::MetricsServer),
        Err(error) => {
            warn!(%error, "metrics server task failed");
            Ok(())
        }
    };
    info!(shard = %shard_id, "game shard stopped");
    served?;
    http_served
}

/// The address to advertise for a listener bound to all interfaces.
fn advertised(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://127.0.0.1:{}", addr.port())
    } else {
        format!("http://{addr}")
    }
}

async fn sweep_loop(shard: Arc<shard::Shard>, mut stop: watch::Receiver<bool>) {
    let interval = shard.config.settings.sweep_interval();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.changed() => return,
        }
        if let Err(error) = shard.sweep().await {
            warn!(%error, "sweep failed");
        }
    }
}

/// Counts the shards that leave the membership as this shard reads it,
/// each a failover of that shard's games, until `stop` is set.
async fn count_departures(
    mut members: watch::Receiver<Arc<Vec<fogblast_store::Member>>>,
    metrics: Arc<metrics::Metrics>,
    mut stop: watch::Receiver<bool>,
) {
    let mut known = members.borrow_and_update().clone();
    metrics.shards_live.set(known.len() as i64);
    loop {
        tokio::select! {
            changed = members.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = members.borrow_and_update().clone();
                let departed = known.iter().filter(|old| !now.iter().any(|m| m.shard == old.shard)).count();
                metrics.shards_departed.inc_by(departed as u64);
                metrics.shards_live.set(now.len() as i64);
                known = now;
            }
            _ = stop.changed() => return,
        }
    }
}
