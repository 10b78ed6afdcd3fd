//! Shard membership as every caller of the shards sees it: the live shards
//! with their addresses and epochs, and the trait of the store that keeps
//! their leases (implemented by `fogblast-store`'s Redis and in-process
//! adapters). Gateways and matchmakers read it to place games; only game
//! shards write it.

use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::ids::ShardId;

/// A failure of the store itself: unreachable, timed out, or answering
/// something unexpected. The client's error, when there is one, is kept as
/// the source, so a log or a caller can follow the chain to it (and
/// downcast it); its text is in the message too, so a log line that shows
/// only the top still says why.
#[derive(Debug, thiserror::Error)]
#[error("store: {message}")]
pub struct StoreError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl StoreError {
    /// A reply the store should not have given, with no cause beneath it.
    pub fn new(message: impl Into<String>) -> StoreError {
        StoreError { message: message.into(), source: None }
    }

    /// `context` failed because of `source`.
    pub fn caused_by(context: &str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> StoreError {
        let source = source.into();
        StoreError { message: format!("{context}: {source}"), source: Some(source) }
    }

    /// What failed, without the `store:` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A live shard as membership records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub shard: ShardId,
    /// The gRPC address other processes reach the shard at.
    pub addr: String,
    pub epoch: u64,
}

/// Shard membership: heartbeat leases with increasing epochs.
#[async_trait]
pub trait Membership: Send + Sync + std::fmt::Debug {
    /// Registers (or re-registers) a shard with a lease of `ttl` and returns
    /// its new epoch, greater than every epoch handed out before. The epoch
    /// is as durable as a commit before it is returned, so no failover of
    /// the store can hand it out again.
    async fn register(&self, shard: &ShardId, addr: &str, ttl: Duration) -> Result<u64, StoreError>;
    /// Extends the lease if it is still held at `epoch`; `Ok(false)` when it
    /// expired or was taken by a newer registration of the same shard.
    async fn renew(&self, shard: &ShardId, epoch: u64, ttl: Duration) -> Result<bool, StoreError>;
    /// Drops the lease if it is still held at `epoch`, so the shard's games
    /// move at once instead of after the lease runs out.
    async fn deregister(&self, shard: &ShardId, epoch: u64) -> Result<(), StoreError>;
    /// The shards whose leases are live, in no particular order.
    async fn members(&self) -> Result<Vec<Member>, StoreError>;
}
