//! A cluster of real `fogblast` processes on loopback.
//!
//! Processes are started on port 0 and their bound addresses read from
//! their first log lines, so parallel tests never race for a port. Each
//! process is killed when its handle drops, also when a test panics, and a
//! failing test prints the last lines each process logged.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use fogblast_client::Http;
use fogblast_topology::{NatsStream, Profile, SharedBackends, Topology};
use serde_json::Value;

use super::{nats_url, redis_url};

/// The binary under test, built by Cargo for this test target.
pub const BIN: &str = env!("CARGO_BIN_EXE_fogblast");

/// What the processes started here are tuned for: short leases, sweeps
/// and waves, so failover and pairing fit a test.
pub const PROFILE: Profile = Profile::fast_test();

/// The gateway's drain time on SIGTERM, as started here.
pub const DRAIN_MS: u64 = PROFILE.gateway_drain_ms.expect("the test profile sets a gateway drain");

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
    /// The test's Redis and NATS under these names, as every process gets them.
    pub fn backends(&self) -> SharedBackends {
        let nats = NatsStream {
            url: nats_url(),
            stream: self.stream.clone(),
            subject_prefix: self.subject_prefix.clone(),
            max_bytes: fogblast_testkit::TEST_STREAM_MAX_BYTES,
        };
        SharedBackends { redis_url: redis_url(), redis_prefix: self.redis_prefix.clone(), nats: Some(nats) }
    }

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
        let mut env = names.backends().env();
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
        let mut args = up_in_memory();
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

