//! Shard membership as every caller of the shards sees it: the live shards
//! with their addresses and epochs, and the trait of the store that keeps
//! their leases (implemented by `fogblast-store`'s Redis and in-process
//! adapters). Gateways and matchmakers read it to place games; only game
//! shards write it.

use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::ids::ShardId;

/// A failure of the store itself: unreachable, timed out, or answering
/// something unexpected.
#[derive(Debug, thiserror::Error)]
#[error("store: {0}")]
pub struct StoreError(pub String);

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
    /// its new epoch, greater than every epoch handed out before.
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
