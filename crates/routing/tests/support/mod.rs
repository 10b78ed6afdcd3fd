//! What the router's tests share: membership set by hand.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::ids::ShardId;
use fogblast_routing::{Member, Membership, StoreError};

/// Membership a test sets by hand.
#[derive(Debug, Default)]
pub struct Members(Mutex<Vec<Member>>);

impl Members {
    pub fn set(&self, addrs: &[&str]) {
        *self.0.lock().unwrap() = addrs
            .iter()
            .enumerate()
            .map(|(i, addr)| Member {
                shard: ShardId::parse(&format!("shard-{i}")).unwrap(),
                addr: (*addr).to_owned(),
                epoch: 1,
            })
            .collect();
    }
}

#[async_trait]
impl Membership for Members {
    async fn register(&self, _: &ShardId, _: &str, _: Duration) -> Result<u64, StoreError> {
        unreachable!("routers never register")
    }
    async fn renew(&self, _: &ShardId, _: u64, _: Duration) -> Result<bool, StoreError> {
        unreachable!("routers never renew")
    }
    async fn deregister(&self, _: &ShardId, _: u64) -> Result<(), StoreError> {
        unreachable!("routers never deregister")
    }
    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        Ok(self.0.lock().unwrap().clone())
    }
}
