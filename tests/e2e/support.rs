//! What every end-to-end test shares: a cluster of real `fogblast`
//! processes (game shards, gateways, engine pools) on loopback, over the
//! real Redis and NATS JetStream under names of the cluster's own; a test
//! client on the client crate that speaks the protocol of
//! `docs/ws-protocol.md` and fails the test on what it did not expect; and
//! lines of play, found with the rules crate, that end the way a test wants.
//!
//! Processes are started on port 0 and their bound addresses read from
//! their first log lines, so parallel tests never race for a port. Each
//! process is killed when its handle drops, also when a test panics, and a
//! failing test prints the last lines each process logged.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use fogblast_client::protocol::{ClientFrame, ColorChoice, Create, Hello, Join, Opponent, TimeControl};
use fogblast_client::tungstenite::Message;
pub use fogblast_client::Closed;
use fogblast_client::Http;
use fogblast_rules::{CastlingMode, Color, Fen, Game, Outcome, Position, Variant, WinReason};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// The binary under test, built by Cargo for this test target.
pub const BIN: &str = env!("CARGO_BIN_EXE_fogblast");

/// How long a test waits for a frame it expects.
pub const WAIT: Duration = Duration::from_secs(10);

/// The gateway's drain time on SIGTERM, as started here.
pub const DRAIN_MS: u64 = 2_000;

pub use fogblast_testkit::{nats_url, redis_url};

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

/// Where one cluster keeps its state: a Redis key prefix, a JetStream stream
/// and a NATS subject prefix no other cluster uses. Stale `test-*` keys and
/// `TEST_*` streams of runs that died are swept by the game service's tests.
#[derive(Clone, Debug)]
pub struct Names {
    pub redis_prefix: String,
    pub stream: String,
    pub subject_prefix: String,
    /// More environment for every process of the cluster (e.g. `OTEL_*`).
    pub env: Vec<(String, String)>,
    /// Removes the keys and the stream when the names are dropped.
    _scratch: Arc<fogblast_testkit::Scratch>,
}

impl Names {
    pub fn new(test: &str) -> Names {
        let scratch = fogblast_testkit::Scratch::new(&format!("e2e-{test}"));
        Names {
            redis_prefix: scratch.redis_prefix.clone(),
            stream: scratch.stream.clone(),
            subject_prefix: scratch.subject_prefix.clone(),
            env: Vec::new(),
            _scratch: Arc::new(scratch),
        }
    }
}

/// One running `fogblast` process; killed (SIGKILL) when dropped.
#[derive(Debug)]
pub struct Proc {
    pub name: String,
    child: Mutex<Child>,
    logs: Arc<Mutex<Vec<String>>>,
    /// The HTTP address: a gateway's public one (WebSocket, API, health),
    /// the admin server of the others.
    pub http: SocketAddr,
    /// The gRPC address of a shard or an engine pool.
    pub grpc: Option<SocketAddr>,
    /// Where `/metrics` is served (a gateway's admin port, the others'
    /// `http`), when the process logged it.
    pub metrics: Option<SocketAddr>,
    /// The path that answers 200 while the process is alive.
    health: &'static str,
}

impl Proc {
    /// Starts `fogblast <args>` and waits until it logged `marker` with its
    /// HTTP address under `key`, then until `ready` answers 200.
    fn start(name: &str, args: &[String], names: &Names, marker: &str, key: &str, ready: &'static str) -> Proc {
        let env = [
            ("REDIS_URL", redis_url()),
            ("FOGBLAST_REDIS_PREFIX", names.redis_prefix.clone()),
            ("NATS_URL", nats_url()),
            ("FOGBLAST_NATS_STREAM", names.stream.clone()),
            ("FOGBLAST_NATS_SUBJECT_PREFIX", names.subject_prefix.clone()),
            ("FOGBLAST_NATS_MAX_BYTES", fogblast_testkit::TEST_STREAM_MAX_BYTES.to_string()),
        ];
        let mut env = env.to_vec();
        env.extend(names.env.iter().map(|(k, v)| (k.as_str(), v.clone())));
        Proc::start_with_env(name, args, &env, marker, key, ready)
    }

    /// `fogblast up` on its embedded stores: no Redis, NATS or Postgres.
    pub fn up(name: &str) -> Proc {
        Proc::up_with(name, &[])
    }

