//! `fogblast-tools loadtest --spawn`: a local cluster for the bots to drive, made
//! of child processes of the server binary (`fogblast game` shards and
//! `fogblast gateway`s) on free loopback ports, sharing a Redis under a
//! fresh key prefix and a NATS server under a fresh JetStream stream. Their
//! flags come from the spec's [`Topology`] and its profile
//! ([`Profile::load`](fogblast_topology::Profile::load): production timings, and gateways that allow any
//! number of connections, games and messages from one address, since
//! every bot comes from 127.0.0.1).
//!
//! The children are separate processes so that the bots' sockets and the
//! gateways' sockets count against separate file descriptor limits, and
//! they run in their own process group so that a Ctrl-C at the terminal
//! reaches only the load test, which then stops them itself: SIGTERM,
//! then SIGKILL for any still running. Dropping the cluster (an error, a
//! panic) stops them too. What they left in Redis and NATS is deleted.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fogblast_client::Http;
use fogblast_topology::{NatsStream, SharedBackends, Topology};

/// How long the children get to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the children get to stop after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// What to start.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// Its shards and gateways (nothing else is started), and their profile.
    pub topology: Topology,
    pub redis_url: String,
    /// `None`: each process uses an in-process bus.
    pub nats_url: Option<String>,
    /// The `fogblast` server binary the children run.
    pub server_bin: PathBuf,
}

#[derive(Debug)]
struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
    /// Where its `/readyz` answers.
    probe: SocketAddr,
}

/// A running cluster; stopped when dropped.
#[derive(Debug)]
pub struct Cluster {
    procs: Vec<Proc>,
    /// The gateways' WebSocket URLs.
    pub gateway_urls: Vec<String>,
    /// Where each gateway serves `/metrics`, in the same order.
    pub gateway_metrics: Vec<String>,
    /// Where the children's logs are.
    pub log_dir: PathBuf,
    backends: SharedBackends,
}

/// The run's own stream and subjects on the NATS server at `url` (two
/// streams may not share subjects), with a bound of the run's own.
fn run_stream(url: String, run: &str) -> NatsStream {
    let stream = format!("FOGBLAST_LOADTEST_{}", run.to_uppercase());
    NatsStream { url, subject_prefix: stream.to_lowercase(), stream, max_bytes: 1 << 30 }
}

fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?)
}

impl Cluster {
    /// Starts the shards, then the gateways, and waits until all are ready.
    pub async fn start(spec: &ClusterSpec) -> anyhow::Result<Cluster> {
        let exe = spec.server_bin.clone();
        let run = format!("{:08x}", rand::random::<u32>());
        let log_dir = std::env::temp_dir().join(format!("fogblast-loadtest-{run}"));
        std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
        let secret: String = (0..4).map(|_| format!("{:016x}", rand::random::<u64>())).collect();
        let mut cluster = Cluster {
            procs: Vec::new(),
            gateway_urls: Vec::new(),
            gateway_metrics: Vec::new(),
            log_dir,
            backends: SharedBackends {
                redis_url: spec.redis_url.clone(),
                redis_prefix: format!("fogblast-loadtest-{run}:"),
                nats: spec.nats_url.clone().map(|url| run_stream(url, &run)),
            },
        };
        let profile = &spec.topology.profile;
        for i in 0..spec.topology.shards {
            let (grpc, metrics) = (free_port()?, free_port()?);
            let mut args = vec![
                "game".to_owned(),
                format!("--game-listen={grpc}"),
                format!("--game-metrics-listen={metrics}"),
                format!("--shard-id=loadtest-{run}-{i}"),
            ];
            args.extend(profile.game_flags());
            cluster.spawn(&exe, format!("shard-{i}"), &args, metrics)?;
        }
        cluster.wait_ready().await?;
        for i in 0..spec.topology.gateways {
            let addr = free_port()?;
            let metrics = free_port()?;
            let mut args = vec![
                "gateway".to_owned(),
                format!("--gateway-listen={addr}"),
                format!("--gateway-metrics-listen={metrics}"),
                format!("--token-secret={secret}"),
            ];
            args.extend(profile.gateway_flags());
            cluster.spawn(&exe, format!("gateway-{i}"), &args, addr)?;
            cluster.gateway_urls.push(format!("ws://{addr}/ws"));
            cluster.gateway_metrics.push(format!("http://{metrics}"));
        }
        cluster.wait_ready().await?;
        Ok(cluster)
    }

