//! A Redis Cluster of this test's own: six `redis-server` processes in
//! cluster mode on loopback ports (three primaries, each with a replica),
//! joined by `redis-cli --cluster create`, and killed with their files
//! removed when dropped, also when the test fails.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Primaries and replicas: the smallest cluster `redis-cli` creates with a
/// replica for every primary.
const NODES: usize = 6;
/// How long a node may stay unreachable before its replica takes over.
const NODE_TIMEOUT_MS: u64 = 2_000;
/// How long the cluster may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<Child>,
    ports: Vec<u16>,
    dir: PathBuf,
}

impl RedisCluster {
    /// Starts the six nodes, creates the cluster and waits until every node
    /// says every slot is served.
    pub async fn start() -> RedisCluster {
        let dir = std::env::temp_dir().join(format!(
            "fogblast-redis-cluster-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the cluster's node files");
        let ports = free_ports(NODES);
        let mut cluster = RedisCluster { nodes: Vec::new(), ports: ports.clone(), dir };
        for port in &ports {
            let node_dir = cluster.dir.join(port.to_string());
            std::fs::create_dir_all(&node_dir).expect("a node directory");
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .args(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"])
                .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
                .arg("--dir")
                .arg(&node_dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server is installed");
            cluster.nodes.push(child);
        }
        for port in &ports {
            wait_until(&format!("redis on port {port} to answer"), || async move { ping(*port).await }).await;
        }
        let addresses: Vec<String> = ports.iter().map(|port| format!("127.0.0.1:{port}")).collect();
        let created = tokio::task::spawn_blocking(move || {
            Command::new("redis-cli")
                .arg("--cluster")
                .arg("create")
                .args(&addresses)
                .args(["--cluster-replicas", "1", "--cluster-yes"])
                .output()
        })
        .await
        .expect("redis-cli ran")
        .expect("redis-cli is installed");
        assert!(
            created.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&created.stdout),
            String::from_utf8_lossy(&created.stderr)
        );
        for port in &ports {
            wait_until(&format!("node {port} to see the cluster ready"), || async move { cluster_ready(*port).await })
                .await;
        }
        cluster
    }

    /// The cluster's URL as Fogblast reads it: every node as a seed.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self.ports.iter().map(|port| format!("127.0.0.1:{port}")).collect();
        format!("redis-cluster://{}", nodes.join(","))
    }

    /// The ports of the nodes serving slots now, as a live node sees it: a
    /// primary suspected or known to have failed is left out.
    pub async fn primaries(&self) -> Vec<u16> {
        let Some(nodes) = self.cluster_nodes().await else { return Vec::new() };
        nodes
            .lines()
            .filter(|line| {
                let flags = line.split(' ').nth(2).unwrap_or("");
                flags.split(',').any(|flag| flag == "master") && !flags.contains("fail")
            })
            .filter_map(|line| line.split(' ').nth(1)?.split(['@', ':']).nth(1)?.parse().ok())
            .collect()
    }

    /// The port of the replica following the primary on `port`, as a
    /// live node sees it.
    pub async fn replica_of(&self, primary: u16) -> Option<u16> {
        let nodes = self.cluster_nodes().await?;
        let field = |line: &str, n: usize| line.split(' ').nth(n).unwrap_or("").to_owned();
        let port_of = |line: &str| field(line, 1).split(['@', ':']).nth(1)?.parse::<u16>().ok();
        let primary_id = nodes.lines().find(|line| port_of(line) == Some(primary)).map(|line| field(line, 0))?;
        nodes.lines().find(|line| field(line, 3) == primary_id).and_then(port_of)
    }

    /// `CLUSTER NODES` as the first node that answers sees it.
    async fn cluster_nodes(&self) -> Option<String> {
        for port in &self.ports {
            let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else { continue };
            let Ok(mut conn) = client.get_multiplexed_async_connection().await else { continue };
            if let Ok(nodes) = redis::cmd("CLUSTER").arg("NODES").query_async::<String>(&mut conn).await {
                return Some(nodes);
            }
        }
        None
    }

    /// Whether the node on `port` holds a key matching `pattern` (`KEYS`).
    pub async fn holds(&self, port: u16, pattern: &str) -> bool {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).expect("a node url");
        let mut conn = client.get_multiplexed_async_connection().await.expect("the node answers");
        let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query_async(&mut conn).await.expect("KEYS");
        !keys.is_empty()
    }

