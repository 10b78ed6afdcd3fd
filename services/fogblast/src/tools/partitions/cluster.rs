//! The partition run's cluster: ten network nodes (see [`NODES`]) with
//! the real processes on them. A NATS JetStream cluster of three servers
//! (`data1`-`data3`, streams at three replicas); Redis laid out as
//! [`RedisLayout`] says: a Redis Cluster of three primaries, one on each
//! of `redis1`-`redis3`, each with a replica on each other Redis node, or
//! one primary on `redis1` with a replica on `redis2`; the matchmaker on `data3`;
//! one game shard on each of `shard0` and `shard1`; one gateway on each of
//! `gate0` and `gate1`. The rating service runs in the root namespace: Postgres
//! listens on 127.0.0.1 only, which no namespace reaches; the nodes reach
//! the rating service at the bridge's address. Every process listens on
//! its node's address at a fixed port (a node has ports of its own), so a
//! process started again comes back where it was.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use fogblast_client::Http;
use fogblast_testkit::nats_cluster::{server_config, ServerSpec};
use tokio::time::Instant;

use crate::node_net::NodeNet;

/// The nodes, by index.
pub const NODES: [&str; 10] =
    ["data1", "data2", "data3", "redis1", "redis2", "redis3", "shard0", "shard1", "gate0", "gate1"];
/// The NATS servers' nodes.
pub const DATA: [usize; 3] = [0, 1, 2];
/// The Redis servers' nodes.
pub const REDIS: [usize; 3] = [3, 4, 5];
pub const SHARDS: [usize; 2] = [6, 7];
pub const GATEWAYS: [usize; 2] = [8, 9];
pub const MATCHMAKER_NODE: usize = 2;
/// The node of the Redis primary: the only one, or the one serving the
/// Redis Cluster's first third of slots.
pub const REDIS_PRIMARY_NODE: usize = REDIS[0];

const NATS_CLIENT_PORT: u16 = 4222;
const NATS_ROUTE_PORT: u16 = 6222;
const REDIS_PORT: u16 = 6379;
/// A Redis Cluster's replicas, beside other Redis nodes' primaries.
const REDIS_REPLICA_PORTS: [u16; 2] = [6380, 6381];
/// How long a Redis Cluster node may be unreachable before its replica takes over.
const REDIS_NODE_TIMEOUT_MS: u64 = 2_000;
/// gRPC of a shard, the matchmaker or the rating service; HTTP of a gateway.
const SERVICE_PORT: u16 = 7000;
const METRICS_PORT: u16 = 7001;
/// The rating service's ports on the bridge's address, in the root namespace.
const RATING_PORT: u16 = 17_000;
const RATING_METRICS_PORT: u16 = 17_001;
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// The names every Fogblast process shares.
pub const STREAM: &str = "FOGBLAST_PARTITIONS";
pub const REDIS_PREFIX: &str = "fogblast-partitions:";

/// How Redis is laid out over the data nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RedisLayout {
    /// A Redis Cluster: three primaries (`redis-1`..`redis-3` on
    /// `redis1`..`redis3`), each with two replicas (`redis-1r1`,
    /// `redis-1r2`..), one on each other Redis node, failing over by itself
    /// when a primary is cut off. With a commit waiting for one replica, a
    /// Redis node cut off stalls its primary's slots only until the
    /// failover: every primary still has a replica on the other side.
    Cluster,
    /// One primary on `redis1` and its replica on `redis2`, failed over by
    /// the run (as a sentinel or an operator would).
    Replicated,
}

#[derive(Debug)]
pub struct Process {
    pub name: String,
    /// `None`: the root namespace.
    pub node: Option<usize>,
    program: PathBuf,
    args: Vec<String>,
    /// Where `/readyz` answers (Fogblast services only).
    probe: Option<SocketAddr>,
    child: Option<Child>,
    /// The wall clock's skew of the running incarnation, in ms.
    pub skew_ms: i64,
    starts: usize,
}

#[derive(Debug)]
pub struct PartitionCluster {
    pub net: NodeNet,
    pub processes: Vec<Process>,
    pub log_dir: PathBuf,
    pub database_url: String,
    lease_ms: u64,
    /// `FOGBLAST_REDIS_WAIT_REPLICAS` of every service.
    redis_wait_replicas: u32,
    pub redis: RedisLayout,
    /// The schedule's cuts between a gateway and the players (the root
    /// namespace): gateway index, from and to, wall ms.
    pub player_link_cuts: Vec<(usize, u64, u64)>,
}

