//! The Redis plumbing that the game store (`fogblast-store`) and the
//! matchmaker's store share, so neither depends on the other: a connection
//! to one Redis or to a Redis Cluster that reconnects on its own and keeps
//! every key under one prefix ([`PrefixedRedis`]), and readers of replies
//! ([`reply`]) that turn a reply of the wrong shape into an error instead
//! of a panic. Each store keeps its own key layout, scripts and error type.
//!
//! A URL `redis://host:port` names one Redis; `redis-cluster://host:port,
//! host:port,...` names seed nodes of a cluster (any reachable one is
//! enough; the client learns the rest and follows slots as they move).

use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

pub mod reply;

/// How long a command may wait for its answer before the connection counts
/// as broken (the shards' `WAIT` stays below it).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_millis(500);
/// How long connecting to a node may take.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(1);
/// The scheme of a cluster URL.
const CLUSTER_SCHEME: &str = "redis-cluster://";

/// How often a cluster connection may be made again from the seed nodes.
const CLUSTER_REBUILD_GAP: Duration = Duration::from_millis(500);
/// How long making it again may take: connecting to every node of the new
/// map, the unreachable ones until their connection timeout, takes longer
/// than one command may wait.
const CLUSTER_REBUILD_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to one Redis or to a cluster; cloning shares it.
#[derive(Clone)]
pub enum Connection {
    Single(ConnectionManager),
    Cluster(Arc<ClusterHandle>),
}

/// A cluster connection that is made again from the seed nodes, with a
/// fresh map of slots, when commands run into a dead or unreachable node:
/// after a primary dies, the client may go on sending its slots' commands
/// to the dead address, and only a new map names the replica that took
/// over. The new connection is made in the background, commands going on
/// over the old one meanwhile: behind a network cut, connecting to the
/// silent nodes of the map takes seconds.
pub struct ClusterHandle {
    client: redis::cluster::ClusterClient,
    current: RwLock<ClusterConnection>,
    /// When a rebuild last began, and whether one is under way.
    rebuild: std::sync::Mutex<(Option<Instant>, bool)>,
}

impl fmt::Debug for ClusterHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterHandle").finish_non_exhaustive()
    }
}

impl ClusterHandle {
    fn connection(&self) -> ClusterConnection {
        self.current.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Starts making the connection again, unless that is under way or
    /// began a moment ago; the fresh connection replaces the current one
    /// once it is made.
    fn rebuild(self: &Arc<Self>) {
        {
            let mut state = self.rebuild.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let (last, running) = &mut *state;
            if *running || last.is_some_and(|at| at.elapsed() < CLUSTER_REBUILD_GAP) {
                return;
            }
            *state = (Some(Instant::now()), true);
        }
        let handle = Arc::clone(self);
        tokio::spawn(async move {
            let fresh = tokio::time::timeout(CLUSTER_REBUILD_TIMEOUT, handle.client.get_async_connection()).await;
            if let Ok(Ok(fresh)) = fresh {
                *handle.current.write().unwrap_or_else(std::sync::PoisonError::into_inner) = fresh;
            }
            handle.rebuild.lock().unwrap_or_else(std::sync::PoisonError::into_inner).1 = false;
        });
    }
}

/// A failure that a fresh map of the cluster may cure.
fn node_trouble(error: &redis::RedisError) -> bool {
    error.is_timeout()
        || error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_cluster_error()
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Connection::Single(_) => "Connection::Single",
            Connection::Cluster(_) => "Connection::Cluster",
        })
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Single(conn) => conn.req_packed_command(cmd),
            Connection::Cluster(handle) => Box::pin(async move {
                let answer = handle.connection().req_packed_command(cmd).await;
                if let Err(error) = &answer {
                    if node_trouble(error) {
                        handle.rebuild();
                    }
                }
                answer
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Connection::Cluster(handle) => Box::pin(async move {
                let answer = handle.connection().req_packed_commands(pipeline, offset, count).await;
                if let Err(error) = &answer {
                    if node_trouble(error) {
                        handle.rebuild();
                    }
                }
                answer
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Single(conn) => conn.get_db(),
            Connection::Cluster(handle) => handle.connection().get_db(),
        }
    }
}

/// The seed nodes of a `redis-cluster://` URL, as `redis://` URLs; `None`
/// for a URL of one Redis.
pub fn cluster_nodes(url: &str) -> Option<Vec<String>> {
    let rest = url.strip_prefix(CLUSTER_SCHEME)?;
    let (hosts, path) = rest.split_once('/').map_or((rest, ""), |(hosts, path)| (hosts, path));
    let suffix = if path.is_empty() { String::new() } else { format!("/{path}") };
    Some(
        hosts
            .split(',')
            .map(str::trim)
            .filter(|host| !host.is_empty())
            .map(|host| format!("redis://{host}{suffix}"))
            .collect(),
    )
}

/// Which of `buckets` buckets `name` falls in (FNV-1a), the same in every
/// process and every release: keys that span many records (deadlines, the
/// lobby) are split into buckets, each under its own hash tag, so no key is
/// hot and no script crosses slots.
pub fn bucket(name: &str, buckets: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash % buckets.max(1)
}

/// One Redis or a cluster, with every key this handle names under `prefix`.
/// Cloning is cheap and shares the connection.
#[derive(Clone)]
pub struct PrefixedRedis {
    conn: Connection,
    prefix: String,
}

impl fmt::Debug for PrefixedRedis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixedRedis")
            .field("prefix", &self.prefix)
            .field("cluster", &self.is_cluster())
            .finish_non_exhaustive()
    }
}

