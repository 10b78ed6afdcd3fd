//! A matchmaking cluster for tests: a real game shard and two matchmaker
//! replicas, each on its own runtime and thread as if each were its own
//! process, over real Redis and NATS JetStream isolated by a key prefix, a
//! stream and a subject prefix of the test's own (removed at the end).
//! Tests talk to the replicas over gRPC, listen on the bus as gateways do,
//! and read the games the shard made straight from Redis.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_bus::{EventBus, NatsBus, NatsConfig};
use fogblast_game_service::GameConfig;
use fogblast_matchmaker::{MatchStore, MatchmakerConfig, MatchmakerSettings, ShardRouter};
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::matchmaker::matchmaker_client::MatchmakerClient;
use fogblast_proto::notices::{
    player_notice, LobbyChanged, Paired, PlayerNotice, LOBBY_SUBJECT, PLAYER_SUBJECT_PREFIX,
};
use fogblast_proto::record::GameRecord;
use fogblast_store::{GameStore, Membership, RedisStore};
use futures::StreamExt;
use prost::Message as _;
use tokio::sync::oneshot;
use tonic::transport::Channel;

use fogblast_testkit::Scratch;
pub use fogblast_testkit::{nats_url, redis_url};

/// Where one test's cluster keeps things: names of its own, removed when
/// the last clone of the backend is dropped, or at once when the test's own
/// backend is dropped while a failing test unwinds (the processes' clones
/// may outlive it then).
#[derive(Debug)]
pub struct Backend {
    /// Redis key prefix, with its trailing `:`.
    pub prefix: String,
    pub nats: NatsConfig,
    scratch: Arc<Scratch>,
    owner: bool,
}

impl Clone for Backend {
    fn clone(&self) -> Backend {
        Backend { prefix: self.prefix.clone(), nats: self.nats.clone(), scratch: self.scratch.clone(), owner: false }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if self.owner && std::thread::panicking() {
            self.scratch.remove();
        }
    }
}

impl Backend {
    pub fn new(tag: &str) -> Backend {
        let scratch = Scratch::new(&format!("mm-{}", tag.replace('_', "-")));
        Backend {
            prefix: scratch.redis_prefix.clone(),
            nats: NatsConfig {
                url: nats_url(),
                stream: scratch.stream.clone(),
                subject_prefix: scratch.subject_prefix.clone(),
                max_bytes: fogblast_testkit::TEST_STREAM_MAX_BYTES,
                ..NatsConfig::default()
            },
            scratch: Arc::new(scratch),
            owner: true,
        }
    }

    pub async fn game_store(&self) -> Arc<dyn GameStore> {
        Arc::new(RedisStore::connect(&redis_url(), &self.prefix).await.expect("redis is running"))
    }

    pub async fn match_store(&self) -> MatchStore {
        MatchStore::connect(&redis_url(), &self.prefix).await.expect("redis is running")
    }

    pub async fn bus(&self) -> Arc<dyn EventBus> {
        Arc::new(NatsBus::connect(self.nats.clone()).await.expect("nats is running"))
    }

    /// Every game the shards made: id, white player, black player.
    pub async fn games(&self) -> Vec<(String, String, String)> {
        let client = redis::Client::open(redis_url()).unwrap();
        let mut connection = client.get_multiplexed_async_connection().await.unwrap();
        let mut games = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{}game:*", self.prefix))
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut connection)
                .await
                .unwrap();
            for key in keys {
                let raw: Vec<u8> =
                    redis::cmd("HGET").arg(&key).arg("record").query_async(&mut connection).await.unwrap();
                let record = GameRecord::decode(raw.as_slice()).unwrap();
                let seat = |s: &Option<fogblast_proto::record::Seat>| {
                    s.as_ref().and_then(|s| s.player.as_ref()).map(|p| p.id.clone()).unwrap_or_default()
                };
                games.push((record.game_id.clone(), seat(&record.white), seat(&record.black)));
            }
            if next == 0 {
                return games;
            }
            cursor = next;
        }
    }
}