    /// `fogblast up` with exactly `args` after `up`.
    pub fn up_args(name: &str, args: &[&str]) -> Proc {
        let args: Vec<String> = std::iter::once("up").chain(args.iter().copied()).map(String::from).collect();
        Proc::start_with_env(name, &args, &[], "gateway listening", "addr=", "/readyz")
    }

    /// `fogblast up` on its embedded stores, with `extra` flags.
    pub fn up_with(name: &str, extra: &[&str]) -> Proc {
        let mut args: Vec<String> = [
            "up",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            "sqlite::memory:",
            "--live-store",
            ":memory:",
            "--engine-workers",
            "1",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        Proc::start_with_env(name, &args, &[], "gateway listening", "addr=", "/readyz")
    }

    fn start_with_env(
        name: &str,
        args: &[String],
        env: &[(&str, String)],
        marker: &str,
        key: &str,
        ready: &'static str,
    ) -> Proc {
        let mut child = Command::new(BIN)
            .args(args)
            .env_clear()
            .env("RUST_BACKTRACE", "1")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {BIN}: {e}"));
        let logs = Arc::new(Mutex::new(Vec::new()));
        for pipe in [
            child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
            child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let logs = logs.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { return };
                    logs.lock().unwrap().push(line);
                }
            });
        }
        let health = if ready == "/readyz" { "/healthz" } else { ready };
        let unbound: SocketAddr = "0.0.0.0:0".parse().unwrap();
        let mut proc = Proc {
            name: name.to_owned(),
            child: Mutex::new(child),
            logs,
            http: unbound,
            grpc: None,
            metrics: None,
            health,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        let line = loop {
            let found = proc.logs.lock().unwrap().iter().find(|l| l.contains(marker)).cloned();
            if let Some(line) = found {
                break line;
            }
            if !proc.is_running() || Instant::now() > deadline {
                panic!("{name} did not start:\n{}", proc.logs());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let address = |key: &str| field(&line, key).map(|a| a.parse().unwrap_or_else(|e| panic!("{name}: {a}: {e}")));
        proc.http = address(key).unwrap_or_else(|| panic!("{name}: no {key} in {line}"));
        proc.grpc = address("grpc=");
        proc.metrics = address("metrics=");
        while http_get(proc.http, ready).map(|(status, _)| status) != Some(200) {
            if !proc.is_running() || Instant::now() > deadline {
                panic!("{name} did not become ready:\n{}", proc.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        proc
    }

    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap().id()
    }

    pub fn is_running(&self) -> bool {
        matches!(self.child.lock().unwrap().try_wait(), Ok(None))
    }

    /// Dies at once: `kill -9`.
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Asks to stop: SIGTERM.
    pub fn terminate(&self) {
        self.signal("-TERM");
    }

    /// Freezes the process (SIGSTOP): its sockets stay open and nothing
    /// answers, as with a hung or partitioned peer.
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Wakes a frozen process (SIGCONT).
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill").arg(signal).arg(self.pid().to_string()).status().expect("kill runs");
        assert!(status.success(), "kill {signal} {} failed", self.pid());
    }

    /// Waits for the process to exit, up to `limit`.
    pub fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.lock().unwrap().try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn logs(&self) -> String {
        let logs = self.logs.lock().unwrap();
        let skip = logs.len().saturating_sub(60);
        logs[skip..].join("\n")
    }

    /// Running, and `/healthz` answers `ok` (an engine pool: `/metrics` answers).
    pub fn assert_healthy(&self) {
        assert!(self.is_running(), "{} exited:\n{}", self.name, self.logs());
        let health = http_get(self.http, self.health);
        let ok = matches!(&health, Some((200, body)) if self.health != "/healthz" || body.trim() == "ok");
        assert!(ok, "{} {}: {health:?}", self.name, self.health);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("----- last lines of {} -----\n{}", self.name, self.logs());
        }
    }
}

/// The value of `key=value` in a log line (`key` includes the `=`).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace().find_map(|word| word.strip_prefix(key))
}

/// A GET from blocking code (starting processes, polling readiness):
/// the status and the body, `None` when there is no answer.
pub fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let answer = fogblast_client::get_blocking(addr, path, Duration::from_secs(10)).ok()?;
    Some((answer.status, answer.text()))
}

