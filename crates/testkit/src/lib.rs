//! What Fogblast's tests share about the real servers they talk to: where
//! Redis, NATS and Postgres are, a [`Scratch`] of names (a Redis key prefix,
//! a JetStream stream and subject prefix) and a [`ScratchDatabase`] that are
//! removed when the test ends, also when it fails, and [`leftovers`], which
//! the suite runs last so a test that leaves anything behind fails it.
//!
//! Every test resource is named under one convention: Redis keys start with
//! `test-`, streams with `TEST_`, subjects with `test_`, databases with
//! `test_`; [`leftovers`] looks for exactly those.

pub mod nats_cluster;
pub mod proxy;
pub mod python;
pub mod redis_cluster;
pub mod run;

pub use nats_cluster::NatsCluster;
pub use redis_cluster::RedisCluster;

use std::future::Future;
use std::time::Duration;

use futures::TryStreamExt;
use sqlx::Connection;

pub fn redis_url() -> String {
    std::env::var("FOGBLAST_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

pub fn nats_url() -> String {
    std::env::var("FOGBLAST_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_owned())
}

/// The Postgres server, without a database name.
pub fn postgres_url() -> String {
    std::env::var("FOGBLAST_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
}

/// The size bound of every test stream. JetStream reserves a stream's
/// bound out of the server's storage when the stream is made, so tests
/// running side by side with the production default (10 GiB each) are
/// refused with "insufficient storage resources" on a machine with less
/// free disk than they reserve together.
pub const TEST_STREAM_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// A test's own names on Redis and NATS; its keys and its stream are
/// removed when it is dropped.
#[derive(Debug)]
pub struct Scratch {
    /// Every key of the test starts with this (`test-<tag>-<hex>:`).
    pub redis_prefix: String,
    /// The test's JetStream stream (`TEST_<TAG>_<HEX>`).
    pub stream: String,
    /// Put before every subject of the test (`test_<tag>_<hex>.`).
    pub subject_prefix: String,
}

impl Scratch {
    /// Fresh names for the test `tag` (letters, digits and `-`).
    pub fn new(tag: &str) -> Scratch {
        let unique = format!("{tag}-{:08x}", rand::random::<u32>());
        Scratch {
            redis_prefix: format!("test-{unique}:"),
            stream: format!("TEST_{}", unique.to_ascii_uppercase().replace('-', "_")),
            subject_prefix: format!("test_{}.", unique.replace('-', "_")),
        }
    }

    /// The key prefix without its trailing `:`.
    pub fn base(&self) -> &str {
        self.redis_prefix.trim_end_matches(':')
    }
}

impl Scratch {
    /// Deletes the test's keys and stream now; [`Drop`] does it again,
    /// which finds nothing more unless something wrote since.
    pub fn remove(&self) {
        let (pattern, stream) = (format!("{}*", self.redis_prefix), self.stream.clone());
        block_on_own_thread(async move {
            delete_keys(&pattern).await;
            delete_stream(&stream).await;
        });
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.remove();
    }
}

/// A Postgres database of the test's own (`test_<tag>_<hex>`), dropped with
/// its connections when the value is.
#[derive(Debug)]
pub struct ScratchDatabase {
    pub name: String,
    pub url: String,
}

impl ScratchDatabase {
    pub async fn create(tag: &str) -> ScratchDatabase {
        let name = format!("test_{}_{:08x}", tag.replace('-', "_"), rand::random::<u32>());
        let mut admin =
            sqlx::PgConnection::connect(&format!("{}/postgres", postgres_url())).await.unwrap_or_else(|e| {
                panic!("these tests need Postgres at {} (FOGBLAST_TEST_POSTGRES_URL): {e}", postgres_url())
            });
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("creating a test database");
        ScratchDatabase { url: format!("{}/{name}", postgres_url()), name }
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let name = self.name.clone();
        block_on_own_thread(async move {
            if let Ok(mut admin) = sqlx::PgConnection::connect(&format!("{}/postgres", postgres_url())).await {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await;
            }
        });
    }
}

/// What tests left on the servers: keys, streams and databases named as
/// tests name them. Empty after a suite whose every test cleaned up.
pub async fn leftovers() -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(client) = redis::Client::open(redis_url()) {
        if let Ok(mut connection) = client.get_multiplexed_async_connection().await {
            for pattern in ["test-*", "fogblast-chaos-*"] {
                found.extend(scan(&mut connection, pattern).await.into_iter().map(|key| format!("redis key {key}")));
            }
        }
    }
    if let Ok(client) = async_nats::connect(nats_url()).await {
        let jetstream = async_nats::jetstream::new(client);
        if let Ok(streams) = jetstream.stream_names().try_collect::<Vec<String>>().await {
            let tests = streams.into_iter().filter(|s| is_test_stream(s));
            found.extend(tests.map(|stream| format!("NATS stream {stream}")));
        }
    }
    if let Ok(mut admin) = sqlx::PgConnection::connect(&format!("{}/postgres", postgres_url())).await {
        found.extend(test_databases(&mut admin).await.into_iter().map(|name| format!("Postgres database {name}")));
    }
    found
}

/// Removes everything [`leftovers`] would list.
pub async fn remove_leftovers() {
    for pattern in ["test-*", "fogblast-chaos-*"] {
        delete_keys(pattern).await;
    }
    if let Ok(client) = async_nats::connect(nats_url()).await {
        let jetstream = async_nats::jetstream::new(client);
        if let Ok(streams) = jetstream.stream_names().try_collect::<Vec<String>>().await {
            for stream in streams.iter().filter(|s| is_test_stream(s)) {
                let _ = jetstream.delete_stream(stream).await;
            }
        }
    }
    if let Ok(mut admin) = sqlx::PgConnection::connect(&format!("{}/postgres", postgres_url())).await {
        for name in test_databases(&mut admin).await {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await;
        }
    }
}

fn is_test_stream(name: &str) -> bool {
    ["TEST_", "FOGBLAST_TEST_", "FOGBLAST_CHAOS_"].iter().any(|p| name.starts_with(p))
}

async fn test_databases(admin: &mut sqlx::PgConnection) -> Vec<String> {
    let names: Vec<(String,)> = sqlx::query_as(
        "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_%' OR datname LIKE 'fogblast\\_chaos%'",
    )
    .fetch_all(admin)
    .await
    .unwrap_or_default();
    names.into_iter().map(|(name,)| name).collect()
}

/// Deletes every Redis key matching `pattern`.
pub async fn delete_keys(pattern: &str) {
    let Ok(client) = redis::Client::open(redis_url()) else { return };
    let Ok(mut connection) = client.get_multiplexed_async_connection().await else { return };
    let keys = scan(&mut connection, pattern).await;
    for chunk in keys.chunks(500) {
        let _: redis::RedisResult<i64> = redis::cmd("DEL").arg(chunk).query_async(&mut connection).await;
    }
}

/// Deletes a site's JetStream stream and its public events' stream beside
/// it; nothing when there are none.
pub async fn delete_stream(stream: &str) {
    if let Ok(client) = async_nats::connect(nats_url()).await {
        let jetstream = async_nats::jetstream::new(client);
        let _ = jetstream.delete_stream(stream).await;
        let _ = jetstream.delete_stream(fogblast_bus::public_stream(stream)).await;
    }
}

async fn scan(connection: &mut redis::aio::MultiplexedConnection, pattern: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let reply: redis::RedisResult<(u64, Vec<String>)> = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(connection)
            .await;
        let Ok((next, batch)) = reply else { break };
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    keys
}

/// Runs `work` to its end on a thread and runtime of its own, within 20 s:
/// a `Drop` may run inside or outside a runtime, while unwinding too.
fn block_on_own_thread(work: impl Future<Output = ()> + Send + 'static) {
    let _ = std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        runtime.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(20), work).await;
        });
    })
    .join();
}