/// A service on its own runtime and thread, as if it were its own process.
pub struct Process {
    pub addr: String,
    pub metrics_addr: String,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<oneshot::Sender<()>>,
    done: Option<std::sync::mpsc::Receiver<()>>,
}

impl Process {
    /// A game shard on the backend's Redis and NATS.
    pub async fn game_shard(backend: &Backend, id: &str) -> Process {
        let config = GameConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            metrics_listen: "127.0.0.1:0".parse().unwrap(),
            shard_id: Some(id.to_owned()),
            settings: fogblast_game_service::GameSettings { lease_ms: 2_000, sweep_ms: 500, ..Default::default() },
            ..GameConfig::default()
        };
        let backend_for_shard = backend.clone();
        let process = Process::spawn(move |grpc, http, shutdown| async move {
            let store = backend_for_shard.game_store().await;
            let bus = backend_for_shard.bus().await;
            if let Err(error) = fogblast_game_service::run(config, store, bus, grpc, http, shutdown).await {
                eprintln!("game shard stopped with an error: {error}");
            }
        })
        .await;
        let store = backend.game_store().await;
        eventually(Duration::from_secs(5), || async {
            store.members().await.unwrap().iter().any(|m| m.shard.as_str() == id)
        })
        .await;
        process
    }

    /// A matchmaker replica on the backend's Redis and NATS, finding game
    /// shards through the Redis membership.
    pub async fn matchmaker(backend: &Backend, id: &str, config: MatchmakerConfig) -> Process {
        let config = MatchmakerConfig { replica_id: Some(id.to_owned()), ..config };
        let backend = backend.clone();
        Process::spawn(move |grpc, http, shutdown| async move {
            let store = backend.match_store().await;
            let membership: Arc<dyn Membership> = backend.game_store().await;
            let games = ShardRouter::new(membership, config.settings.route_timeout()).await;
            let bus = backend.bus().await;
            if let Err(error) = fogblast_matchmaker::run(config, store, bus, games, grpc, http, shutdown).await {
                eprintln!("matchmaker stopped with an error: {error}");
            }
        })
        .await
    }

    async fn spawn<F, Fut>(serve: F) -> Process
    where
        F: FnOnce(tokio::net::TcpListener, tokio::net::TcpListener, futures::future::BoxFuture<'static, ()>) -> Fut
            + Send
            + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (addr_tx, addr_rx) = oneshot::channel::<(String, String)>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let _ = addr_tx
                .send((format!("http://{}", grpc.local_addr().unwrap()), http.local_addr().unwrap().to_string()));
            let shutdown = Box::pin(async move {
                let _ = stop_rx.await;
            });
            serve(grpc, http, shutdown).await;
            let _ = done_tx.send(());
        });
        let (addr, metrics_addr) = addr_rx.await.unwrap();
        Process { addr, metrics_addr, runtime: Some(runtime), stop: Some(stop_tx), done: Some(done_rx) }
    }

    /// Shuts down as on SIGTERM and waits for it.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(done) = self.done.take() {
            let _ = tokio::task::spawn_blocking(move || done.recv_timeout(Duration::from_secs(10))).await;
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }

    pub async fn client(&self) -> MatchmakerClient<Channel> {
        MatchmakerClient::new(Channel::from_shared(self.addr.clone()).unwrap().connect_lazy())
    }

    pub async fn game_client(&self) -> GameClient<Channel> {
        GameClient::new(Channel::from_shared(self.addr.clone()).unwrap().connect_lazy())
    }

    /// The Prometheus text of the process's `/metrics`.
    pub async fn metrics(&self) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(&self.metrics_addr).await.unwrap();
        let request = format!("GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.metrics_addr);
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut body = String::new();
        stream.read_to_string(&mut body).await.unwrap();
        body
    }

    /// One metric's value (summed over its labels).
    pub async fn metric(&self, name: &str) -> f64 {
        self.metrics()
            .await
            .lines()
            .filter(|line| line.starts_with(name) && !line.starts_with('#'))
            .filter(|line| line[name.len()..].starts_with([' ', '{']))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

impl Drop for Process {
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

/// Settings that make waves quick, for tests.
pub fn quick_config() -> MatchmakerConfig {
    MatchmakerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        metrics_listen: "127.0.0.1:0".parse().unwrap(),
        settings: MatchmakerSettings {
            lease_ms: 1_500,
            tick_ms: 20,
            wave_ms: 200,
            wave_players: 16,
            lobby_publish_ms: 20,
            ..MatchmakerSettings::default()
        },
        ..MatchmakerConfig::default()
    }
}

/// [`quick_config`] with some settings changed.
pub fn quick_config_with(change: impl FnOnce(&mut MatchmakerSettings)) -> MatchmakerConfig {
    let mut config = quick_config();
    change(&mut config.settings);
    config
}

/// Waits until `check` holds, polling; fails the test after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "condition not met within {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A notice as a gateway decodes it: a player's on `player.<id>`, the
/// lobby's on `lobby`.
#[derive(Clone, Debug)]
pub enum Notice {
    Player(player_notice::Notice),
    Lobby(LobbyChanged),
}

/// A notice heard on the bus, with when it arrived.
#[derive(Clone, Debug)]
pub struct Heard {
    pub subject: String,
    pub notice: Notice,
    pub at: tokio::time::Instant,
}

impl Heard {
    pub fn paired(&self) -> Option<&Paired> {
        match &self.notice {
            Notice::Player(player_notice::Notice::Paired(paired)) => Some(paired),
            _ => None,
        }
    }

    pub fn lobby(&self) -> Option<&LobbyChanged> {
        match &self.notice {
            Notice::Lobby(lobby) => Some(lobby),
            _ => None,
        }
    }

    /// The player it was addressed to, if any.
    pub fn player(&self) -> Option<&str> {
        self.subject.strip_prefix(PLAYER_SUBJECT_PREFIX)
    }
}

/// Reads a message as a gateway would; anything that does not decode as
/// its subject's notice is a failure of the publisher.
fn decode(subject: &str, payload: &[u8]) -> Notice {
    if subject == LOBBY_SUBJECT {
        Notice::Lobby(LobbyChanged::decode(payload).expect("a lobby notice"))
    } else {
        let notice = PlayerNotice::decode(payload).expect("a player notice");
        Notice::Player(notice.notice.expect("a player notice says something"))
    }
}

/// Listens on bus subjects as a gateway would, keeping everything heard.
#[derive(Clone, Debug, Default)]
pub struct Ear {
    pub heard: Arc<Mutex<Vec<Heard>>>,
}

impl Ear {
    pub async fn listen(bus: &Arc<dyn EventBus>, subjects: &[&str]) -> Ear {
        let ear = Ear::default();
        for subject in subjects {
            let mut stream = bus.subscribe(subject).await.unwrap();
            let heard = ear.heard.clone();
            tokio::spawn(async move {
                while let Some(message) = stream.next().await {
                    let notice = decode(&message.subject, &message.payload);
                    heard.lock().unwrap().push(Heard {
                        subject: message.subject,
                        notice,
                        at: tokio::time::Instant::now(),
                    });
                }
            });
        }
        ear
    }

    pub fn all(&self) -> Vec<Heard> {
        self.heard.lock().unwrap().clone()
    }

    /// `Paired` notices by player.
    pub fn paired(&self) -> HashMap<String, Vec<Heard>> {
        let mut by_player: HashMap<String, Vec<Heard>> = HashMap::new();
        for heard in self.all() {
            if heard.paired().is_some() {
                let player = heard.player().unwrap_or(&heard.subject).to_owned();
                by_player.entry(player).or_default().push(heard);
            }
        }
        by_player
    }

    pub fn paired_count(&self) -> usize {
        self.all().iter().filter(|h| h.paired().is_some()).count()
    }

    /// Every lobby notice heard, in arrival order.
    pub fn lobbies(&self) -> Vec<LobbyChanged> {
        self.all().iter().filter_map(|h| h.lobby().cloned()).collect()
    }
}