    /// How many keys the node on `port` holds.
    pub async fn keys_on(&self, port: u16) -> u64 {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).expect("a node url");
        let mut conn = client.get_multiplexed_async_connection().await.expect("the node answers");
        redis::cmd("DBSIZE").query_async(&mut conn).await.expect("DBSIZE")
    }

    /// Waits until every replica has acknowledged all its primary has
    /// written so far: replication is asynchronous, and a primary killed
    /// before that takes its last writes with it.
    pub async fn wait_replicated(&self) {
        for port in self.primaries().await {
            wait_until(&format!("the replica of {port} to catch up"), || async move { replicas_caught_up(port).await })
                .await;
        }
    }

    /// Freezes the node on `port` with SIGSTOP: its sockets stay open and
    /// accept, but nothing is answered, as when a network cut leaves a
    /// node silent; the others time it out and its replica takes over.
    pub fn freeze(&mut self, port: u16) {
        let index = self.ports.iter().position(|p| *p == port).expect("a node of this cluster");
        let stopped = Command::new("kill").args(["-STOP", &self.nodes[index].id().to_string()]).status();
        assert!(stopped.is_ok_and(|s| s.success()), "SIGSTOP to the node on {port}");
    }

    /// Kills the node on `port` with SIGKILL: it stops without a word, and
    /// its replica takes over once the others time it out.
    pub fn kill(&mut self, port: u16) {
        let index = self.ports.iter().position(|p| *p == port).expect("a node of this cluster");
        let _ = self.nodes[index].kill();
        let _ = self.nodes[index].wait();
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `n` loopback ports, each free together with its cluster bus port (the
/// port plus 10,000).
fn free_ports(n: usize) -> Vec<u16> {
    use rand::Rng;
    let mut rng = rand::rng();
    let mut ports = Vec::new();
    while ports.len() < n {
        let port: u16 = rng.random_range(20_000..30_000);
        let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        if !ports.contains(&port) && free(port) && free(port + 10_000) {
            ports.push(port);
        }
    }
    ports
}

async fn ping(port: u16) -> bool {
    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else { return false };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else { return false };
    redis::cmd("PING").query_async::<String>(&mut conn).await.is_ok()
}

async fn cluster_ready(port: u16) -> bool {
    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else { return false };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else { return false };
    let Ok(info) = redis::cmd("CLUSTER").arg("INFO").query_async::<String>(&mut conn).await else { return false };
    if !(info.contains("cluster_state:ok")
        && info.contains("cluster_slots_ok:16384")
        && info.contains("cluster_known_nodes:6"))
    {
        return false;
    }
    // Every replica known as one, so the cluster can fail over.
    let Ok(nodes) = redis::cmd("CLUSTER").arg("NODES").query_async::<String>(&mut conn).await else { return false };
    if nodes.lines().filter(|line| line.split(' ').nth(2).is_some_and(|flags| flags.contains("slave"))).count()
        != NODES / 2
    {
        return false;
    }
    // A replica counts once it holds its primary's data: one that never
    // synchronised refuses to take over.
    let Ok(replication) = redis::cmd("INFO").arg("replication").query_async::<String>(&mut conn).await else {
        return false;
    };
    replication.contains("role:master") || replication.contains("master_link_status:up")
}

/// Whether the primary on `port` has a replica online that acknowledged
/// its whole replication stream (replicas acknowledge once a second).
async fn replicas_caught_up(port: u16) -> bool {
    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}")) else { return false };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else { return false };
    let Ok(replication) = redis::cmd("INFO").arg("replication").query_async::<String>(&mut conn).await else {
        return false;
    };
    let mut written = None;
    let mut replicas = Vec::new();
    for line in replication.lines().map(str::trim) {
        if let Some(offset) = line.strip_prefix("master_repl_offset:") {
            written = offset.parse::<u64>().ok();
        }
        // `slave<N>:ip=...,port=...,state=online,offset=...,lag=...`
        if let Some((name, fields)) = line.split_once(':') {
            if name.strip_prefix("slave").is_some_and(|n| n.parse::<u32>().is_ok()) {
                let acked = fields.split(',').find_map(|field| field.strip_prefix("offset=")?.parse::<u64>().ok());
                replicas.push((fields.contains("state=online"), acked));
            }
        }
    }
    let Some(written) = written else { return false };
    !replicas.is_empty()
        && replicas.iter().all(|&(online, acked)| online && acked.is_some_and(|acked| acked >= written))
}

async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + START_TIMEOUT;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