/// `fogblast up` on port 0 keeping nothing on disk (SQLite in memory, live
/// games in memory unless `REDIS_URL` is set), its engine pool the test
/// profile's: the services' other settings stay production's, as a
/// newcomer's `fogblast up` runs them.
fn up_in_memory() -> Vec<String> {
    let args = ["up", "--listen=127.0.0.1:0", "--database-url=sqlite::memory:", "--live-store=:memory:"];
    args.map(String::from).into_iter().chain(PROFILE.engine_flags()).collect()
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
/// secret, and the engine pool their computer seats play through, if any;
/// every process is started with [`PROFILE`]'s flags for its service.
#[derive(Debug)]
pub struct Cluster {
    pub names: Names,
    pub secret: String,
    profile: Profile,
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
        let topology = Topology { engines, shards, gateways, ..Topology::new(PROFILE) };
        Cluster::start_topology(test, env, &topology)
    }

    /// The engine pools, shards and gateways of `topology`, on its profile;
    /// a test starts the matchmakers and the rating service it wants itself.
    fn start_topology(test: &str, env: &[(&str, &str)], topology: &Topology) -> Cluster {
        let mut names = Names::new(test);
        names.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let secret = format!("e2e-secret-{:032x}", rand::random::<u128>());
        let (engines, shards, gateways) = (Vec::new(), Vec::new(), Vec::new());
        let mut cluster = Cluster { names, secret, profile: topology.profile, engines, shards, gateways };
        for i in 0..topology.engines {
            let engine = cluster.spawn_engine(&format!("engine-{i}"));
            cluster.engines.push(engine);
        }
        for i in 0..topology.shards {
            let shard = cluster.spawn_shard(&format!("shard-{i}"));
            cluster.shards.push(shard);
        }
        for i in 0..topology.gateways {
            let gateway = cluster.spawn_gateway(&format!("gateway-{i}"));
            cluster.gateways.push(gateway);
        }
        cluster
    }

    /// A game shard with the profile's short lease, so failover fits a test.
    pub fn spawn_shard(&self, name: &str) -> Proc {
        self.spawn_shard_on(name, self.profile, "127.0.0.1:0")
    }

    /// The id `spawn_shard` gives the shard it names `name`.
    pub fn shard_id(&self, name: &str) -> String {
        format!("{}-{name}", self.names.subject_prefix.trim_end_matches('.'))
    }

    /// A game shard holding a membership lease of `lease_ms`.
    pub fn spawn_shard_with_lease(&self, name: &str, lease_ms: u64) -> Proc {
        self.spawn_shard_on(name, Profile { lease_ms: Some(lease_ms), ..self.profile }, "127.0.0.1:0")
    }

    /// A game shard serving `/metrics` on `metrics`: one restarted where
    /// a scraper looks for it, as a pod keeps its address across restarts.
    pub fn spawn_shard_at(&self, name: &str, metrics: SocketAddr) -> Proc {
        self.spawn_shard_on(name, self.profile, &metrics.to_string())
    }

    fn spawn_shard_on(&self, name: &str, profile: Profile, metrics_listen: &str) -> Proc {
        let args = ["game", "--game-listen", "127.0.0.1:0", "--game-metrics-listen", metrics_listen];
        let shard_id = format!("--shard-id={}", self.shard_id(name));
        let args: Vec<String> =
            args.map(String::from).into_iter().chain(profile.game_flags()).chain([shard_id]).collect();
        let engines: Vec<String> = self.engines.iter().filter_map(|e| e.grpc).map(|a| format!("http://{a}")).collect();
        let args =
            if engines.is_empty() { args } else { [args, vec!["--engine-addrs".into(), engines.join(",")]].concat() };
        Proc::start(name, &args, &self.names, "game shard listening", "metrics=", "/readyz")
    }

    /// An engine pool of the profile's size (one search thread).
    pub fn spawn_engine(&self, name: &str) -> Proc {
        let args = ["engine", "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0"];
        let args: Vec<String> = args.map(String::from).into_iter().chain(self.profile.engine_flags()).collect();
        Proc::start(name, &args, &self.names, "engine pool listening", "metrics=", "/metrics")
    }

    /// A gateway of this cluster (same token secret), which the caller owns.
    pub fn spawn_gateway(&self, name: &str) -> Proc {
        self.spawn_gateway_with(name, &[])
    }

    /// A rating service of this cluster on `database_url`.
    pub fn spawn_rating(&self, name: &str, database_url: &str) -> Proc {
        let args = ["rating", "--rating-listen=127.0.0.1:0", "--rating-metrics-listen=127.0.0.1:0"];
        let database = format!("--database-url={database_url}");
        let args: Vec<String> =
            args.map(String::from).into_iter().chain([database]).chain(self.profile.rating_flags()).collect();
        Proc::start(name, &args, &self.names, "rating service listening", "metrics=", "/readyz")
    }

    /// `fogblast up` on this cluster's Redis, NATS and names (SQLite in memory).
    pub fn spawn_up(&self, name: &str) -> Proc {
        Proc::start(name, &up_in_memory(), &self.names, "gateway listening", "addr=", "/readyz")
    }

    /// A matchmaker of this cluster, pairing in the profile's short waves.
    pub fn spawn_matchmaker(&self, name: &str) -> Proc {
        self.spawn_matchmaker_with(name, &[])
    }

    /// A matchmaker of this cluster with flags of the caller's.
    pub fn spawn_matchmaker_with(&self, name: &str, extra: &[&str]) -> Proc {
        let args = ["matchmaker", "--matchmaker-listen=127.0.0.1:0", "--matchmaker-metrics-listen=127.0.0.1:0"];
        let mut args: Vec<String> = args.map(String::from).into_iter().chain(self.profile.matchmaker_flags()).collect();
        args.extend(extra.iter().map(|a| a.to_string()));
        Proc::start(name, &args, &self.names, "matchmaker listening", "metrics=", "/readyz")
    }

    /// The Redis key prefix of this cluster.
    pub fn redis_prefix(&self) -> &str {
        &self.names.redis_prefix
    }

    /// A gateway of this cluster with flags of the caller's.
    pub fn spawn_gateway_with(&self, name: &str, extra: &[&str]) -> Proc {
        let args = ["gateway", "--gateway-listen=127.0.0.1:0", "--gateway-metrics-listen=127.0.0.1:0"];
        let secret = format!("--token-secret={}", self.secret);
        let mut args: Vec<String> =
            args.map(String::from).into_iter().chain([secret]).chain(self.profile.gateway_flags()).collect();
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