    fn spawn(&mut self, exe: &Path, name: String, args: &[String], probe: SocketAddr) -> anyhow::Result<()> {
        let log = self.log_dir.join(format!("{name}.log"));
        let out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let mut command = Command::new(exe);
        command
            .args(args)
            .envs(self.backends.env())
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            // Not in the terminal's process group: Ctrl-C is for the load
            // test, which stops its children in order.
            .process_group(0);
        if self.backends.nats.is_none() {
            command.env_remove("NATS_URL");
        }
        let child = command.spawn().with_context(|| format!("starting {name}"))?;
        self.procs.push(Proc { name, child, log, probe });
        Ok(())
    }

    /// Waits until every child answers `/readyz` with 200.
    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut waiting: Vec<usize> = (0..self.procs.len()).collect();
        while !waiting.is_empty() {
            let mut still = Vec::new();
            for index in waiting {
                let proc = &mut self.procs[index];
                if let Some(status) = proc.child.try_wait()? {
                    bail!("{} exited ({status}) while starting:\n{}", proc.name, tail(&proc.log));
                }
                let ready = Http::for_addr(proc.probe).readyz().await;
                if !matches!(ready, Ok(answer) if answer.status == 200) {
                    still.push(index);
                }
            }
            waiting = still;
            if !waiting.is_empty() {
                if Instant::now() > deadline {
                    let proc = &self.procs[waiting[0]];
                    bail!("{} not ready after {READY_TIMEOUT:?}:\n{}", proc.name, tail(&proc.log));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        Ok(())
    }

    /// The shards' metrics addresses, by name.
    pub fn shard_metrics(&self) -> Vec<(String, String)> {
        self.procs
            .iter()
            .filter(|p| p.name.starts_with("shard"))
            .map(|p| (p.name.clone(), p.probe.to_string()))
            .collect()
    }

    /// The children's process ids, by name.
    pub fn pids(&self) -> Vec<(String, u32)> {
        self.procs.iter().map(|p| (p.name.clone(), p.child.id())).collect()
    }

    /// Stops the gateways, then the shards: SIGTERM, then SIGKILL after
    /// [`STOP_TIMEOUT`].
    pub fn stop(&mut self) {
        let mut procs = std::mem::take(&mut self.procs);
        // Gateways first: they hold Watch streams on the shards.
        for group in [true, false] {
            let members: Vec<&mut Proc> = procs.iter_mut().filter(|p| p.name.starts_with("gateway") == group).collect();
            for proc in &members {
                // `kill` rather than libc: the workspace allows no unsafe code.
                let _ = Command::new("kill")
                    .args(["-TERM", &proc.child.id().to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            let deadline = Instant::now() + STOP_TIMEOUT;
            for proc in members {
                while matches!(proc.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if matches!(proc.child.try_wait(), Ok(None)) {
                    eprintln!("{} did not stop within {STOP_TIMEOUT:?}: killing it", proc.name);
                    let _ = proc.child.kill();
                }
                let _ = proc.child.wait();
            }
        }
    }

    /// Deletes the run's keys from Redis and its stream from NATS.
    pub async fn clean_up(&self) -> anyhow::Result<()> {
        let client = redis::Client::open(self.backends.redis_url.as_str())?;
        let mut conn = client.get_multiplexed_async_connection().await.context("connecting to redis")?;
        let pattern = format!("{}*", self.backends.redis_prefix);
        let mut cursor: u64 = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await?;
            if !keys.is_empty() {
                let _: u64 = redis::cmd("UNLINK").arg(&keys).query_async(&mut conn).await?;
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        if let Some(NatsStream { url, stream, .. }) = &self.backends.nats {
            let client = async_nats::connect(url.as_str()).await.with_context(|| format!("connecting to {url}"))?;
            let jetstream = async_nats::jetstream::new(client);
            for stream in [stream.clone(), fogblast_bus::public_stream(stream)] {
                jetstream.delete_stream(&stream).await.with_context(|| format!("deleting stream {stream}"))?;
            }
        }
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last lines of a log, to show why a child failed.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines[lines.len().saturating_sub(20)..].join("\n");
    format!("{shown}\n(log: {})", log.display())
}
