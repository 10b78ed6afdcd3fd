//! The Redis plumbing that the game store (`fogblast-store`) and the
//! matchmaker's store share, so neither depends on the other: a connection
//! that reconnects on its own and keeps every key under one prefix
//! ([`PrefixedRedis`]), and readers of replies ([`reply`]) that turn a
//! reply of the wrong shape into an error instead of a panic. Each store
//! keeps its own key layout, scripts and error type.

use std::fmt;

use redis::aio::ConnectionManager;

pub mod reply;

/// One Redis, reached through a connection manager, with every key this
/// handle names under `prefix`. Cloning is cheap and shares the connection.
#[derive(Clone)]
pub struct PrefixedRedis {
    conn: ConnectionManager,
    prefix: String,
}

impl fmt::Debug for PrefixedRedis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixedRedis").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl PrefixedRedis {
    /// Connects to the Redis at `url`, naming keys under `prefix`.
    pub async fn connect(url: &str, prefix: impl Into<String>) -> Result<PrefixedRedis, redis::RedisError> {
        let client = redis::Client::open(url)?;
        let conn = ConnectionManager::new(client).await?;
        Ok(PrefixedRedis { conn, prefix: prefix.into() })
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

    /// The shared connection, for a pipeline (`Pipeline::query_async`).
    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// Sends `cmd` and reads its reply as `T`.
    pub async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, redis::RedisError> {
        cmd.query_async(&mut self.conn.clone()).await
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
        assert_eq!(redis.key("deadlines"), "kit-test:deadlines");
        assert_eq!(redis.tagged("game", "g1"), "kit-test:game:{g1}");
        let pong: String = redis.query(&redis::cmd("PING")).await.unwrap();
        assert_eq!(pong, "PONG");
    }
}