impl PrefixedRedis {
    /// Connects to the Redis or the cluster at `url`, naming keys under
    /// `prefix`.
    pub async fn connect(url: &str, prefix: impl Into<String>) -> Result<PrefixedRedis, redis::RedisError> {
        let conn = match cluster_nodes(url) {
            Some(nodes) => {
                if nodes.is_empty() {
                    return Err(redis::RedisError::from((
                        redis::ErrorKind::InvalidClientConfig,
                        "a redis-cluster:// URL names at least one node",
                    )));
                }
                let client = redis::cluster::ClusterClientBuilder::new(nodes)
                    .response_timeout(RESPONSE_TIMEOUT)
                    .connection_timeout(CONNECTION_TIMEOUT)
                    .build()?;
                let current = RwLock::new(client.get_async_connection().await?);
                Connection::Cluster(Arc::new(ClusterHandle { client, current, rebuild: Default::default() }))
            }
            None => {
                let client = redis::Client::open(url)?;
                let config = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(RESPONSE_TIMEOUT))
                    .set_connection_timeout(Some(CONNECTION_TIMEOUT));
                Connection::Single(ConnectionManager::new_with_config(client, config).await?)
            }
        };
        Ok(PrefixedRedis { conn, prefix: prefix.into() })
    }

    /// Whether this handle speaks to a cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.conn, Connection::Cluster(_))
    }

    /// The prefix of every key.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `<prefix><name>`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// `<prefix><kind>:{<tag>}`: the braces give every key of one tag one
    /// Redis Cluster hash slot, so a script may touch them all.
    pub fn tagged(&self, kind: &str, tag: &str) -> String {
        format!("{}{kind}:{{{tag}}}", self.prefix)
    }

    /// The shared connection, for a pipeline (`Pipeline::query_async`) whose
    /// keys all share one hash tag.
    pub fn connection(&self) -> Connection {
        self.conn.clone()
    }

    /// Sends `cmd` and reads its reply as `T`.
    pub async fn query<T: redis::FromRedisValue>(&self, cmd: &Cmd) -> Result<T, redis::RedisError> {
        cmd.query_async(&mut self.conn.clone()).await
    }

    /// Sends `cmd`, which names no key, to the node serving `key`: on a
    /// cluster, the primary of `key`'s slot (a `WAIT` after a write to
    /// `key` asks that primary alone, so a primary elsewhere that lost its
    /// replica does not hold the write up); on a single Redis, that Redis.
    pub async fn query_at<T: redis::FromRedisValue>(&self, key: &str, cmd: &Cmd) -> Result<T, redis::RedisError> {
        match &self.conn {
            Connection::Single(_) => self.query(cmd).await,
            Connection::Cluster(handle) => {
                use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
                let route = Route::with_key(key.as_bytes(), SlotAddr::Master);
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                let answer = handle.connection().route_command(cmd.clone(), routing).await;
                if let Err(error) = &answer {
                    if node_trouble(error) {
                        handle.rebuild();
                    }
                }
                Ok(redis::from_redis_value(answer?)?)
            }
        }
    }

    /// Sends independent commands whose keys may lie in different slots and
    /// returns their replies in order: one pipeline on a single Redis, all
    /// at once (each to its node) on a cluster.
    pub async fn query_each(&self, cmds: &[Cmd]) -> Result<Vec<Value>, redis::RedisError> {
        match &self.conn {
            Connection::Single(_) => {
                if cmds.is_empty() {
                    return Ok(Vec::new());
                }
                let mut pipe = redis::pipe();
                for cmd in cmds {
                    pipe.add_command(cmd.clone());
                }
                pipe.query_async(&mut self.conn.clone()).await
            }
            Connection::Cluster(_) => {
                futures::future::try_join_all(cmds.iter().map(|cmd| self.query::<Value>(cmd))).await
            }
        }
    }

    /// Runs a script (loading it on a miss) and reads its reply as `T`.
    pub async fn run<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, redis::RedisError> {
        invocation.invoke_async(&mut self.conn.clone()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keys_are_named_under_the_prefix() {
        let redis = PrefixedRedis::connect(&fogblast_testkit::redis_url(), "kit-test:").await.unwrap();
        assert!(!redis.is_cluster());
        assert_eq!(redis.key("deadlines"), "kit-test:deadlines");
        assert_eq!(redis.tagged("game", "g1"), "kit-test:game:{g1}");
        let pong: String = redis.query(&redis::cmd("PING")).await.unwrap();
        assert_eq!(pong, "PONG");
    }

    #[test]
    fn a_cluster_url_lists_its_seed_nodes() {
        assert_eq!(cluster_nodes("redis://127.0.0.1:6379"), None);
        assert_eq!(
            cluster_nodes("redis-cluster://127.0.0.1:7000, 127.0.0.1:7001"),
            Some(vec!["redis://127.0.0.1:7000".to_owned(), "redis://127.0.0.1:7001".to_owned()])
        );
        assert_eq!(
            cluster_nodes("redis-cluster://a:1,b:2/"),
            Some(vec!["redis://a:1".to_owned(), "redis://b:2".to_owned()])
        );
        assert_eq!(cluster_nodes("redis-cluster://"), Some(vec![]));
    }

    #[test]
    fn buckets_spread_and_stay_in_range() {
        let used: std::collections::HashSet<u64> = (0..200).map(|i| bucket(&format!("game{i}"), 16)).collect();
        assert_eq!(used.len(), 16, "200 names fill 16 buckets");
        assert!((0..1000).all(|i| bucket(&format!("g{i}"), 7) < 7));
        assert_eq!(bucket("same", 64), bucket("same", 64));
        assert_eq!(bucket("anything", 0), 0);
    }

    #[tokio::test]
    async fn independent_commands_answer_in_order() {
        let redis = PrefixedRedis::connect(&fogblast_testkit::redis_url(), "kit-test-each:").await.unwrap();
        let key = redis.key("x");
        let replies = redis
            .query_each(&[
                redis::cmd("SET").arg(&key).arg("1").to_owned(),
                redis::cmd("INCR").arg(&key).to_owned(),
                redis::cmd("DEL").arg(&key).to_owned(),
            ])
            .await
            .unwrap();
        assert_eq!(replies, vec![Value::Okay, Value::Int(2), Value::Int(1)]);
        assert!(redis.query_each(&[]).await.unwrap().is_empty());
    }
}
