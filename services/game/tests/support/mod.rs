//! A game cluster for tests: real shards on real sockets, each on its own
//! runtime and thread so that killing one (dropping its runtime) takes
//! every task it had with it and leaves its lease to expire, as a crashed
//! process would. The store and bus are real Redis and NATS JetStream
//! (a key prefix, stream and subject prefix of the test's own), or the
//! in-process adapters. A routing client finds each game's owner from the
//! same membership the shards use and follows `NOT_OWNER` answers.

#![allow(dead_code)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_bus::{EventBus, MemoryBus, NatsBus, NatsConfig};
use fogblast_game_service::{Drills, GameConfig, GameSettings};
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    watch_event, ColorChoice, Command, CommandResult, CreateGameRequest, CreateGameResponse, GameState,
    GetStateRequest, JoinGameRequest, JoinGameResponse, Move, Variant, WatchEvent, WatchRequest,
};
use fogblast_proto::ids::GameId;
use fogblast_store::{placement, GameStore, MemoryStore, RedisStore};
use tokio::sync::oneshot;
use tonic::transport::Channel;

use fogblast_testkit::Scratch;
pub use fogblast_testkit::{nats_url, redis_url};

/// Where a cluster keeps its games and sends its events.
#[derive(Debug)]
pub enum Backend {
    /// Real Redis and NATS, isolated by the test's own names, which are
    /// removed when the last clone of the backend is dropped, or at once
    /// when the test's own backend is dropped while a failing test unwinds
    /// (the shards' clones may outlive it then).
    Distributed { scratch: Arc<Scratch>, owner: bool, nats_url: String },
    /// The in-process adapters, shared by every shard of the cluster.
    Embedded { store: Arc<MemoryStore>, bus: Arc<MemoryBus> },
}

impl Clone for Backend {
    fn clone(&self) -> Backend {
        match self {
            Backend::Distributed { scratch, nats_url, .. } => {
                Backend::Distributed { scratch: scratch.clone(), owner: false, nats_url: nats_url.clone() }
            }
            Backend::Embedded { store, bus } => Backend::Embedded { store: store.clone(), bus: bus.clone() },
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Backend::Distributed { scratch, owner: true, .. } = self {
            if std::thread::panicking() {
                scratch.remove();
            }
        }
    }
}

impl Backend {
    pub fn distributed(test: &str) -> Backend {
        Backend::distributed_on(test, &nats_url())
    }

    /// [`Backend::distributed`], with the NATS server at `nats_url` (one the
    /// test started, to stop it).
    pub fn distributed_on(test: &str, nats_url: &str) -> Backend {
        Backend::Distributed { scratch: Arc::new(Scratch::new(test)), owner: true, nats_url: nats_url.to_owned() }
    }

    pub fn embedded() -> Backend {
        Backend::Embedded { store: Arc::new(MemoryStore::new()), bus: Arc::new(MemoryBus::new()) }
    }

    pub async fn store(&self) -> Arc<dyn GameStore> {
        match self {
            Backend::Distributed { scratch, .. } => {
                Arc::new(RedisStore::connect(&redis_url(), &scratch.redis_prefix).await.expect("redis is running"))
            }
            Backend::Embedded { store, .. } => store.clone(),
        }
    }

    pub fn nats_config(&self) -> NatsConfig {
        let Backend::Distributed { scratch, nats_url, .. } = self else { panic!("only distributed clusters use NATS") };
        NatsConfig {
            url: nats_url.clone(),
            stream: scratch.stream.clone(),
            subject_prefix: scratch.subject_prefix.clone(),
            max_bytes: fogblast_testkit::TEST_STREAM_MAX_BYTES,
            ..NatsConfig::default()
        }
    }

    pub async fn bus(&self) -> Arc<dyn EventBus> {
        match self {
            Backend::Distributed { .. } => {
                Arc::new(NatsBus::connect(self.nats_config()).await.expect("nats is running"))
            }
            Backend::Embedded { bus, .. } => bus.clone(),
        }
    }
}

/// Short timeouts so that failover happens within a test's patience.
pub fn test_config() -> GameConfig {
    GameConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        metrics_listen: "127.0.0.1:0".parse().unwrap(),
        settings: GameSettings { lease_ms: 900, sweep_ms: 200, ..GameSettings::default() },
        ..GameConfig::default()
    }
}

/// One shard, as if it were its own process.
pub struct ShardProcess {
    pub id: String,
    pub addr: String,
    pub drills: Drills,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<oneshot::Sender<()>>,
    done: Option<std::sync::mpsc::Receiver<()>>,
}

impl ShardProcess {
    pub async fn start(backend: &Backend, id: &str, config: GameConfig) -> ShardProcess {
        ShardProcess::start_on(backend, id, config, None).await
    }