/// `GET /api/games/{id}` on a gateway; `Null` for a body that is not JSON.
pub async fn api_game(gateway: SocketAddr, game: &str) -> (u16, Value) {
    let answer = Http::for_addr(gateway).game(game).await.expect("the gateway answers");
    (answer.status, answer.json().unwrap_or(Value::Null))
}

/// Game shards and gateways sharing one Redis prefix, stream and token
/// secret, and the engine pool their computer seats play through, if any.
#[derive(Debug)]
pub struct Cluster {
    pub names: Names,
    pub secret: String,
    pub engines: Vec<Proc>,
    pub shards: Vec<Proc>,
    pub gateways: Vec<Proc>,
}

impl Cluster {
    pub fn start(test: &str, shards: usize, gateways: usize) -> Cluster {
        Cluster::start_with_engines(test, 0, shards, gateways)
    }

    pub fn start_with_engines(test: &str, engines: usize, shards: usize, gateways: usize) -> Cluster {
        Cluster::start_with_env(test, &[], engines, shards, gateways)
    }

    /// Like `start_with_engines`, every process also getting `env`.
    pub fn start_with_env(test: &str, env: &[(&str, &str)], engines: usize, shards: usize, gateways: usize) -> Cluster {
        let mut names = Names::new(test);
        names.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let secret = format!("e2e-secret-{:032x}", rand::random::<u128>());
        let mut cluster = Cluster { names, secret, engines: Vec::new(), shards: Vec::new(), gateways: Vec::new() };
        for i in 0..engines {
            let engine = cluster.spawn_engine(&format!("engine-{i}"));
            cluster.engines.push(engine);
        }
        for i in 0..shards {
            let shard = cluster.spawn_shard(&format!("shard-{i}"));
            cluster.shards.push(shard);
        }
        for i in 0..gateways {
            let gateway = cluster.spawn_gateway(&format!("gateway-{i}"));
            cluster.gateways.push(gateway);
        }
        cluster
    }

    /// A game shard with short leases, so failover fits a test.
    pub fn spawn_shard(&self, name: &str) -> Proc {
        self.spawn_shard_with_lease(name, 900)
    }

    /// The id `spawn_shard` gives the shard it names `name`.
    pub fn shard_id(&self, name: &str) -> String {
        format!("{}-{name}", self.names.subject_prefix.trim_end_matches('.'))
    }

    /// A game shard holding a membership lease of `lease_ms`.
    pub fn spawn_shard_with_lease(&self, name: &str, lease_ms: u64) -> Proc {
        self.spawn_shard_on(name, lease_ms, "127.0.0.1:0")
    }

    /// A game shard serving `/metrics` on `metrics`: one restarted where
    /// a scraper looks for it, as a pod keeps its address across restarts.
    pub fn spawn_shard_at(&self, name: &str, metrics: SocketAddr) -> Proc {
        self.spawn_shard_on(name, 900, &metrics.to_string())
    }

    fn spawn_shard_on(&self, name: &str, lease_ms: u64, metrics_listen: &str) -> Proc {
        let lease_ms = lease_ms.to_string();
        let args: Vec<String> = [
            "game",
            "--game-listen",
            "127.0.0.1:0",
            "--game-metrics-listen",
            metrics_listen,
            "--lease-ms",
            &lease_ms,
            "--sweep-ms",
            "200",
            "--shard-id",
            &self.shard_id(name),
        ]
        .map(String::from)
        .to_vec();
        let engines: Vec<String> = self.engines.iter().filter_map(|e| e.grpc).map(|a| format!("http://{a}")).collect();
        let args =
            if engines.is_empty() { args } else { [args, vec!["--engine-addrs".into(), engines.join(",")]].concat() };
        Proc::start(name, &args, &self.names, "game shard listening", "metrics=", "/readyz")
    }

    /// An engine pool with one search thread.
    pub fn spawn_engine(&self, name: &str) -> Proc {
        let args: Vec<String> = [
            "engine",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--workers",
            "1",
            "--hash-mb",
            "4",
        ]
        .map(String::from)
        .to_vec();
        Proc::start(name, &args, &self.names, "engine pool listening", "metrics=", "/metrics")
    }

    /// A gateway of this cluster (same token secret), which the caller owns.
    pub fn spawn_gateway(&self, name: &str) -> Proc {
        self.spawn_gateway_with(name, &[])
    }