impl PartitionCluster {
    /// Lays the nodes out and plans every process; nothing runs yet.
    pub fn plan(
        server_bin: &Path,
        database_url: String,
        settings: (u64, u32, RedisLayout),
        nats_server: &Path,
        log_dir: PathBuf,
    ) -> anyhow::Result<Self> {
        let (lease_ms, redis_wait_replicas, redis) = settings;
        let net = NodeNet::create(&NODES)?;
        let mut cluster = PartitionCluster {
            net,
            processes: Vec::new(),
            log_dir,
            database_url,
            lease_ms,
            redis_wait_replicas,
            redis,
            player_link_cuts: Vec::new(),
        };
        cluster.plan_data(nats_server)?;
        cluster.plan_services(server_bin);
        Ok(cluster)
    }

    fn address(&self, node: usize) -> Ipv4Addr {
        self.net.nodes()[node].address
    }

    fn nats_servers(&self) -> Vec<ServerSpec> {
        DATA.iter()
            .map(|&node| ServerSpec {
                name: format!("nats{}", node + 1),
                client: SocketAddr::from((self.address(node), NATS_CLIENT_PORT)),
                route: SocketAddr::from((self.address(node), NATS_ROUTE_PORT)),
            })
            .collect()
    }

    /// The three NATS servers as seeds.
    pub fn nats_url(&self) -> String {
        self.nats_servers().iter().map(|s| format!("nats://{}", s.client)).collect::<Vec<_>>().join(",")
    }

    pub fn redis_url(&self) -> String {
        match self.redis {
            RedisLayout::Replicated => format!("redis://{}:{REDIS_PORT}", self.address(REDIS_PRIMARY_NODE)),
            RedisLayout::Cluster => {
                let seeds: Vec<String> = self.redis_cluster_nodes().iter().map(|n| n.address.to_string()).collect();
                format!("redis-cluster://{}", seeds.join(","))
            }
        }
    }

    /// The Redis Cluster's nine nodes: the three primaries, then their replicas.
    fn redis_cluster_nodes(&self) -> Vec<RedisNode> {
        let primaries = REDIS.iter().enumerate().map(|(i, &node)| RedisNode {
            name: format!("redis-{}", i + 1),
            node,
            address: SocketAddr::from((self.address(node), REDIS_PORT)),
            replica_of: None,
        });
        let replicas = REDIS_REPLICA_PORTS.iter().enumerate().flat_map(|(j, &port)| {
            (0..REDIS.len()).map(move |i| {
                let node = REDIS[(i + j + 1) % REDIS.len()];
                RedisNode {
                    name: format!("redis-{}r{}", i + 1, j + 1),
                    node,
                    address: SocketAddr::from((self.address(node), port)),
                    replica_of: Some(i),
                }
            })
        });
        primaries.chain(replicas).collect()
    }

    pub fn gateway_urls(&self) -> Vec<String> {
        GATEWAYS.iter().map(|&node| format!("ws://{}:{SERVICE_PORT}/ws", self.address(node))).collect()
    }

    fn plan_data(&mut self, nats_server: &Path) -> anyhow::Result<()> {
        let servers = self.nats_servers();
        for (server, &node) in servers.iter().zip(&DATA) {
            let store = self.log_dir.join(&server.name);
            std::fs::create_dir_all(&store).with_context(|| format!("creating {}", store.display()))?;
            let config = self.log_dir.join(format!("{}.conf", server.name));
            std::fs::write(&config, server_config("fogblast-partitions", server, &servers, &store))?;
            let args = vec!["-c".into(), config.display().to_string()];
            self.add(&server.name, Some(node), nats_server.into(), args, None);
        }
        match self.redis {
            RedisLayout::Replicated => self.plan_replicated_redis(),
            RedisLayout::Cluster => self.plan_redis_cluster()?,
        }
        Ok(())
    }

