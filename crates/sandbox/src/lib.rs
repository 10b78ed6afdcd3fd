//! A whole Fogblast cluster inside the test's own process: game shards,
//! gateways and, when asked for, engine pools, the rating service and the
//! matchmaker, each the service's own `run()` (what `fogblast up` wires,
//! and what each `fogblast <service>` process runs) on loopback port 0,
//! sharing the in-process store and bus. Tests get typed clients to the
//! gateways and stop everything by dropping the sandbox.
//!
//! What runs and how it is tuned is a [`Topology`] on
//! [`Profile::in_process_test`]; each service's config is read from the
//! profile's flags for that service, the flags a process cluster passes on
//! its command lines.
//!
//! In-process clusters start in milliseconds and cost no process per
//! service, so tests that only play through the protocol use them; tests
//! that kill, pause or signal a process need real processes and keep the
//! end-to-end support's process cluster.
//!
//! ```no_run
//! # async fn example() -> Result<(), fogblast_sandbox::SandboxError> {
//! let sandbox = fogblast_sandbox::Sandbox::builder().shards(2).gateways(2).embedded().start().await?;
//! let mut alice = sandbox.client(0).await?;
//! # Ok(()) }
//! ```

mod players;

pub use players::started_game;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::{EventBus, MemoryBus};
use fogblast_client::{Client, Http};
use fogblast_engine_service::EngineConfig;
use fogblast_game_service::GameConfig;
use fogblast_gateway::GatewayConfig;
use fogblast_matchmaker::{MatchStore, MatchmakerConfig, ShardRouter};
use fogblast_rating::RatingConfig;
use fogblast_store::{GameStore, Membership, MemoryStore};
pub use fogblast_topology::{Profile, Topology};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long `start` waits for every service to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("binding a loopback port: {0}")]
    Bind(#[source] std::io::Error),
    #[error("{name} did not become ready within {READY_TIMEOUT:?}")]
    NotReady { name: String },
    #[error("{name} failed: {message}")]
    Service { name: String, message: String },
    #[error("{service}'s settings from the profile's flags: {message}")]
    Settings { service: &'static str, message: String },
    #[error(transparent)]
    Client(#[from] fogblast_client::Error),
}

/// What to start; [`Sandbox::builder`] makes one.
#[derive(Clone, Debug)]
pub struct SandboxBuilder {
    topology: Topology,
}

impl SandboxBuilder {
    pub fn shards(mut self, shards: usize) -> SandboxBuilder {
        self.topology.shards = shards;
        self
    }

    pub fn gateways(mut self, gateways: usize) -> SandboxBuilder {
        self.topology.gateways = gateways;
        self
    }

    /// Engine pools of one search thread each, for games against the computer.
    pub fn engines(mut self, engines: usize) -> SandboxBuilder {
        self.topology.engines = engines;
        self
    }

    /// The rating service, on an SQLite archive in memory.
    pub fn rating(mut self) -> SandboxBuilder {
        self.topology.rating = true;
        self
    }

    /// A matchmaker, pairing in the profile's waves, with its state in memory.
    pub fn matchmaker(mut self) -> SandboxBuilder {
        self.topology.matchmakers = 1;
        self
    }

    /// Every service on the in-process store and bus, as `fogblast up`
    /// runs without `REDIS_URL` and `NATS_URL`: nothing outside the process
    /// is touched, so nothing needs removing afterwards. The only backends
    /// a sandbox has today; the call says so where the sandbox is built.
    pub fn embedded(self) -> SandboxBuilder {
        self
    }

    /// Starts everything on the current runtime and waits until each
    /// shard and gateway answers `/readyz`.
    pub async fn start(self) -> Result<Sandbox, SandboxError> {
        let backends = Backends {
            store: Arc::new(MemoryStore::new()),
            bus: Arc::new(MemoryBus::new()),
            run: format!("{:08x}", rand_id()),
        };
        let (stop_tx, stop) = watch::channel(false);
        let mut sandbox = Sandbox { stop: stop_tx, tasks: Vec::new(), gateways: Vec::new(), probes: Vec::new() };
        let Topology { engines, shards, matchmakers, gateways, rating, profile } = &self.topology;
        let engine_addrs = sandbox.start_engines(*engines, profile, &backends.bus, &stop).await?;
        sandbox.start_shards(*shards, profile, &engine_addrs, &backends, &stop).await?;
        let rating_addr = if *rating { Some(sandbox.start_rating(profile, &backends, &stop).await?) } else { None };
        // One matchmaker at most: its state is in its own memory, which a
        // second could not share.
        let matchmaker_addr = if *matchmakers > 0 {
            Some(sandbox.start_matchmaker(profile, rating_addr.clone(), &backends, &stop).await?)
        } else {
            None
        };
        let services = Services { rating: rating_addr, matchmaker: matchmaker_addr };
        sandbox.start_gateways(*gateways, profile, &services, &backends, &stop).await?;
        sandbox.wait_ready().await?;
        Ok(sandbox)
    }
}

/// What every service of a sandbox shares.
struct Backends {
    store: Arc<dyn GameStore>,
    bus: Arc<dyn EventBus>,
    /// Names this sandbox's shards and token secret apart from others'.
    run: String,
}

/// Where the gateways find the services besides the shards.
struct Services {
    rating: Option<String>,
    matchmaker: Option<String>,
}

impl Sandbox {
    /// Starts `count` engine services, each taking analyses from the
    /// queue on the sandbox's bus; returns their addresses.
    async fn start_engines(
        &mut self,
        count: usize,
        profile: &Profile,
        bus: &Arc<dyn EventBus>,
        stop: &watch::Receiver<bool>,
    ) -> Result<Vec<String>, SandboxError> {
        let mut engine_addrs = Vec::new();
        for i in 0..count {
            let config: EngineConfig = config_from("engine", &profile.engine_flags())?;
            let (grpc, http) = (loopback().await?, loopback().await?);
            engine_addrs.push(format!("http://{}", addr_of(&grpc)?));
            let task = tokio::spawn(fogblast_engine_service::run_with_analysis_queue(
                config,
                bus.clone(),
                grpc,
                http,
                on_stop(stop),
            ));
            self.watch(format!("engine-{i}"), task);
        }
        Ok(engine_addrs)
    }

    async fn start_shards(
        &mut self,
        count: usize,
        profile: &Profile,
        engine_addrs: &[String],
        backends: &Backends,
        stop: &watch::Receiver<bool>,
    ) -> Result<(), SandboxError> {
        for i in 0..count {
            let config = GameConfig {
                engine_addrs: engine_addrs.to_vec(),
                shard_id: Some(format!("sandbox-{}-{i}", backends.run)),
                ..config_from("game shard", &profile.game_flags())?
            };
            let (grpc, http) = (loopback().await?, loopback().await?);
            self.probes.push((format!("shard-{i}"), addr_of(&http)?));
            let (store, bus) = (backends.store.clone(), backends.bus.clone());
            let task = tokio::spawn(fogblast_game_service::run(config, store, bus, grpc, http, on_stop(stop)));
            self.watch(format!("shard-{i}"), task);
        }
        Ok(())
    }

    /// Starts the rating service (SQLite in memory); returns its address.
    async fn start_rating(
        &mut self,
        profile: &Profile,
        backends: &Backends,
        stop: &watch::Receiver<bool>,
    ) -> Result<String, SandboxError> {
        let mut config: RatingConfig = config_from("rating", &profile.rating_flags())?;
        config.settings.database_url = "sqlite::memory:".into();
        let (grpc, http) = (loopback().await?, loopback().await?);
        let addr = format!("http://{}", addr_of(&grpc)?);
        self.probes.push(("rating".into(), addr_of(&http)?));
        let task = tokio::spawn(fogblast_rating::run(config, backends.bus.clone(), grpc, http, on_stop(stop)));
        self.watch("rating".into(), task);
        Ok(addr)
    }

    /// Starts the matchmaker (in memory); returns its address.
    async fn start_matchmaker(
        &mut self,
        profile: &Profile,
        rating_addr: Option<String>,
        backends: &Backends,
        stop: &watch::Receiver<bool>,
    ) -> Result<String, SandboxError> {
        let config = MatchmakerConfig { rating_addr, ..config_from("matchmaker", &profile.matchmaker_flags())? };
        let membership: Arc<dyn Membership> = backends.store.clone();
        let games = ShardRouter::new(membership, config.settings.route_timeout()).await;
        let (grpc, http) = (loopback().await?, loopback().await?);
        let addr = format!("http://{}", addr_of(&grpc)?);
        self.probes.push(("matchmaker".into(), addr_of(&http)?));
        let task = tokio::spawn(fogblast_matchmaker::run(
            config,
            MatchStore::in_memory(),
            backends.bus.clone(),
            games,
            grpc,
            http,
            on_stop(stop),
        ));
        self.watch("matchmaker".into(), task);
        Ok(addr)
    }

    async fn start_gateways(
        &mut self,
        count: usize,
        profile: &Profile,
        services: &Services,
        backends: &Backends,
        stop: &watch::Receiver<bool>,
    ) -> Result<(), SandboxError> {
        // One secret, so a token from one gateway is good at every other.
        let secret = format!("sandbox-{}-{:016x}{:016x}", backends.run, rand_id(), rand_id());
        for i in 0..count {
            let listener = loopback().await?;
            let addr = addr_of(&listener)?;
            let mut config = GatewayConfig {
                listen: addr,
                metrics_listen: None,
                rating_addr: services.rating.clone(),
                matchmaker_addr: services.matchmaker.clone(),
                ..config_from("gateway", &profile.gateway_flags())?
            };
            config.settings.token_secret = Some(secret.clone());
            let membership: Arc<dyn Membership> = backends.store.clone();
            let bus = backends.bus.clone();
            let task = tokio::spawn(fogblast_gateway::run(config, membership, bus, listener, on_stop(stop)));
            self.watch(format!("gateway-{i}"), task);
            self.gateways.push(addr);
            self.probes.push((format!("gateway-{i}"), addr));
        }
        Ok(())
    }
}

type Stopped = Pin<Box<dyn Future<Output = ()> + Send>>;

fn on_stop(stop: &watch::Receiver<bool>) -> Stopped {
    let mut stop = stop.clone();
    Box::pin(async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    })
}

/// A service's config read from the profile's flags for it, every other
/// flag at its default.
fn config_from<T: clap::Args + clap::FromArgMatches>(
    service: &'static str,
    flags: &[String],
) -> Result<T, SandboxError> {
    fogblast_runtime::from_flags(flags).map_err(|e| SandboxError::Settings { service, message: e.to_string() })
}

async fn loopback() -> Result<TcpListener, SandboxError> {
    TcpListener::bind("127.0.0.1:0").await.map_err(SandboxError::Bind)
}

fn addr_of(listener: &TcpListener) -> Result<SocketAddr, SandboxError> {
    listener.local_addr().map_err(SandboxError::Bind)
}

/// Distinct per sandbox, so shard ids and secrets never repeat.
fn rand_id() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// A service's task and what it is called in errors.
type Task = (String, JoinHandle<Result<(), String>>);

/// A running in-process cluster; everything stops when it is dropped.
#[derive(Debug)]
pub struct Sandbox {
    stop: watch::Sender<bool>,
    tasks: Vec<Task>,
    gateways: Vec<SocketAddr>,
    /// Every service's HTTP address that answers `/readyz`.
    probes: Vec<(String, SocketAddr)>,
}

impl Sandbox {
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder { topology: Topology::new(Profile::in_process_test()) }
    }

    fn watch<E: std::fmt::Display + Send + 'static>(&mut self, name: String, task: JoinHandle<Result<(), E>>) {
        let task = tokio::spawn(async move {
            match task.await {
                Ok(result) => result.map_err(|e| e.to_string()),
                Err(panicked) => Err(panicked.to_string()),
            }
        });
        self.tasks.push((name, task));
    }

    async fn wait_ready(&mut self) -> Result<(), SandboxError> {
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        for (name, addr) in &self.probes {
            let http = Http::for_addr(*addr).with_timeout(Duration::from_secs(2));
            loop {
                if let Some((service, _)) = self.tasks.iter().find(|(_, task)| task.is_finished()) {
                    return Err(SandboxError::Service {
                        name: service.clone(),
                        message: "stopped while starting".into(),
                    });
                }
                if matches!(http.readyz().await, Ok(answer) if answer.status == 200) {
                    break;
                }
                if tokio::time::Instant::now() > deadline {
                    return Err(SandboxError::NotReady { name: name.clone() });
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Ok(())
    }

    /// Every service still runs, and every shard, gateway, rating service
    /// and matchmaker answers `/healthz`.
    pub async fn check(&self) -> Result<(), SandboxError> {
        if let Some((name, _)) = self.tasks.iter().find(|(_, task)| task.is_finished()) {
            return Err(SandboxError::Service { name: name.clone(), message: "stopped".into() });
        }
        for (name, addr) in &self.probes {
            let health = Http::for_addr(*addr).healthz().await;
            if !matches!(&health, Ok(answer) if answer.status == 200) {
                return Err(SandboxError::Service { name: name.clone(), message: format!("/healthz: {health:?}") });
            }
        }
        Ok(())
    }

    /// Gateway `i`'s address (WebSocket at `/ws`, the HTTP API).
    pub fn gateway(&self, i: usize) -> SocketAddr {
        self.gateways[i]
    }

    pub fn ws_url(&self, i: usize) -> String {
        format!("ws://{}/ws", self.gateways[i])
    }

    /// A new connection to gateway `i`, not yet greeted.
    pub async fn client(&self, i: usize) -> Result<Client, SandboxError> {
        Ok(Client::connect(&self.ws_url(i)).await?)
    }

    /// The HTTP API of gateway `i`.
    pub fn http(&self, i: usize) -> Http {
        Http::for_addr(self.gateways[i])
    }

    /// Stops every service (gateways drain first, as in `fogblast up`) and
    /// reports the first that failed.
    pub async fn stop(mut self) -> Result<(), SandboxError> {
        let _ = self.stop.send(true);
        let mut failed = None;
        for (name, task) in self.tasks.drain(..).rev() {
            let result = task.await.unwrap_or_else(|e| Err(e.to_string()));
            if let (Err(message), None) = (result, &failed) {
                failed = Some(SandboxError::Service { name, message });
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset's flags are flags of the service they are for: what a
    /// process cluster passes on a command line, the service accepts.
    #[test]
    fn every_profile_parses_into_every_service_config() {
        let finished = Profile { finished_ttl_ms: Some(7_200_000), ..Profile::load() };
        let presets =
            [Profile::production(), Profile::fast_test(), Profile::in_process_test(), Profile::chaos(), finished];
        for profile in presets {
            config_from::<EngineConfig>("engine", &profile.engine_flags()).unwrap();
            config_from::<GameConfig>("game shard", &profile.game_flags()).unwrap();
            config_from::<GatewayConfig>("gateway", &profile.gateway_flags()).unwrap();
            config_from::<MatchmakerConfig>("matchmaker", &profile.matchmaker_flags()).unwrap();
            config_from::<RatingConfig>("rating", &profile.rating_flags()).unwrap();
        }
    }

    #[test]
    fn the_in_process_profile_reaches_the_services_settings() {
        let profile = Profile::in_process_test();
        let engine: EngineConfig = config_from("engine", &profile.engine_flags()).unwrap();
        assert_eq!((engine.settings.workers, engine.settings.hash_mb, engine.analysis.analysis_depth), (1, 4, 4));
        assert_eq!(engine.drain_ms, 500);
        let game: GameConfig = config_from("game shard", &profile.game_flags()).unwrap();
        assert_eq!((game.settings.lease_ms, game.settings.sweep_ms, game.drain_ms), (900, 200, 500));
        let gateway: GatewayConfig = config_from("gateway", &profile.gateway_flags()).unwrap();
        assert_eq!((gateway.settings.membership_refresh_ms, gateway.settings.drain_ms), (200, 500));
        let matchmaker: MatchmakerConfig = config_from("matchmaker", &profile.matchmaker_flags()).unwrap();
        let settings = &matchmaker.settings;
        assert_eq!((settings.wave_ms, settings.lobby_publish_ms, matchmaker.drain_ms), (300, 50, 500));
        let rating: RatingConfig = config_from("rating", &profile.rating_flags()).unwrap();
        assert_eq!((rating.drain_ms, rating.settings.ack_wait_ms), (500, RatingConfig::default().settings.ack_wait_ms));
    }

    #[test]
    fn open_limits_lift_the_gateways_per_address_limits() {
        let gateway: GatewayConfig = config_from("gateway", &Profile::load().gateway_flags()).unwrap();
        let limits = &gateway.settings;
        assert_eq!(limits.max_connections_per_ip, 1_000_000);
        assert_eq!(limits.games_per_ip_minute, 1_000_000);
        assert_eq!(limits.http_requests_per_ip_minute, 1_000_000);
        assert_eq!(limits.credits, 1_000_000);
        assert_eq!(limits.drain_ms, 1_000);
    }
}