    /// A rating service of this cluster on `database_url`.
    pub fn spawn_rating(&self, name: &str, database_url: &str) -> Proc {
        let args: Vec<String> = [
            "rating",
            "--rating-listen",
            "127.0.0.1:0",
            "--rating-metrics-listen",
            "127.0.0.1:0",
            "--database-url",
            database_url,
            "--rating-ack-wait-ms",
            "2000",
        ]
        .map(String::from)
        .to_vec();
        Proc::start(name, &args, &self.names, "rating service listening", "metrics=", "/readyz")
    }

    /// `fogblast up` on this cluster's Redis, NATS and names (SQLite in memory).
    pub fn spawn_up(&self, name: &str) -> Proc {
        let args: Vec<String> = [
            "up",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            "sqlite::memory:",
            "--live-store",
            ":memory:",
            "--engine-workers",
            "1",
        ]
        .map(String::from)
        .to_vec();
        Proc::start(name, &args, &self.names, "gateway listening", "addr=", "/readyz")
    }

    /// A matchmaker of this cluster, pairing in waves every 300 ms.
    pub fn spawn_matchmaker(&self, name: &str) -> Proc {
        self.spawn_matchmaker_with(name, &[])
    }

    /// A matchmaker of this cluster with flags of the caller's.
    pub fn spawn_matchmaker_with(&self, name: &str, extra: &[&str]) -> Proc {
        let mut args: Vec<String> = [
            "matchmaker",
            "--matchmaker-listen",
            "127.0.0.1:0",
            "--matchmaker-metrics-listen",
            "127.0.0.1:0",
            "--wave-ms",
            "300",
            "--lobby-publish-ms",
            "50",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        Proc::start(name, &args, &self.names, "matchmaker listening", "metrics=", "/readyz")
    }

    /// The Redis key prefix of this cluster.
    pub fn redis_prefix(&self) -> &str {
        &self.names.redis_prefix
    }

    /// A gateway of this cluster with flags of the caller's.
    pub fn spawn_gateway_with(&self, name: &str, extra: &[&str]) -> Proc {
        let mut args: Vec<String> = [
            "gateway",
            "--gateway-listen",
            "127.0.0.1:0",
            "--gateway-metrics-listen",
            "127.0.0.1:0",
            "--token-secret",
            &self.secret,
            "--membership-refresh-ms",
            "200",
            "--drain-ms",
            &DRAIN_MS.to_string(),
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        Proc::start(name, &args, &self.names, "gateway listening", "addr=", "/readyz")
    }

    pub fn gateway(&self, i: usize) -> SocketAddr {
        self.gateways[i].http
    }

    /// Every process still runs and answers `/healthz`.
    pub fn assert_healthy(&self) {
        for proc in self.engines.iter().chain(&self.shards).chain(&self.gateways) {
            proc.assert_healthy();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for proc in self.gateways.iter().chain(&self.shards).chain(&self.engines) {
            proc.kill();
        }
    }
}

/// One cluster per test binary, shared by the tests that run at the same
/// time; it stops when the last of them lets go.
pub fn shared_cluster(test: &str) -> Arc<Cluster> {
    static SHARED: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cluster) = shared.upgrade() {
        return cluster;
    }
    let cluster = Arc::new(Cluster::start(test, 2, 2));
    *shared = Arc::downgrade(&cluster);
    cluster
}

// ---------------------------------------------------------------------------
// The WebSocket client
// ---------------------------------------------------------------------------

/// A bot on one WebSocket, on the client crate's [`fogblast_client::Client`]:
/// every frame it receives is kept both in `log` (all, in order, as JSON,
/// so tests see fields the types do not know) and in a queue the `expect`
/// calls take from. Anything unexpected fails the test with what came.
pub struct Client {
    pub name: String,
    /// The gateway it is connected to.
    pub gateway: SocketAddr,
    inner: fogblast_client::Client,
    /// How much of the inner client's log is already in `log`.
    seen: usize,
    pub log: Vec<Value>,
    pub player: String,
    pub token: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("name", &self.name).field("player", &self.player).finish_non_exhaustive()
    }
}

pub fn t(frame: &Value) -> &str {
    frame["t"].as_str().unwrap_or("")
}

impl Client {
    pub async fn connect(name: &str, gateway: SocketAddr) -> Client {
        let url = format!("ws://{gateway}/ws");
        let inner = tokio::time::timeout(WAIT, fogblast_client::Client::connect(&url))
            .await
            .unwrap_or_else(|_| panic!("{name}: connecting to {url} timed out"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        Client {
            name: name.to_owned(),
            gateway,
            inner,
            seen: 0,
            log: Vec::new(),
            player: String::new(),
            token: String::new(),
        }
    }

    /// Connects and says hello (with `token`, or as a new player).
    pub async fn join(name: &str, gateway: SocketAddr, token: Option<&str>) -> Client {
        let mut client = Client::connect(name, gateway).await;
        client.hello(token).await;
        client
    }

    /// `hello`; returns the `welcome` and keeps its player and token.
    pub async fn hello(&mut self, token: Option<&str>) -> Value {
        let hello = Hello { token: token.map(str::to_owned), name: Some(self.name.clone()) };
        self.send_frame(ClientFrame::Hello(hello)).await;
        let welcome = self.expect("welcome").await;
        self.player = welcome["player"].as_str().expect("welcome has a player").to_owned();
        self.token = welcome["token"].as_str().expect("welcome has a token").to_owned();
        welcome
    }

    /// Sends a frame the protocol's types describe.
    pub async fn send_frame(&mut self, frame: ClientFrame) {
        let sent = tokio::time::timeout(WAIT, self.inner.send(frame.clone())).await;
        assert!(matches!(sent, Ok(Ok(()))), "{}: could not send {frame:?}", self.name);
    }

    /// Sends a frame written as JSON, as the test spells it.
    pub async fn send(&mut self, frame: Value) {
        let sent = self.send_text(frame.to_string()).await;
        assert!(sent, "{}: could not send {frame}", self.name);
    }

    /// Sends any message; `false` when the connection is gone.
    pub async fn send_message(&mut self, message: Message) -> bool {
        matches!(tokio::time::timeout(WAIT, self.inner.send_message(message)).await, Ok(Ok(())))
    }

    /// Sends every frame in one write; `false` when the connection is gone.
    pub async fn blast(&mut self, frames: impl IntoIterator<Item = String>) -> bool {
        let connection = self.inner.connection();
        for frame in frames {
            if connection.feed_text(frame).await.is_err() {
                return false;
            }
        }
        connection.flush().await.is_ok()
    }

    pub async fn send_text(&mut self, text: impl Into<String>) -> bool {
        matches!(tokio::time::timeout(WAIT, self.inner.send_text(text)).await, Ok(Ok(())))
    }

    /// Copies what the inner client received since the last look into `log`.
    fn catch_up(&mut self) {
        let fresh = &self.inner.log()[self.seen..];
        self.log.extend(fresh.iter().map(|f| f.json().clone()));
        self.seen = self.inner.log().len();
    }

    /// How the connection ended, once it did.
    pub fn closed(&self) -> Option<Closed> {
        self.inner.closed().cloned()
    }

    /// The first queued or arriving frame that `matches`, taken from the
    /// queue (the others stay); `None` after `limit` or when the
    /// connection ended.
    pub async fn find(&mut self, limit: Duration, matches: impl Fn(&Value) -> bool) -> Option<Value> {
        let found = self.inner.find(limit, |f| matches(f.json())).await;
        self.catch_up();
        let found = found.unwrap_or_else(|e| panic!("{}: {e}", self.name));
        found.map(|f| f.json().clone())
    }

    /// Follows the lobby as this client hears it (a whole `lobby`, then
    /// `lobby_update`s with what changed) until the list of open boards
    /// satisfies `done`; `None` if it does not within `limit`.
    pub async fn lobby_until(&mut self, limit: Duration, done: impl Fn(&[Value]) -> bool) -> Option<Vec<Value>> {
        let deadline = Instant::now() + limit;
        let mut open: Vec<Value> = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.find(left, |f| t(f) == "lobby" || t(f) == "lobby_update").await?;
            if t(&frame) == "lobby" {
                open = frame["open"].as_array().cloned().unwrap_or_default();
            } else {
                let removed: Vec<&Value> = frame["removed"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
                open.retain(|b| !removed.contains(&&b["game"]));
                let mut added = frame["added"].as_array().cloned().unwrap_or_default();
                added.append(&mut open);
                open = added;
            }
            if done(&open) {
                return Some(open);
            }
        }
    }

    /// The next frame of type `kind` (others stay queued); fails the test
    /// after [`WAIT`].
    pub async fn expect(&mut self, kind: &str) -> Value {
        self.expect_where(kind, |f| t(f) == kind).await
    }

    pub async fn expect_where(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        match self.find(WAIT, matches).await {
            Some(frame) => frame,
            None => panic!(
                "{}: no {what} within {WAIT:?}; closed: {:?}; received:\n{}",
                self.name,
                self.closed(),
                self.log.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
            ),
        }
    }

    /// The `move` frame of `ply`.
    pub async fn expect_move(&mut self, ply: usize) -> Value {
        self.expect_where(&format!("move of ply {ply}"), |f| t(f) == "move" && f["ply"] == ply).await
    }

    /// The `error` frame answering `id`.
    pub async fn expect_error_for(&mut self, id: &str) -> Value {
        self.expect_where(&format!("error for {id}"), |f| t(f) == "error" && f["id"] == id).await
    }

    /// Everything that arrives within `window`, plus what was queued.
    pub async fn drain(&mut self, window: Duration) -> Vec<Value> {
        let drained = self.inner.drain(window).await;
        self.catch_up();
        let drained = drained.unwrap_or_else(|e| panic!("{}: {e}", self.name));
        drained.iter().map(|f| f.json().clone()).collect()
    }

    /// Sends a ping with `id` and returns every frame that came before its pong.
    pub async fn sync(&mut self, id: &str) -> Vec<Value> {
        let sent = self.inner.send_with_id(ClientFrame::Ping, id).await;
        assert!(sent.is_ok(), "{}: could not send a ping: {sent:?}", self.name);
        self.expect_where(&format!("pong {id}"), |f| t(f) == "pong" && f["id"] == id).await;
        self.inner.take_pending().iter().map(|f| f.json().clone()).collect()
    }

    /// Reads until the connection ends; fails the test after `limit`.
    pub async fn wait_closed(&mut self, limit: Duration) -> Closed {
        let closed = self.inner.wait_closed(limit).await;
        self.catch_up();
        match closed.unwrap_or_else(|e| panic!("{}: {e}", self.name)) {
            Some(closed) => closed,
            None => panic!("{}: still open after {limit:?}", self.name),
        }
    }

    /// Closes the socket cleanly.
    pub async fn close(self) {
        self.inner.close(Duration::from_secs(2)).await;
    }

    /// The highest version among the frames received.
    pub fn last_v(&self) -> u64 {
        self.log.iter().filter_map(|f| f["v"].as_u64()).max().unwrap_or(0)
    }

    /// The `move` frames received, in order.
    pub fn moves(&self) -> Vec<Value> {
        self.log.iter().filter(|f| t(f) == "move").cloned().collect()
    }
}

pub fn move_frame(game: &str, uci: &str, ply: usize) -> Value {
    json!({ "t": "move", "game": game, "uci": uci, "ply": ply })
}

/// `white` creates a game of `variant` as white and `black` joins it by its
/// code; returns the game id once both have its state.
pub async fn start_game(white: &mut Client, black: &mut Client, variant: &str) -> String {
    start_game_with_clock(white, black, variant, None).await
}

/// [`start_game`] with a clock of `clock` = (initial, increment) ms.
pub async fn start_game_with_clock(
    white: &mut Client,
    black: &mut Client,
    variant: &str,
    clock: Option<(u32, u32)>,
) -> String {
    let create = Create {
        variant: serde_json::from_value(json!(variant)).expect("a variant of the protocol"),
        color: ColorChoice::White,
        clock: clock.map(|(initial_ms, increment_ms)| TimeControl { initial_ms, increment_ms }),
        opponent: Opponent::Human,
        level: None,
        rated: None,
        chess960: None,
    };
    white.send_frame(ClientFrame::Create(create)).await;
    let created = white.expect("created").await;
    assert_eq!(created["color"], "white");
    let game = created["game"].as_str().expect("created has a game").to_owned();
    let code = created["code"].as_str().expect("created has a code").to_owned();
    assert_eq!(created["invite"], format!("/g/{code}"));
    let state = white.expect("state").await;
    assert_eq!((state["game"].as_str(), state["you"].as_str()), (Some(game.as_str()), Some("white")));
    black.send_frame(ClientFrame::Join(Join { code: code.clone() })).await;
    let joined = black.expect("joined").await;
    assert_eq!((joined["game"].as_str(), joined["color"].as_str()), (Some(game.as_str()), Some("black")));
    let state = black.expect("state").await;
    assert_eq!((state["status"].as_str(), state["you"].as_str()), (Some("playing"), Some("black")));
    game
}

/// Plays plies `from..to` of `line`: the side to move sends its move and
/// both wait for that ply's `move` frame (the mover's is its acknowledgement).
pub async fn play(white: &mut Client, black: &mut Client, game: &str, line: &[String], from: usize, to: usize) {
    for (ply, uci) in line.iter().enumerate().take(to).skip(from) {
        let (mover, other) = if ply % 2 == 0 { (&mut *white, &mut *black) } else { (&mut *black, &mut *white) };
        mover.send(move_frame(game, uci, ply)).await;
        let ack = mover.expect_move(ply).await;
        assert_eq!(ack["uci"], uci.as_str(), "{}: the acknowledgement of ply {ply}", mover.name);
        other.expect_move(ply).await;
    }
}

// ---------------------------------------------------------------------------
// Lines of play and boards
// ---------------------------------------------------------------------------

/// A line from the starting position that ends by the rules.
#[derive(Clone, Debug)]
pub struct Line {
    pub moves: Vec<String>,
    pub result: &'static str,
    /// The final position's FEN.
    pub fen: String,
}

/// A line of `variant` from its standard start that ends in a win for
/// `reason` after `min..=max` plies: seeded random playouts that never end
/// the game early and take the winning move once the line is long enough.
pub fn find_line(variant: Variant, reason: WinReason, min: usize, max: usize) -> Line {
    let mut rng = StdRng::seed_from_u64(0xf06b_1a57 ^ ((min as u64) << 16) ^ max as u64);
    for _ in 0..5_000 {
        let mut game = Game::new(Position::new(variant));
        while game.ply() < max {
            let mut quiet = Vec::new();
            let mut winning = None;
            for m in game.position().legal_moves() {
                let mut next = game.clone();
                next.play(m).expect("legal moves play");
                match next.outcome() {
                    None => quiet.push(next),
                    Some(Outcome::Decisive { reason: r, .. }) if r == reason => winning = Some(next),
                    Some(_) => {}
                }
            }
            if let Some(won) = winning.filter(|g| g.ply() >= min) {
                let outcome = won.outcome().expect("won");
                return Line {
                    moves: won.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect(),
                    result: outcome.result_str(),
                    fen: Fen::from_position(won.position()).to_string(),
                };
            }
            if quiet.is_empty() {
                break;
            }
            let i = rng.random_range(0..quiet.len());
            game = quiet.swap_remove(i);
        }
    }
    panic!("no line of {variant:?} to {reason:?} in {min}..={max} plies");
}

/// The positions along `line`: after 0, 1, … plies.
pub fn positions(variant: Variant, line: &[String]) -> Vec<Position> {
    let mut game = Game::new(Position::new(variant));
    let mut out = vec![*game.position()];
    for uci in line {
        game.play_uci(uci).unwrap_or_else(|e| panic!("{uci}: {e:?}"));
        out.push(*game.position());
    }
    out
}

/// The pieces a FEN's board shows, by square name.
pub fn pieces(fen: &str) -> BTreeMap<String, char> {
    let board = fen.split_whitespace().next().unwrap_or("");
    let mut out = BTreeMap::new();
    for (row, rank) in board.split('/').enumerate() {
        let mut file = 0u8;
        for c in rank.chars() {
            if let Some(skip) = c.to_digit(10) {
                file += skip as u8;
            } else {
                out.insert(format!("{}{}", (b'a' + file) as char, 8 - row), c);
                file += 1;
            }
        }
    }
    out
}

/// What `color` is shown of `position` in fog of war: its pieces and the
/// visible squares, by name.
pub fn fog_view(position: &Position, color: Color) -> (BTreeMap<String, char>, Vec<String>) {
    let view = position.fog_view(color);
    let visible: Vec<String> = view.visible.into_iter().map(|sq| sq.to_string()).collect();
    let shown =
        view.visible.into_iter().filter_map(|sq| view.board.piece_at(sq).map(|p| (sq.to_string(), p.char()))).collect();
    (shown, visible)
}

/// The strings of a JSON array.
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("<not a string>").to_owned()).collect())
        .unwrap_or_default()
}