    /// Starts a shard whose store keeps `history` events per game, or the
    /// store's default for `None`.
    async fn start_on(backend: &Backend, id: &str, config: GameConfig, history: Option<usize>) -> ShardProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let drills = Drills::default();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (addr_tx, addr_rx) = oneshot::channel::<String>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let config = GameConfig { shard_id: Some(id.to_owned()), ..config };
        let backend_for_shard = backend.clone();
        let drills_for_shard = drills.clone();
        runtime.spawn(async move {
            let store = match history {
                Some(history) => backend_for_shard.store_with_history(history).await,
                None => backend_for_shard.store().await,
            };
            let bus = backend_for_shard.bus().await;
            let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let _ = addr_tx.send(format!("http://{}", grpc.local_addr().unwrap()));
            let shutdown = async move {
                let _ = stop_rx.await;
            };
            let result =
                fogblast_game_service::run_with_drills(config, store, bus, grpc, http, shutdown, drills_for_shard)
                    .await;
            if let Err(error) = result {
                eprintln!("shard stopped with an error: {error}");
            }
            let _ = done_tx.send(());
        });
        let addr = addr_rx.await.unwrap();
        let shard = ShardProcess {
            id: id.to_owned(),
            addr,
            drills,
            runtime: Some(runtime),
            stop: Some(stop_tx),
            done: Some(done_rx),
        };
        let store = backend.store().await;
        eventually(Duration::from_secs(5), || async {
            store.members().await.unwrap().iter().any(|m| m.shard.as_str() == id)
        })
        .await;
        shard
    }

    /// Dies at once, without giving up its lease: a `kill -9`.
    pub fn kill(mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }

    /// Shuts down as on SIGTERM and waits for it.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let done = self.done.take().unwrap();
        tokio::task::spawn_blocking(move || done.recv_timeout(Duration::from_secs(10))).await.unwrap().ok();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }

    /// Stops (or resumes) reading membership, so the shard's view goes stale.
    pub fn freeze_view(&self, frozen: bool) {
        self.drills.view_frozen.store(frozen, Ordering::Relaxed);
    }

    /// Stops (or resumes) renewing the lease, as a paused process would.
    pub fn pause_heartbeat(&self, paused: bool) {
        self.drills.heartbeat_paused.store(paused, Ordering::Relaxed);
    }
}

impl Drop for ShardProcess {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            shut_down(runtime);
        }
    }
}

/// Stops a runtime and waits (up to 2 s) until none of its tasks runs any
/// more, so nothing it holds writes after the test's names are removed.
/// The wait happens on a thread of its own: a runtime cannot be waited for
/// from inside another.
fn shut_down(runtime: tokio::runtime::Runtime) {
    let _ = std::thread::spawn(move || runtime.shutdown_timeout(Duration::from_secs(2))).join();
}

/// Waits until `check` holds, polling; fails the test after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "condition not met within {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A gateway's view of the cluster: calls the owner of each game.
pub struct Router {
    pub store: Arc<dyn GameStore>,
    channels: Mutex<HashMap<String, GameClient<Channel>>>,
}

impl Router {
    pub async fn new(backend: &Backend) -> Router {
        Router { store: backend.store().await, channels: Mutex::default() }
    }

    pub fn client(&self, addr: &str) -> GameClient<Channel> {
        let mut channels = self.channels.lock().unwrap();
        channels
            .entry(addr.to_owned())
            .or_insert_with(|| GameClient::new(Channel::from_shared(addr.to_owned()).unwrap().connect_lazy()))
            .clone()
    }

    pub async fn owner_addr(&self, game: &GameId) -> Option<String> {
        let members = self.store.members().await.ok()?;
        placement::owner(game, &members).map(|m| m.addr.clone())
    }

    pub async fn any_addr(&self) -> String {
        let members = self.store.members().await.unwrap();
        members.first().expect("a live shard").addr.clone()
    }

