//! This shard's membership lease and its view of the other shards: which
//! games it owns, and when it must stop serving.
//!
//! The lease is renewed every third of its length. A shard that could not
//! renew before its lease ran out stops serving at once (self-fencing: it
//! may have been paused or cut off while another shard took its games),
//! then registers again with a new, higher epoch. Every write carries the
//! epoch, so a shard that missed this and writes anyway is refused by the
//! store once the new owner has written.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_proto::error::ServiceError;
use fogblast_proto::ids::{GameId, ShardId};
use fogblast_store::{placement, GameStore, Member};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{info, warn};

/// The lease as this shard holds it.
#[derive(Clone, Copy, Debug)]
struct Lease {
    epoch: u64,
    /// Until when the lease is surely held: the lease length counted from
    /// before the renewal was sent, less a margin for the store's own timing.
    valid_until: Instant,
}

#[derive(Debug)]
pub struct Ownership {
    store: Arc<dyn GameStore>,
    shard: ShardId,
    addr: String,
    ttl: Duration,
    lease: Mutex<Lease>,
    /// The live shards, this one included while its lease holds. Watchers
    /// learn of every change, to end streams of games that moved.
    members: watch::Sender<Arc<Vec<Member>>>,
    /// Fault drills: while set, the lease is not renewed.
    heartbeat_paused: Arc<AtomicBool>,
}

impl Ownership {
    pub async fn register(
        store: Arc<dyn GameStore>,
        shard: ShardId,
        addr: String,
        ttl: Duration,
        heartbeat_paused: Arc<AtomicBool>,
    ) -> Result<Arc<Ownership>, fogblast_store::StoreError> {
        let sent = Instant::now();
        let epoch = store.register(&shard, &addr, ttl).await?;
        let lease = Lease { epoch, valid_until: sent + safe_length(ttl) };
        let members = store.members().await?;
        info!(shard = %shard, epoch, addr = %addr, members = members.len(), "shard registered");
        let (members, _) = watch::channel(Arc::new(members));
        Ok(Arc::new(Ownership { store, shard, addr, ttl, lease: Mutex::new(lease), members, heartbeat_paused }))
    }

    /// The epoch to write with, while the lease holds.
    pub fn epoch(&self) -> Option<u64> {
        let lease = *self.lease.lock().expect("lease lock");
        (Instant::now() < lease.valid_until).then_some(lease.epoch)
    }

    pub fn serving(&self) -> bool {
        self.epoch().is_some()
    }

    /// The live shard that owns `game`, as this shard sees membership.
    pub fn owner_of(&self, game: &GameId) -> Option<Member> {
        let members = self.members.borrow().clone();
        let live: Vec<Member> = if self.serving() {
            members.iter().cloned().collect()
        } else {
            members.iter().filter(|m| m.shard != self.shard).cloned().collect()
        };
        placement::owner(game, &live).cloned()
    }

    /// The epoch to write `game` with, or `NOT_OWNER` naming the owner.
    pub fn check(&self, game: &GameId) -> Result<u64, ServiceError> {
        let Some(epoch) = self.epoch() else {
            return Err(ServiceError::not_owner(self.owner_of(game).map(|m| m.addr)));
        };
        match self.owner_of(game) {
            Some(owner) if owner.shard == self.shard => Ok(epoch),
            owner => Err(ServiceError::not_owner(owner.map(|m| m.addr))),
        }
    }

    pub fn owns(&self, game: &GameId) -> bool {
        self.check(game).is_ok()
    }

    pub fn changes(&self) -> watch::Receiver<Arc<Vec<Member>>> {
        self.members.subscribe()
    }

    /// Reads membership again.
    pub async fn refresh(&self) -> Result<(), fogblast_store::StoreError> {
        let mut members = self.store.members().await?;
        if !self.serving() {
            members.retain(|m| m.shard != self.shard);
        }
        members.sort_by(|a, b| a.shard.cmp(&b.shard));
        self.members.send_if_modified(|current| {
            let changed = **current != members;
            if changed {
                *current = Arc::new(members);
            }
            changed
        });
        Ok(())
    }

    /// Takes a new epoch, newer than any the store recorded on a game this
    /// shard now owns (after a shard that joined later left again).
    pub async fn reregister(&self) -> Result<u64, fogblast_store::StoreError> {
        let sent = Instant::now();
        let epoch = self.store.register(&self.shard, &self.addr, self.ttl).await?;
        *self.lease.lock().expect("lease lock") = Lease { epoch, valid_until: sent + safe_length(self.ttl) };
        info!(shard = %self.shard, epoch, "shard registered again with a new epoch");
        self.refresh().await?;
        Ok(epoch)
    }

    /// Renews the lease every third of its length and refreshes membership,
    /// until `stop` is set.
    pub async fn heartbeat(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let period = self.ttl / 3;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(period) => {}
                _ = stop.changed() => return,
            }
            if self.heartbeat_paused.load(Ordering::Relaxed) {
                continue;
            }
            if let Err(error) = self.beat().await {
                warn!(shard = %self.shard, %error, "heartbeat failed");
            }
        }
    }

    async fn beat(&self) -> Result<(), fogblast_store::StoreError> {
        let lease = *self.lease.lock().expect("lease lock");
        let sent = Instant::now();
        let renewed = sent < lease.valid_until && self.store.renew(&self.shard, lease.epoch, self.ttl).await?;
        if renewed {
            let mut current = self.lease.lock().expect("lease lock");
            if current.epoch == lease.epoch {
                current.valid_until = sent + safe_length(self.ttl);
            }
        } else {
            warn!(shard = %self.shard, epoch = lease.epoch, "lease lost: stopped serving until registered again");
            self.lease.lock().expect("lease lock").valid_until = Instant::now();
            self.refresh().await?;
            self.reregister().await?;
            return Ok(());
        }
        self.refresh().await
    }

    /// Gives the lease up, so this shard's games move at once.
    pub async fn leave(&self) {
        let epoch = self.lease.lock().expect("lease lock").epoch;
        self.lease.lock().expect("lease lock").valid_until = Instant::now();
        if let Err(error) = self.store.deregister(&self.shard, epoch).await {
            warn!(shard = %self.shard, %error, "could not drop the lease; it will expire");
        }
        let _ = self.refresh().await;
    }
}

/// The part of the lease a shard relies on: the store may expire a lease a
/// little early by its own clock, so the last tenth is not used.
fn safe_length(ttl: Duration) -> Duration {
    ttl - ttl / 10
}