    fn plan_redis_cluster(&mut self) -> anyhow::Result<()> {
        for redis in self.redis_cluster_nodes() {
            let dir = self.log_dir.join(&redis.name);
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let port = redis.address.port().to_string();
            let mut args: Vec<String> = ["--port", &port, "--save", "", "--appendonly", "no", "--protected-mode", "no"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.extend(["--bind".into(), redis.address.ip().to_string(), "--dir".into(), dir.display().to_string()]);
            args.extend([
                "--cluster-enabled".into(),
                "yes".into(),
                "--cluster-config-file".into(),
                "nodes.conf".into(),
            ]);
            args.extend(["--cluster-node-timeout".into(), REDIS_NODE_TIMEOUT_MS.to_string()]);
            // A replica cut off for long still takes over: the run judges
            // what that loses, rather than leave the slots unserved.
            args.extend(["--cluster-replica-validity-factor".into(), "0".into()]);
            self.add(&redis.name, Some(redis.node), "redis-server".into(), args, None);
        }
        Ok(())
    }

    fn plan_replicated_redis(&mut self) {
        let primary = self.address(REDIS_PRIMARY_NODE);
        for (name, node, replica_of) in [("redis-primary", REDIS[0], None), ("redis-replica", REDIS[1], Some(primary))]
        {
            let mut args: Vec<String> = ["--port", &REDIS_PORT.to_string(), "--save", "", "--appendonly", "no"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.extend(["--bind".into(), self.address(node).to_string(), "--protected-mode".into(), "no".into()]);
            if let Some(primary) = replica_of {
                args.extend(["--replicaof".into(), primary.to_string(), REDIS_PORT.to_string()]);
            }
            self.add(name, Some(node), "redis-server".into(), args, None);
        }
    }

    fn plan_services(&mut self, server_bin: &Path) {
        let host = self.net.host_address();
        let rating = format!("http://{host}:{RATING_PORT}");
        let args = vec![
            "rating".into(),
            format!("--rating-listen={host}:{RATING_PORT}"),
            format!("--rating-metrics-listen={host}:{RATING_METRICS_PORT}"),
            format!("--database-url={}", self.database_url),
            "--rating-ack-wait-ms=2000".into(),
        ];
        let probe = SocketAddr::from((host, RATING_METRICS_PORT));
        self.add("rating", None, server_bin.into(), args, Some(probe));
        for (i, &node) in SHARDS.iter().enumerate() {
            let address = self.address(node);
            let args = vec![
                "game".into(),
                format!("--game-listen={address}:{SERVICE_PORT}"),
                format!("--game-metrics-listen={address}:{METRICS_PORT}"),
                format!("--shard-id=shard-{i}"),
                format!("--lease-ms={}", self.lease_ms),
                "--sweep-ms=200".into(),
            ];
            self.add(&format!("shard-{i}"), Some(node), server_bin.into(), args, Some((address, METRICS_PORT).into()));
        }
        let address = self.address(MATCHMAKER_NODE);
        let args = vec![
            "matchmaker".into(),
            format!("--matchmaker-listen={address}:{SERVICE_PORT}"),
            format!("--matchmaker-metrics-listen={address}:{METRICS_PORT}"),
            "--matchmaker-id=mm-0".into(),
            format!("--matchmaker-rating-addr={rating}"),
            "--wave-ms=300".into(),
        ];
        self.add("matchmaker", Some(MATCHMAKER_NODE), server_bin.into(), args, Some((address, METRICS_PORT).into()));
        let secret: String = (0..4).map(|_| format!("{:016x}", rand::random::<u64>())).collect();
        for (i, &node) in GATEWAYS.iter().enumerate() {
            let address = self.address(node);
            let args = vec![
                "gateway".into(),
                format!("--gateway-listen={address}:{SERVICE_PORT}"),
                format!("--gateway-metrics-listen={address}:{METRICS_PORT}"),
                format!("--token-secret={secret}"),
                format!("--rating-addr={rating}"),
                format!("--matchmaker-addr=http://{}:{SERVICE_PORT}", self.address(MATCHMAKER_NODE)),
                "--membership-refresh-ms=200".into(),
                "--max-connections-per-ip=1000000".into(),
                "--games-per-ip-minute=1000000".into(),
                "--credits=1000000".into(),
            ];
            self.add(
                &format!("gateway-{i}"),
                Some(node),
                server_bin.into(),
                args,
                Some((address, SERVICE_PORT).into()),
            );
        }
    }

    fn add(&mut self, name: &str, node: Option<usize>, program: PathBuf, args: Vec<String>, probe: Option<SocketAddr>) {
        self.processes.push(Process {
            name: name.to_owned(),
            node,
            program,
            args,
            probe,
            child: None,
            skew_ms: 0,
            starts: 0,
        });
    }

    pub fn index(&self, name: &str) -> anyhow::Result<usize> {
        self.processes.iter().position(|p| p.name == name).with_context(|| format!("no process named {name}"))
    }

    /// Starts the data servers, then the services in order, each ready before the next.
    pub async fn start_all(&mut self) -> anyhow::Result<()> {
        let mut data_ready = false;
        for i in 0..self.processes.len() {
            if self.processes[i].probe.is_some() && !data_ready {
                // The Fogblast services connect to Redis and NATS at
                // start: the Redis Cluster formed, the NATS cluster with
                // its meta leader.
                if self.redis == RedisLayout::Cluster {
                    self.form_redis_cluster().await?;
                }
                self.wait_nats().await?;
                data_ready = true;
            }
            self.spawn(i, 0)?;
            self.wait_ready(i).await?;
        }
        Ok(())
    }

    /// Joins the six Redis nodes into a cluster: the slots split in three
    /// over the primaries, every node met, each replica following its
    /// primary; returns once every node sees every slot served and each
    /// replica is in sync.
    async fn form_redis_cluster(&self) -> anyhow::Result<()> {
        let nodes = self.redis_cluster_nodes();
        for redis in &nodes {
            wait_for(&format!("{} to answer", redis.name), || async {
                redis_command(redis.address, &["PING"]).await.map(drop)
            })
            .await?;
        }
        let third = 16_384 / REDIS.len() as u32;
        for (i, redis) in nodes.iter().filter(|n| n.replica_of.is_none()).enumerate() {
            let first = i as u32 * third;
            let last = if i + 1 == REDIS.len() { 16_383 } else { first + third - 1 };
            redis_command(redis.address, &["CLUSTER", "ADDSLOTSRANGE", &first.to_string(), &last.to_string()]).await?;
        }
        for redis in &nodes[1..] {
            let (ip, port) = (redis.address.ip().to_string(), redis.address.port().to_string());
            redis_command(nodes[0].address, &["CLUSTER", "MEET", &ip, &port]).await?;
        }
        for redis in &nodes {
            let known = format!("cluster_known_nodes:{}", nodes.len());
            wait_for(&format!("{} to know every node", redis.name), || async {
                let info = redis_command(redis.address, &["CLUSTER", "INFO"]).await?;
                if info.contains(&known) {
                    Ok(())
                } else {
                    bail!("not yet")
                }
            })
            .await?;
        }
        for redis in &nodes {
            let Some(primary) = redis.replica_of else { continue };
            let id = redis_command(nodes[primary].address, &["CLUSTER", "MYID"]).await?;
            wait_for(&format!("{} to follow {}", redis.name, nodes[primary].name), || async {
                redis_command(redis.address, &["CLUSTER", "REPLICATE", &id]).await.map(drop)
            })
            .await?;
        }
        for redis in &nodes {
            wait_for(&format!("{} to see the cluster whole", redis.name), || async {
                let info = redis_command(redis.address, &["CLUSTER", "INFO"]).await?;
                let replication = redis_command(redis.address, &["INFO", "replication"]).await?;
                let synced = redis.replica_of.is_none()
                    || (replication.contains("master_link_status:up")
                        && replication.contains("master_sync_in_progress:0"));
                if info.contains("cluster_state:ok") && synced {
                    Ok(())
                } else {
                    bail!("not yet")
                }
            })
            .await?;
        }
        Ok(())
    }

    /// After a failover of the Redis Cluster, makes each first primary
    /// (`redis-1`..`redis-3`) the primary of its slots again, so the next
    /// schedule finds the layout it was planned on.
    pub async fn restore_redis_primaries(&self) -> anyhow::Result<()> {
        for redis in self.redis_cluster_nodes().iter().filter(|n| n.replica_of.is_none()) {
            wait_for(&format!("{} to be a primary again", redis.name), || async {
                let replication = redis_command(redis.address, &["INFO", "replication"]).await?;
                if replication.contains("role:master") {
                    return Ok(());
                }
                if replication.contains("master_link_status:up") {
                    // Refused while it is still catching up; asked again.
                    let _ = redis_command(redis.address, &["CLUSTER", "FAILOVER"]).await;
                }
                bail!("still a replica")
            })
            .await?;
        }
        Ok(())
    }

    /// Starts process `i` with its wall clock `skew_ms` off.
    pub fn spawn(&mut self, i: usize, skew_ms: i64) -> anyhow::Result<()> {
        let nats_url = self.nats_url();
        let redis_url = self.redis_url();
        let process = &mut self.processes[i];
        let log = self.log_dir.join(format!("{}.{}.log", process.name, process.starts));
        let out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let mut command = match (process.node, skew_ms) {
            (Some(node), 0) => self.net.command(node, &process.program),
            (Some(node), skew) => self.net.skewed_command(node, skew, &process.program),
            (None, _) => Command::new(&process.program),
        };
        command
            .args(&process.args)
            .env("REDIS_URL", redis_url)
            .env("FOGBLAST_REDIS_PREFIX", REDIS_PREFIX)
            .env("FOGBLAST_REDIS_WAIT_REPLICAS", self.redis_wait_replicas.to_string())
            .env("NATS_URL", nats_url)
            .env("FOGBLAST_NATS_REPLICAS", "3")
            .env("FOGBLAST_NATS_STREAM", STREAM)
            .env("FOGBLAST_NATS_MAX_BYTES", (256u64 << 20).to_string())
            .env("RUST_BACKTRACE", "1")
            // The shards log each acknowledged commit for the fencing check.
            .env("FOGBLAST_LOG", "info,fogblast::commits=debug")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            // A group of its own: `faketime` runs the program as its child,
            // and a kill must reach both.
            .process_group(0);
        process.child = Some(command.spawn().with_context(|| format!("starting {}", process.name))?);
        process.skew_ms = skew_ms;
        process.starts += 1;
        Ok(())
    }

    /// Kills process `i` and whatever it started (SIGKILL to its process group) and waits for it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.processes[i].child.take() {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    async fn wait_nats(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let servers = fogblast_bus::nats_servers(&self.nats_url())?;
        loop {
            let client = tokio::time::timeout(Duration::from_secs(2), async_nats::connect(servers.clone())).await;
            if let Ok(Ok(client)) = client {
                let reply =
                    tokio::time::timeout(Duration::from_secs(2), client.request("$JS.API.INFO", Vec::new().into()))
                        .await;
                if let Ok(Ok(reply)) = reply {
                    let text = String::from_utf8_lossy(&reply.payload);
                    if text.contains("account_info_response") && !text.contains("\"error\"") {
                        return Ok(());
                    }
                }
            }
            if Instant::now() > deadline {
                bail!("the NATS cluster elected no JetStream leader within {READY_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Moves the leadership of JetStream stream `stream` to the NATS
    /// server on `node`, asking its leader to step down until the election
    /// lands there, and only while that server's copy is current: NATS
    /// 2.9 elected a copy whose catch-up after a cut had stalled, and
    /// acknowledged messages went missing from the stream.
    pub async fn lead_stream_from(&self, stream: &str, node: usize) -> anyhow::Result<()> {
        let wanted = format!("nats{}", node + 1);
        let client = async_nats::connect(fogblast_bus::nats_servers(&self.nats_url())?).await?;
        let jetstream = async_nats::jetstream::new(client.clone());
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let mut found = jetstream.get_stream(stream).await.with_context(|| format!("stream {stream}"))?;
            let cluster = found.info().await?.cluster.clone();
            let leader = cluster.as_ref().and_then(|c| c.leader.clone());
            if leader.as_deref() == Some(wanted.as_str()) {
                return Ok(());
            }
            let current = cluster
                .as_ref()
                .is_some_and(|c| c.replicas.iter().any(|r| r.name == wanted && r.current && r.lag.unwrap_or(0) == 0));
            if Instant::now() > deadline {
                bail!("{stream}'s leader stayed on {leader:?}, not {wanted}, within {READY_TIMEOUT:?}");
            }
            if leader.is_some() && current {
                let subject = format!("$JS.API.STREAM.LEADER.STEPDOWN.{stream}");
                // The answer only says the request was taken; the new
                // leader shows in the stream's info.
                let _ = tokio::time::timeout(Duration::from_secs(2), client.request(subject, Vec::new().into())).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits until process `i` answers `/readyz` (a data server: until it runs).
    pub async fn wait_ready(&mut self, i: usize) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let process = &mut self.processes[i];
            if let Some(status) = process.child.as_mut().and_then(|child| child.try_wait().ok().flatten()) {
                let log = self.log_dir.join(format!("{}.{}.log", process.name, process.starts - 1));
                bail!("{} exited while starting ({status}):\n{}", process.name, log_tail(&log));
            }
            let Some(probe) = process.probe else { return Ok(()) };
            if matches!(Http::for_addr(probe).get("/readyz").await, Ok(answer) if answer.status == 200) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{} not ready after {READY_TIMEOUT:?}", process.name);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Fails Redis over to the replica, which missed whatever the primary
    /// took while the two were cut apart, keeping the primary's address
    /// (as a virtual address or a DNS name moved by a failover would): the
    /// primary is killed, every cut healed, the replica promoted, a new
    /// Redis started on the primary's node as the promoted one's replica,
    /// and once in sync it is made the primary again, the other its
    /// replica.
    pub async fn redis_failover(&mut self) -> anyhow::Result<()> {
        let (primary, replica) = (self.index("redis-primary")?, self.index("redis-replica")?);
        let (primary_node, replica_node) = (REDIS_PRIMARY_NODE, self.processes[replica].node.context("a node")?);
        let (primary_address, replica_address) = (self.address(primary_node), self.address(replica_node));
        // The primary dies before any cut heals, so the replica it fails
        // over to holds nothing written during a cut that it did not
        // confirm: healing first would let it catch up by chance in the
        // moments before the failover.
        self.kill(primary);
        self.net.heal_all()?;
        redis_command((replica_address, REDIS_PORT), &["REPLICAOF", "NO", "ONE"]).await?;
        let replica_of = ["--replicaof".to_owned(), replica_address.to_string(), REDIS_PORT.to_string()];
        self.processes[primary].args.extend(replica_of);
        let spawned = self.spawn(primary, 0);
        let plain = self.processes[primary].args.len() - 3;
        self.processes[primary].args.truncate(plain);
        spawned?;
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let info = redis_command((primary_address, REDIS_PORT), &["INFO", "replication"]).await.unwrap_or_default();
            if info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0") {
                break;
            }
            if Instant::now() > deadline {
                bail!("the new Redis on {primary_address} never synchronised with {replica_address}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        redis_command((primary_address, REDIS_PORT), &["REPLICAOF", "NO", "ONE"]).await?;
        let port = REDIS_PORT.to_string();
        redis_command((replica_address, REDIS_PORT), &["REPLICAOF", &primary_address.to_string(), &port]).await?;
        Ok(())
    }

    /// Names of processes that exited by themselves.
    pub fn exited(&mut self) -> Vec<String> {
        let mut exited = Vec::new();
        for process in &mut self.processes {
            if let Some(status) = process.child.as_mut().and_then(|child| child.try_wait().ok().flatten()) {
                exited.push(format!("{} ({status})", process.name));
                process.child = None;
            }
        }
        exited
    }
}

impl Drop for PartitionCluster {
    fn drop(&mut self) {
        // The root namespace's processes; the nodes' go with their namespaces.
        for i in 0..self.processes.len() {
            self.kill(i);
        }
    }
}

/// The last lines of a log, for an error message.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// One node of the Redis Cluster.
struct RedisNode {
    name: String,
    node: usize,
    address: SocketAddr,
    /// The index of its primary among the primaries; `None`: a primary.
    replica_of: Option<usize>,
}

/// Tries `attempt` every 200 ms until it succeeds, for at most [`READY_TIMEOUT`].
async fn wait_for<F, Fut>(what: &str, mut attempt: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let error = match attempt().await {
            Ok(()) => return Ok(()),
            Err(error) => error,
        };
        if Instant::now() > deadline {
            bail!("waited {READY_TIMEOUT:?} for {what}: {error:#}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One Redis command to the server on `address`, its answer as text.
async fn redis_command(address: impl Into<SocketAddr>, args: &[&str]) -> anyhow::Result<String> {
    let client = redis::Client::open(format!("redis://{}", address.into()))?;
    let mut connection =
        tokio::time::timeout(Duration::from_secs(5), client.get_multiplexed_async_connection()).await??;
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    let answer: redis::Value =
        tokio::time::timeout(Duration::from_secs(5), command.query_async(&mut connection)).await??;
    Ok(match answer {
        redis::Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        redis::Value::VerbatimString { text, .. } => text,
        redis::Value::SimpleString(text) => text,
        other => format!("{other:?}"),
    })
}