    /// Calls `call` on the owner of `game`, following redirects and waiting
    /// out failovers for up to 10 s, as a gateway does.
    pub async fn on_owner<T, F, Fut>(&self, game: &str, mut call: F) -> Result<T, ServiceError>
    where
        F: FnMut(GameClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let game_id = GameId::parse(game).unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut addr = self.owner_addr(&game_id).await;
        loop {
            let target = match addr.take() {
                Some(addr) => addr,
                None => self.owner_addr(&game_id).await.unwrap_or_default(),
            };
            let result = if target.is_empty() {
                Err(ServiceError::new(ErrorCode::Unavailable, "no live shard"))
            } else {
                call(self.client(&target))
                    .await
                    .map(tonic::Response::into_inner)
                    .map_err(|s| ServiceError::from_status(&s))
            };
            match result {
                Err(error)
                    if matches!(error.code, ErrorCode::NotOwner | ErrorCode::Unavailable)
                        && tokio::time::Instant::now() < deadline =>
                {
                    addr = error.owner.filter(|owner| *owner != target);
                    if addr.is_none() {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                other => return other,
            }
        }
    }

    pub async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        let addr = self.any_addr().await;
        self.client(&addr).create_game(request).await.map(|r| r.into_inner()).map_err(|s| ServiceError::from_status(&s))
    }

    /// Creates a game by `creator` and seats `joiner`; returns the game id
    /// and the creator's colour.
    pub async fn start_game(
        &self,
        variant: Variant,
        creator: &str,
        joiner: &str,
        clock: Option<(u32, u32)>,
    ) -> (String, bool) {
        let created = self
            .create(CreateGameRequest {
                player_id: creator.to_owned(),
                player_name: creator.to_owned(),
                variant: variant as i32,
                color: ColorChoice::ChooseWhite as i32,
                clock: clock
                    .map(|(initial_ms, increment_ms)| fogblast_proto::game::ClockSettings { initial_ms, increment_ms }),
                ..Default::default()
            })
            .await
            .unwrap();
        self.join(&created.code, joiner).await.unwrap();
        (created.game_id, true)
    }

    pub async fn join(&self, code: &str, player: &str) -> Result<JoinGameResponse, ServiceError> {
        let request = JoinGameRequest {
            player_id: player.to_owned(),
            player_name: player.to_owned(),
            code: code.to_owned(),
            ..Default::default()
        };
        // Any shard resolves the code; the owner seats the player.
        let addr = self.any_addr().await;
        let first = self.client(&addr).join_game(request.clone()).await;
        match first {
            Ok(response) => Ok(response.into_inner()),
            Err(status) => {
                let error = ServiceError::from_status(&status);
                let Some(owner) = error.owner.clone() else { return Err(error) };
                self.client(&owner)
                    .join_game(request)
                    .await
                    .map(|r| r.into_inner())
                    .map_err(|s| ServiceError::from_status(&s))
            }
        }
    }

    pub async fn make_move(&self, game: &str, player: &str, uci: &str, ply: u32) -> Result<u64, ServiceError> {
        self.execute(move_command(game, player, uci, ply)).await.map(|r| r.version)
    }

    /// Sends `command` to its game's owner, following redirects as
    /// [`Router::on_owner`] does.
    pub async fn execute(&self, command: Command) -> Result<CommandResult, ServiceError> {
        let game = command.game_id.clone();
        self.on_owner(&game, |mut client| {
            let command = command.clone();
            async move { client.execute(command).await }
        })
        .await
    }

    pub async fn state(&self, game: &str, player: &str) -> GameState {
        let request = GetStateRequest { game_id: game.to_owned(), player_id: player.to_owned() };
        self.on_owner(game, |mut client| {
            let request = request.clone();
            async move { client.get_state(request).await }
        })
        .await
        .unwrap()
    }

    /// Every event after `after` (heartbeats aside), until `count` arrived
    /// or `limit` passed.
    pub async fn watch_events(&self, game: &str, after: u64, count: usize, limit: Duration) -> Vec<WatchEvent> {
        let addr = self.owner_addr(&GameId::parse(game).unwrap()).await.unwrap();
        let request = WatchRequest { game_id: game.to_owned(), after_version: after };
        let mut stream = self.client(&addr).watch(request).await.unwrap().into_inner();
        let mut events = Vec::new();
        let _ = tokio::time::timeout(limit, async {
            while events.len() < count {
                match stream.message().await {
                    Ok(Some(event)) if matches!(event.kind, Some(watch_event::Kind::Heartbeat(_))) => {}
                    Ok(Some(event)) => events.push(event),
                    _ => break,
                }
            }
        })
        .await;
        events
    }
}

/// `player`'s move `uci` at `ply` in `game`, with no lag, no wait and no
/// request id.
pub fn move_command(game: &str, player: &str, uci: &str, ply: u32) -> Command {
    let action = Action::Move(Move { uci: uci.to_owned(), ply, lag_ms: 0, waited_ms: 0 });
    Command::new(game, player, action)
}

/// Settings the computer tests add to a shard's configuration.
pub trait GameConfigExt {
    fn with_engines(self, engines: Vec<String>) -> GameConfig;
}

impl GameConfigExt for GameConfig {
    fn with_engines(self, engine_addrs: Vec<String>) -> GameConfig {
        GameConfig { engine_addrs, ..self }
    }
}

// ---------------------------------------------------------------------------
// Added for tests/ownership.rs: shards whose store keeps a short event
// history, so a watcher that resumes from further back than the history
// reaches gets a snapshot.
// ---------------------------------------------------------------------------

impl Backend {
    /// The Redis store keeping only the last `history` events of each game.
    pub async fn store_with_history(&self, history: usize) -> Arc<dyn GameStore> {
        let Backend::Distributed { scratch, .. } = self else {
            panic!("only distributed clusters have a history setting")
        };
        let store = RedisStore::connect(&redis_url(), &scratch.redis_prefix).await.expect("redis is running");
        Arc::new(store.with_history(history))
    }
}

impl ShardProcess {
    /// [`ShardProcess::start`], with a store that keeps only the last
    /// `history` events of each game.
    pub async fn start_with_history(backend: &Backend, id: &str, config: GameConfig, history: usize) -> ShardProcess {
        ShardProcess::start_on(backend, id, config, Some(history)).await
    }
}
