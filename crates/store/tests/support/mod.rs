//! What the shared store suite runs on: one harness per test holding either
//! adapter, so every behaviour is written once and held against both. Redis
//! tests get a key prefix of their own, so they run in parallel with each
//! other and with anything else using the same Redis, and delete their keys
//! afterwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fogblast_proto::ids::{GameId, PlayerId, ShardId};
use fogblast_store::{Commit, FileStore, GameStore, MemoryStore, RedisStore};
use redis::aio::MultiplexedConnection;

/// Small, so the history-gap behaviour needs only a few events.
pub const HISTORY: usize = 4;

/// The number of independent writers the race behaviour uses.
const WRITERS: usize = 4;

pub struct Harness {
    /// Independent handles on the same store; for Redis, separate
    /// connections, so racing commits really arrive interleaved.
    pub writers: Vec<Arc<dyn GameStore>>,
    redis: Option<(String, String)>,
    file: Option<std::path::PathBuf>,
}

/// A path for a test's own store file, in the system's temporary directory.
pub fn scratch_file() -> std::path::PathBuf {
    let name = unique_prefix().replace(':', "-");
    std::env::temp_dir().join(format!("fogblast-{name}live.db"))
}

/// Removes a store file with its write-ahead log.
pub fn remove_file(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

impl Harness {
    pub fn memory() -> Harness {
        let store: Arc<dyn GameStore> = Arc::new(MemoryStore::new().with_history(HISTORY));
        Harness { writers: vec![store; WRITERS], redis: None, file: None }
    }

    pub async fn file() -> Harness {
        let path = scratch_file();
        let store = FileStore::open(&path).await.expect("a store file").with_history(HISTORY);
        let store: Arc<dyn GameStore> = Arc::new(store);
        Harness { writers: vec![store; WRITERS], redis: None, file: Some(path) }
    }

    pub async fn redis() -> Harness {
        let url = std::env::var("FOGBLAST_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
        Harness::redis_at(&url).await
    }

    /// A Redis store on the Redis or the cluster at `url`.
    pub async fn redis_at(url: &str) -> Harness {
        let url = url.to_owned();
        let prefix = unique_prefix();
        let mut writers: Vec<Arc<dyn GameStore>> = Vec::new();
        for _ in 0..WRITERS {
            let store = RedisStore::connect(&url, &prefix)
                .await
                .unwrap_or_else(|e| panic!("these tests need Redis at {url} (FOGBLAST_TEST_REDIS_URL): {e}"));
            writers.push(Arc::new(store.with_history(HISTORY)));
        }
        Harness { writers, redis: Some((url, prefix)), file: None }
    }

    pub fn store(&self) -> &dyn GameStore {
        &*self.writers[0]
    }

    /// A plain connection to the Redis under test and the test's prefix,
    /// for looking at (and spoiling) the keys directly.
    pub async fn raw(&self) -> Option<(MultiplexedConnection, String)> {
        let (url, prefix) = self.redis.as_ref()?;
        if fogblast_redis::cluster_nodes(url).is_some() {
            // A cluster's keys go with the cluster, which the test stops.
            return None;
        }
        let client = redis::Client::open(url.as_str()).expect("redis url");
        Some((client.get_multiplexed_async_connection().await.expect("redis connection"), prefix.clone()))
    }

    /// Deletes the test's keys; a failed test leaves them behind for
    /// inspection, under a prefix no other run reuses.
    pub async fn cleanup(self) {
        if let Some(path) = &self.file {
            remove_file(path);
        }
        let Some((mut conn, prefix)) = self.raw().await else { return };
        let mut cursor = 0u64;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{prefix}*"))
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await
                .expect("scan");
            if !keys.is_empty() {
                let _: () = redis::cmd("DEL").arg(&keys).query_async(&mut conn).await.expect("del");
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
    }
}

fn unique_prefix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("test:{}-{nanos}-{}:", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

pub fn gid(name: &str) -> GameId {
    GameId::parse(name).unwrap()
}

pub fn pid(name: &str) -> PlayerId {
    PlayerId::parse(name).unwrap()
}

pub fn sid(name: &str) -> ShardId {
    ShardId::parse(name).unwrap()
}

/// A plain commit: no deadline, not finished, no expiry.
pub fn commit(game: &GameId, expected_version: u64, epoch: u64, record: &str, events: &[&str]) -> Commit {
    Commit {
        game: game.clone(),
        expected_version,
        epoch,
        record: record.as_bytes().to_vec(),
        events: events.iter().map(|e| e.as_bytes().to_vec()).collect(),
        due_at_ms: None,
        finished: false,
        expire_after: None,
        in_play: None,
    }
}

/// Events as `events_after` returns them.
pub fn numbered(first: u64, events: &[&str]) -> Vec<(u64, Vec<u8>)> {
    events.iter().zip(first..).map(|(e, v)| (v, e.as_bytes().to_vec())).collect()
}

pub async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}
