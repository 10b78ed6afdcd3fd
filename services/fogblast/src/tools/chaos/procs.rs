//! The chaos cluster: every service of a deployment as a child process of
//! the `fogblast` server binary, on fixed loopback ports chosen at the start so that a
//! process killed and started again comes back at the same address. Each
//! start of a process (an incarnation) logs to a file of its own; the
//! scenario kills (`SIGKILL`), pauses (`SIGSTOP`), resumes (`SIGCONT`) and
//! restarts them, and at the end stops the survivors with `SIGTERM` and
//! checks how each incarnation ended and that none panicked.

use std::collections::HashSet;
use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use fogblast_client::Http;
use fogblast_topology::{NatsStream, Profile, SharedBackends, Topology};
use tokio::time::Instant;

/// The bound of the run's stream, in bytes.
const RUN_STREAM_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// How long a process gets to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a process gets to exit after `SIGTERM`.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The kinds of process, in the order they start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Engine,
    Rating,
    Shard,
    Matchmaker,
    Gateway,
}

/// How an incarnation ended.
#[derive(Clone, Debug)]
pub enum Ended {
    /// Still running.
    Running,
    /// Killed on purpose by the scenario.
    Killed,
    /// Exited by itself (or after the final `SIGTERM`) with this status.
    Exited(String, bool),
}

#[derive(Debug)]
pub struct Incarnation {
    pub log: PathBuf,
    pub ended: Ended,
}

/// One service of the cluster, across its restarts.
#[derive(Debug)]
pub struct Proc {
    pub name: String,
    pub kind: Kind,
    args: Vec<String>,
    /// Where `/readyz` (an engine: `/metrics`) answers.
    pub probe: SocketAddr,
    child: Option<Child>,
    pub incarnations: Vec<Incarnation>,
    pub paused: bool,
}

impl Proc {
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

/// Names shared by every process: the Redis prefix, the NATS stream and
/// subject prefix, the token secret.
#[derive(Clone, Debug)]
pub struct Backends {
    pub redis_url: String,
    pub redis_prefix: String,
    pub nats_url: String,
    pub stream: String,
    pub subject_prefix: String,
}

impl Backends {
    /// The same names as every process gets them.
    pub fn shared(&self) -> SharedBackends {
        let nats = NatsStream {
            url: self.nats_url.clone(),
            stream: self.stream.clone(),
            subject_prefix: self.subject_prefix.clone(),
            // The run's stream holds a few thousand games: a bound of its
            // own, so a NATS server on a fuller disk (its JetStream may
            // only reserve part of what is free) still creates it.
            max_bytes: RUN_STREAM_MAX_BYTES,
        };
        SharedBackends { redis_url: self.redis_url.clone(), redis_prefix: self.redis_prefix.clone(), nats: Some(nats) }
    }
}

/// What the run starts: the topology (every kind of process, how many, and
/// the profile their flags come from) and what only this run adds.
#[derive(Clone, Debug)]
pub struct Layout {
    pub topology: Topology,
    pub database_url: String,
    /// Flags every matchmaker gets besides the profile's.
    pub matchmaker_flags: Vec<String>,
}

#[derive(Debug)]
pub struct Cluster {
    exe: PathBuf,
    pub backends: Backends,
    pub log_dir: PathBuf,
    pub procs: Vec<Proc>,
    /// The gateways' WebSocket URLs, in order.
    pub gateway_urls: Vec<String>,
}

/// A port for one of the processes, kept for all its restarts. It is taken
/// below the kernel's ephemeral range (`ip_local_port_range`), so that no
/// outgoing connection (to Redis, to another process) can hold it when
/// the process starts or starts again; free now, and not handed out twice.
pub fn free_port(taken: &mut HashSet<u16>) -> anyhow::Result<SocketAddr> {
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let low = 10_000.min(ephemeral_low / 2);
    for _ in 0..1_000 {
        let port = rand::random_range(low..ephemeral_low);
        if taken.contains(&port) {
            continue;
        }
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            taken.insert(port);
            return Ok(listener.local_addr()?);
        }
    }
    bail!("no free port below {ephemeral_low}")
}

fn signal(pid: u32, name: &str) -> anyhow::Result<()> {
    // `kill` rather than libc: the workspace allows no unsafe code.
    let status = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running kill")?;
    if !status.success() {
        bail!("kill -{name} {pid} failed");
    }
    Ok(())
}

impl Cluster {
    /// Lays the cluster out on fresh ports; nothing runs yet.
    pub fn plan(exe: PathBuf, backends: Backends, layout: &Layout, log_dir: PathBuf) -> anyhow::Result<Cluster> {
        let topology = &layout.topology;
        let id_prefix = backends.subject_prefix.trim_end_matches('.').to_owned();
        let mut plan = Plan { profile: topology.profile, id_prefix, taken: HashSet::new(), procs: Vec::new() };
        let engine_addrs = (0..topology.engines).map(|i| plan.engine(i)).collect::<anyhow::Result<Vec<_>>>()?;
        let rating_addr = if topology.rating { Some(plan.rating(&layout.database_url)?) } else { None };
        for i in 0..topology.shards {
            plan.shard(i, &engine_addrs)?;
        }
        let matchmaker_addrs = (0..topology.matchmakers)
            .map(|i| plan.matchmaker(i, rating_addr.as_deref(), &layout.matchmaker_flags))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let secret: String = (0..4).map(|_| format!("{:016x}", rand::random::<u64>())).collect();
        let gateway_urls = (0..topology.gateways)
            .map(|i| {
                // Each gateway has one matchmaker; the replicas share Redis.
                let matchmaker = (!matchmaker_addrs.is_empty()).then(|| &matchmaker_addrs[i % matchmaker_addrs.len()]);
                plan.gateway(i, &secret, rating_addr.as_deref(), matchmaker.map(String::as_str))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
        Ok(Cluster { exe, backends, log_dir, procs: plan.procs, gateway_urls })
    }

    pub fn index(&self, name: &str) -> anyhow::Result<usize> {
        self.procs.iter().position(|p| p.name == name).with_context(|| format!("no process named {name}"))
    }

    /// Starts every process, kind by kind, each kind ready before the next.
    pub async fn start_all(&mut self) -> anyhow::Result<()> {
        for kind in [Kind::Engine, Kind::Rating, Kind::Shard, Kind::Matchmaker, Kind::Gateway] {
            let members: Vec<usize> = (0..self.procs.len()).filter(|&i| self.procs[i].kind == kind).collect();
            for &i in &members {
                self.spawn(i)?;
            }
            for i in members {
                self.wait_ready(i).await?;
            }
        }
        Ok(())
    }

    /// Starts a new incarnation of process `i`.
    pub fn spawn(&mut self, i: usize) -> anyhow::Result<()> {
        let backends = self.backends.shared();
        let proc = &mut self.procs[i];
        let log = self.log_dir.join(format!("{}.{}.log", proc.name, proc.incarnations.len()));
        let out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(&self.exe)
            .args(&proc.args)
            .envs(backends.env())
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            // Not in the terminal's process group: Ctrl-C is for the
            // scenario, which stops its children itself.
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", proc.name))?;
        proc.child = Some(child);
        proc.paused = false;
        proc.incarnations.push(Incarnation { log, ended: Ended::Running });
        Ok(())
    }

    /// Waits until process `i` answers its probe with 200.
    pub async fn wait_ready(&mut self, i: usize) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let path = if self.procs[i].kind == Kind::Engine { "/metrics" } else { "/readyz" };
        loop {
            self.reap();
            let proc = &self.procs[i];
            if proc.child.is_none() {
                bail!(
                    "{} exited while starting:\n{}",
                    proc.name,
                    tail(&proc.incarnations.last().expect("started").log)
                );
            }
            let answer = Http::for_addr(proc.probe).get(path).await;
            if matches!(answer, Ok(answer) if answer.status == 200) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{} not ready after {READY_TIMEOUT:?}", proc.name);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `kill -9`: the process dies at once, leaving its lease, its
    /// connections and its unacknowledged messages behind.
    pub fn kill(&mut self, i: usize) {
        let proc = &mut self.procs[i];
        if let Some(mut child) = proc.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            if let Some(last) = proc.incarnations.last_mut() {
                last.ended = Ended::Killed;
            }
        }
    }

    /// `SIGTERM`, and waits for the exit: a gateway drains, telling its
    /// clients to reconnect. Killed if it does not exit in time.
    pub async fn terminate(&mut self, i: usize) -> anyhow::Result<()> {
        let proc = &mut self.procs[i];
        let pid = proc.pid().with_context(|| format!("{} is not running", proc.name))?;
        signal(pid, "TERM")?;
        let ended = exit_after_sigterm(proc.child.take().expect("running")).await;
        if let Some(last) = proc.incarnations.last_mut() {
            last.ended = ended;
        }
        Ok(())
    }

    /// `SIGSTOP`: frozen, its sockets open, until [`Cluster::resume`].
    pub fn pause(&mut self, i: usize) -> anyhow::Result<()> {
        let proc = &mut self.procs[i];
        let pid = proc.pid().with_context(|| format!("{} is not running", proc.name))?;
        signal(pid, "STOP")?;
        proc.paused = true;
        Ok(())
    }

    pub fn resume(&mut self, i: usize) -> anyhow::Result<()> {
        let proc = &mut self.procs[i];
        let pid = proc.pid().with_context(|| format!("{} is not running", proc.name))?;
        signal(pid, "CONT")?;
        proc.paused = false;
        Ok(())
    }

    /// Notes every process that exited by itself; returns their names.
    pub fn reap(&mut self) -> Vec<String> {
        let mut exited = Vec::new();
        for proc in &mut self.procs {
            let Some(child) = proc.child.as_mut() else { continue };
            if let Ok(Some(status)) = child.try_wait() {
                proc.child = None;
                if let Some(last) = proc.incarnations.last_mut() {
                    last.ended = Ended::Exited(describe(status), false);
                }
                exited.push(proc.name.clone());
            }
        }
        exited
    }

    /// Stops every process with `SIGTERM`, gateways first and engines
    /// last, killing what does not exit in time; records how each ended.
    pub async fn stop_all(&mut self) {
        for kind in [Kind::Gateway, Kind::Matchmaker, Kind::Shard, Kind::Rating, Kind::Engine] {
            let members: Vec<usize> = (0..self.procs.len()).filter(|&i| self.procs[i].kind == kind).collect();
            for &i in &members {
                if self.procs[i].paused {
                    let _ = self.resume(i);
                }
                if let Some(pid) = self.procs[i].pid() {
                    let _ = signal(pid, "TERM");
                }
            }
            for i in members {
                let proc = &mut self.procs[i];
                let Some(child) = proc.child.take() else { continue };
                let ended = exit_after_sigterm(child).await;
                if let Some(last) = proc.incarnations.last_mut() {
                    last.ended = ended;
                }
            }
        }
    }

    /// Every incarnation that panicked or ended badly, in words.
    pub fn troubles(&self) -> Vec<String> {
        let mut troubles = Vec::new();
        for proc in &self.procs {
            for (n, life) in proc.incarnations.iter().enumerate() {
                let text = std::fs::read_to_string(&life.log).unwrap_or_default();
                if let Some(line) = text.lines().find(|l| l.contains("panicked at")) {
                    troubles.push(format!("{} (start {n}) panicked: {line} (log: {})", proc.name, life.log.display()));
                }
                match &life.ended {
                    Ended::Exited(status, false) => troubles.push(format!(
                        "{} (start {n}) ended badly: {status} (log: {})",
                        proc.name,
                        life.log.display()
                    )),
                    Ended::Running => troubles.push(format!("{} (start {n}) was never stopped", proc.name)),
                    Ended::Killed | Ended::Exited(_, true) => {}
                }
            }
        }
        troubles
    }

    /// The length of process `i`'s current log so far.
    pub fn log_len(&self, i: usize) -> u64 {
        let life = self.procs[i].incarnations.last();
        life.and_then(|l| std::fs::metadata(&l.log).ok()).map_or(0, |m| m.len())
    }

    /// What process `i`'s current log says after its first `from` bytes.
    pub fn log_since(&self, i: usize, from: u64) -> String {
        let life = self.procs[i].incarnations.last();
        let text = life.and_then(|l| std::fs::read(&l.log).ok()).unwrap_or_default();
        String::from_utf8_lossy(text.get(from as usize..).unwrap_or_default()).into_owned()
    }

    /// A counter or gauge off process `i`'s `/metrics`.
    pub async fn metric(&self, i: usize, name: &str) -> Option<f64> {
        let proc = &self.procs[i];
        let answer = Http::for_addr(proc.probe).metrics().await.ok().filter(|a| a.status == 200)?;
        let text = answer.text();
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse::<f64>().ok())
    }

    /// Moves each running game shard has applied for players so far, from its metrics.
    pub async fn shard_moves(&self) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        for (i, proc) in self.procs.iter().enumerate() {
            if proc.kind != Kind::Shard || proc.child.is_none() || proc.paused {
                continue;
            }
            let moves = self.metric(i, r#"fogblast_game_commands_total{outcome="ok",rpc="make_move"}"#).await;
            out.push((i, moves.unwrap_or(0.0) as u64));
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for proc in &mut self.procs {
            if let Some(mut child) = proc.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// The processes laid out so far, each on ports of its own, with the
/// profile's flags for its service.
struct Plan {
    profile: Profile,
    /// What the shards' and matchmakers' ids start with: the run's own.
    id_prefix: String,
    taken: HashSet<u16>,
    procs: Vec<Proc>,
}

impl Plan {
    fn add(&mut self, name: String, kind: Kind, args: Vec<String>, probe: SocketAddr) {
        self.procs.push(Proc { name, kind, args, probe, child: None, incarnations: Vec::new(), paused: false });
    }

    /// Engine replica `i`; returns its gRPC address.
    fn engine(&mut self, i: usize) -> anyhow::Result<String> {
        let (grpc, metrics) = (free_port(&mut self.taken)?, free_port(&mut self.taken)?);
        let mut args = vec!["engine".into(), format!("--listen={grpc}"), format!("--metrics-listen={metrics}")];
        args.extend(self.profile.engine_flags());
        self.add(format!("engine-{i}"), Kind::Engine, args, metrics);
        Ok(format!("http://{grpc}"))
    }

    /// The rating service on `database_url`; returns its gRPC address.
    fn rating(&mut self, database_url: &str) -> anyhow::Result<String> {
        let (grpc, metrics) = (free_port(&mut self.taken)?, free_port(&mut self.taken)?);
        let mut args = vec![
            "rating".into(),
            format!("--rating-listen={grpc}"),
            format!("--rating-metrics-listen={metrics}"),
            format!("--database-url={database_url}"),
        ];
        args.extend(self.profile.rating_flags());
        self.add("rating".into(), Kind::Rating, args, metrics);
        Ok(format!("http://{grpc}"))
    }

    /// Game shard `i`, playing the computer through `engine_addrs`.
    fn shard(&mut self, i: usize, engine_addrs: &[String]) -> anyhow::Result<()> {
        let (grpc, metrics) = (free_port(&mut self.taken)?, free_port(&mut self.taken)?);
        let mut args = vec![
            "game".into(),
            format!("--game-listen={grpc}"),
            format!("--game-metrics-listen={metrics}"),
            format!("--shard-id={}-shard-{i}", self.id_prefix),
        ];
        args.extend(self.profile.game_flags());
        if !engine_addrs.is_empty() {
            args.push(format!("--engine-addrs={}", engine_addrs.join(",")));
        }
        self.add(format!("shard-{i}"), Kind::Shard, args, metrics);
        Ok(())
    }

    /// Matchmaker replica `i`, with `extra` flags; returns its gRPC address.
    fn matchmaker(&mut self, i: usize, rating_addr: Option<&str>, extra: &[String]) -> anyhow::Result<String> {
        let (grpc, metrics) = (free_port(&mut self.taken)?, free_port(&mut self.taken)?);
        let mut args = vec![
            "matchmaker".into(),
            format!("--matchmaker-listen={grpc}"),
            format!("--matchmaker-metrics-listen={metrics}"),
            format!("--matchmaker-id={}-mm-{i}", self.id_prefix),
        ];
        args.extend(rating_addr.map(|addr| format!("--matchmaker-rating-addr={addr}")));
        args.extend(self.profile.matchmaker_flags());
        args.extend(extra.iter().cloned());
        self.add(format!("matchmaker-{i}"), Kind::Matchmaker, args, metrics);
        Ok(format!("http://{grpc}"))
    }

    /// Gateway `i`, signing tokens with `secret`; returns its WebSocket URL.
    fn gateway(
        &mut self,
        i: usize,
        secret: &str,
        rating_addr: Option<&str>,
        matchmaker_addr: Option<&str>,
    ) -> anyhow::Result<String> {
        let (addr, metrics) = (free_port(&mut self.taken)?, free_port(&mut self.taken)?);
        let mut args = vec![
            "gateway".into(),
            format!("--gateway-listen={addr}"),
            format!("--gateway-metrics-listen={metrics}"),
            format!("--token-secret={secret}"),
        ];
        args.extend(rating_addr.map(|addr| format!("--rating-addr={addr}")));
        args.extend(self.profile.gateway_flags());
        args.extend(matchmaker_addr.map(|addr| format!("--matchmaker-addr={addr}")));
        self.add(format!("gateway-{i}"), Kind::Gateway, args, addr);
        Ok(format!("ws://{addr}/ws"))
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => status.to_string(),
    }
}

/// The last lines of a log.
pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    format!("{}\n(log: {})", lines[lines.len().saturating_sub(20)..].join("\n"), log.display())
}

/// Waits up to [`STOP_TIMEOUT`] for a child sent `SIGTERM` to exit, and
/// kills it if it does not.
async fn exit_after_sigterm(mut child: Child) -> Ended {
    let deadline = Instant::now() + STOP_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
            _ => break None,
        }
    };
    match status {
        Some(status) => Ended::Exited(describe(status), status.success()),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Ended::Exited(format!("still running {STOP_TIMEOUT:?} after SIGTERM; killed"), false)
        }
    }
}
