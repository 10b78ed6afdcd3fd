//! This shard's membership lease and its view of the other shards: which
//! games it owns, and when it must stop serving.
//!
//! The lease is renewed every third of its length. A shard that could not
//! renew before its lease ran out stops serving at once (self-fencing: it
//! may have been paused or cut off while another shard took its games),
//! then registers again with a new, higher epoch. Every write carries the
//! epoch, so a shard that missed this and writes anyway is refused by the
//! store once the new owner has written.
//!
//! Between heartbeats, membership is read again every `--peer-check-ms`,
//! and the other shards' ports are probed: a shard whose port refuses
//! connections has died (a frozen or cut-off one keeps its port, and is
//! left to its lease), so its lease is dropped at once and its games move
//! within a probe or two instead of after the lease runs out.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use fogblast_proto::error::ServiceError;
use fogblast_proto::ids::{GameId, ShardId};
use fogblast_store::{placement, GameStore, Member};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{debug, info, warn};

/// How long a probe of a peer's port may take; a peer that does not answer
/// in time is not judged by it (it may be frozen, busy or far away).
const PROBE_TIMEOUT: Duration = Duration::from_millis(200);

/// Membership is read again before a refusal only if older than this.
const REFRESH_DEBOUNCE: Duration = Duration::from_millis(20);
/// How long a shard starting up keeps trying to register while the store
/// refuses (its replicas not yet linked, say) before it gives up.
const REGISTER_PATIENCE: Duration = Duration::from_secs(60);

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
    /// When this shard registered or last saw membership change: for a
    /// while after, another shard's view may still differ from its own.
    settled_from: Mutex<Instant>,
    /// When membership was last read, so refusals do not read it again and again.
    refreshed_at: Mutex<Instant>,
    /// Fault drills: while set, the lease is not renewed.
    heartbeat_paused: Arc<AtomicBool>,
    /// Fault drills: while set, membership is not read again.
    view_frozen: Arc<AtomicBool>,
    /// A shard with a newer epoch than this one's left: the games this
    /// shard takes from it carry that epoch, and a commit at this shard's
    /// older one would be refused, so a new epoch is taken first.
    outranked: AtomicBool,
    /// Held while a new epoch is taken for that, so no command reads the
    /// old epoch meanwhile.
    outranking: tokio::sync::Mutex<()>,
    /// Set once the shard gave its lease up to shut down: from then on it
    /// never registers again, or it would come back as a member that is
    /// about to exit and its games would wait for that lease to run out.
    left: AtomicBool,
    /// Told when watchers must look again at the games they follow though
    /// membership did not change (see [`Ownership::rechecks`]).
    rechecks: watch::Sender<()>,
}

/// Registers `shard`, trying again while the store refuses for up to
/// [`REGISTER_PATIENCE`]: the epoch and when the successful attempt was
/// sent (its lease counts from then).
async fn register_patiently(
    store: &dyn GameStore,
    shard: &ShardId,
    addr: &str,
    ttl: Duration,
) -> Result<(u64, Instant), fogblast_store::StoreError> {
    let started = Instant::now();
    let mut wait = Duration::from_millis(100);
    loop {
        let sent = Instant::now();
        match store.register(shard, addr, ttl).await {
            Ok(epoch) => return Ok((epoch, sent)),
            Err(error) if started.elapsed() < REGISTER_PATIENCE => {
                warn!(shard = %shard, %error, "could not register yet; trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            Err(error) => return Err(error),
        }
    }
}

impl Ownership {
    pub async fn register(
        store: Arc<dyn GameStore>,
        shard: ShardId,
        addr: String,
        ttl: Duration,
        heartbeat_paused: Arc<AtomicBool>,
        view_frozen: Arc<AtomicBool>,
    ) -> Result<Arc<Ownership>, fogblast_store::StoreError> {
        let (epoch, sent) = register_patiently(store.as_ref(), &shard, &addr, ttl).await?;
        let lease = Lease { epoch, valid_until: sent + safe_length(ttl) };
        let members = store.members().await?;
        info!(shard = %shard, epoch, addr = %addr, members = members.len(), "shard registered");
        let (members, _) = watch::channel(Arc::new(members));
        let settled_from = Mutex::new(Instant::now() + ttl * 2);
        let (rechecks, _) = watch::channel(());
        let ownership = Arc::new(Ownership {
            store,
            shard,
            addr,
            ttl,
            lease: Mutex::new(lease),
            members,
            settled_from,
            refreshed_at: Mutex::new(Instant::now()),
            heartbeat_paused,
            view_frozen,
            outranked: AtomicBool::new(false),
            outranking: tokio::sync::Mutex::new(()),
            left: AtomicBool::new(false),
            rechecks,
        });
        tokio::spawn(signal_rechecks(Arc::downgrade(&ownership), recheck_period(ttl)));
        Ok(ownership)
    }

    /// The epoch to write with, while the lease holds.
    pub fn epoch(&self) -> Option<u64> {
        let lease = *self.lease.lock().expect("lease lock");
        (Instant::now() < lease.valid_until).then_some(lease.epoch)
    }

    pub fn serving(&self) -> bool {
        self.epoch().is_some()
    }

    /// Runs `f` on the owner of `game` among the members this shard sees
    /// live (itself only while `serving`), without copying membership: it
    /// is asked on every command and by every watcher.
    fn with_owner<T>(&self, game: &GameId, serving: bool, f: impl FnOnce(Option<&Member>) -> T) -> T {
        let members = self.members.borrow();
        let live = members.iter().filter(|m| serving || m.shard != self.shard);
        f(placement::owner_among(game, live))
    }

    /// The epoch to write `game` with, or `NOT_OWNER` naming the owner.
    pub fn check(&self, game: &GameId) -> Result<u64, ServiceError> {
        let epoch = self.epoch();
        self.with_owner(game, epoch.is_some(), |owner| match (epoch, owner) {
            (Some(epoch), Some(owner)) if owner.shard == self.shard => Ok(epoch),
            (_, owner) => Err(ServiceError::not_owner(owner.map(|m| m.addr.clone()))),
        })
    }

    /// [`check`](Self::check), with membership read again before a
    /// refusal: right after another shard died or joined, this shard's view
    /// may be the stale one, and a `NOT_OWNER` must name the owner by the
    /// current membership.
    pub async fn check_fresh(&self, game: &GameId) -> Result<u64, ServiceError> {
        match self.check(game) {
            Ok(epoch) => Ok(epoch),
            Err(_) => {
                // Many refusals at once (a gateway with a stale view) cost
                // the store one read.
                let stale = self.refreshed_at.lock().expect("refreshed lock").elapsed() >= REFRESH_DEBOUNCE;
                if stale {
                    if let Err(error) = self.refresh().await {
                        debug!(%error, "membership not read again");
                    }
                }
                self.check(game)
            }
        }
    }

    pub fn owns(&self, game: &GameId) -> bool {
        self.check(game).is_ok()
    }

    /// Whether membership changed lately (two leases ago or less): until
    /// every shard has seen the change, one with an older view may still
    /// write games this shard owns, which this shard's broadcast never
    /// carries, so its watchers read the store instead.
    pub fn unsettled(&self) -> bool {
        Instant::now() < *self.settled_from.lock().expect("settled lock")
    }

    pub fn changes(&self) -> watch::Receiver<Arc<Vec<Member>>> {
        self.members.subscribe()
    }

    /// Told when what [`owns`](Self::owns) answers may have changed
    /// without a membership change (this shard's lease ran out, or was
    /// taken again), and every [`recheck_period`] while membership is
    /// [unsettled](Self::unsettled), when watchers read the store. One
    /// task looks for every watcher, so a shard with thousands of quiet
    /// games does not wake each of them a few times a second.
    pub fn rechecks(&self) -> watch::Receiver<()> {
        self.rechecks.subscribe()
    }

    /// Reads membership again.
    pub async fn refresh(&self) -> Result<(), fogblast_store::StoreError> {
        if self.view_frozen.load(Ordering::Relaxed) {
            return Ok(());
        }
        *self.refreshed_at.lock().expect("refreshed lock") = Instant::now();
        let mut members = self.store.members().await?;
        if !self.serving() {
            members.retain(|m| m.shard != self.shard);
        }
        members.sort_by(|a, b| a.shard.cmp(&b.shard));
        let epoch = self.lease.lock().expect("lease lock").epoch;
        let newer_left = self.members.borrow().iter().any(|old| {
            old.shard != self.shard
                && old.epoch > epoch
                && !members.iter().any(|m| m.shard == old.shard && m.epoch == old.epoch)
        });
        if newer_left {
            self.outranked.store(true, Ordering::Relaxed);
        }
        let changed = self.members.send_if_modified(|current| {
            let changed = **current != members;
            if changed {
                *current = Arc::new(members);
            }
            changed
        });
        if changed {
            *self.settled_from.lock().expect("settled lock") = Instant::now() + self.ttl * 2;
        }
        Ok(())
    }

    /// Takes a new epoch if a shard with a newer one left since the last
    /// look, before this shard writes any of the games it took over.
    pub async fn outrank_departed(&self) -> Result<(), fogblast_store::StoreError> {
        let _taking = self.outranking.lock().await;
        if self.outranked.swap(false, Ordering::Relaxed) {
            self.reregister().await?;
        }
        Ok(())
    }

    /// Takes a new epoch, newer than any the store recorded on a game this
    /// shard now owns (after a shard that joined later left again).
    pub async fn reregister(&self) -> Result<u64, fogblast_store::StoreError> {
        if self.left.load(Ordering::Relaxed) {
            return Err(fogblast_store::StoreError::new("the shard is shutting down"));
        }
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
        if self.left.load(Ordering::Relaxed) {
            return self.refresh().await;
        }
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

    /// Reads membership every `period` and probes the other shards' ports,
    /// dropping the lease of any that refuses connections, until `stop` is
    /// set. Only a peer this shard has reached before is judged, so a
    /// network that never let the shards reach each other (a policy that
    /// rejects the traffic) turns this off rather than evicting everyone.
    pub async fn watch_peers(self: Arc<Self>, period: Duration, mut stop: watch::Receiver<bool>) {
        let mut reached: HashSet<(ShardId, u64)> = HashSet::new();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(period) => {}
                _ = stop.changed() => return,
            }
            if let Err(error) = self.refresh().await {
                debug!(%error, "membership not read again");
                continue;
            }
            if let Err(error) = self.outrank_departed().await {
                warn!(%error, "could not take a new epoch");
            }
            let peers: Vec<Member> = self.members.borrow().iter().filter(|m| m.shard != self.shard).cloned().collect();
            reached.retain(|(shard, epoch)| peers.iter().any(|m| &m.shard == shard && m.epoch == *epoch));
            let probes = peers.into_iter().map(|member| async move { (probe(&member.addr).await, member) });
            let mut dropped = false;
            for (probe, member) in futures::future::join_all(probes).await {
                let key = (member.shard.clone(), member.epoch);
                match probe {
                    Probe::Reached => {
                        reached.insert(key);
                    }
                    Probe::Refused if reached.contains(&key) => {
                        warn!(peer = %member.shard, addr = %member.addr, epoch = member.epoch,
                            "shard refuses connections: dropping its lease so its games move now");
                        match self.store.deregister(&member.shard, member.epoch).await {
                            Ok(()) => dropped = true,
                            Err(error) => warn!(peer = %member.shard, %error, "could not drop the lease"),
                        }
                    }
                    Probe::Refused | Probe::Unknown => {}
                }
            }
            if dropped {
                if let Err(error) = self.refresh().await {
                    debug!(%error, "membership not read again");
                }
            }
        }
    }

    /// Gives the lease up, so this shard's games move at once.
    pub async fn leave(&self) {
        self.left.store(true, Ordering::Relaxed);
        let epoch = self.lease.lock().expect("lease lock").epoch;
        self.lease.lock().expect("lease lock").valid_until = Instant::now();
        if let Err(error) = self.store.deregister(&self.shard, epoch).await {
            warn!(shard = %self.shard, %error, "could not drop the lease; it will expire");
        }
        let _ = self.refresh().await;
    }
}

/// What a connection attempt to a peer's port said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    /// Something listens there.
    Reached,
    /// Nothing does: the process is gone.
    Refused,
    /// No answer in time, or an error that says nothing about the peer.
    Unknown,
}

/// How often [`signal_rechecks`] looks: a shard whose lease ran out ends
/// its watchers' streams within this.
fn recheck_period(ttl: Duration) -> Duration {
    RECHECK.min(ttl / 3).max(Duration::from_millis(1))
}

const RECHECK: Duration = Duration::from_millis(250);

/// Signals [`Ownership::rechecks`] until the ownership is dropped.
async fn signal_rechecks(ownership: Weak<Ownership>, period: Duration) {
    let mut was_serving = match ownership.upgrade() {
        Some(ownership) => ownership.serving(),
        None => return,
    };
    loop {
        tokio::time::sleep(period).await;
        let Some(ownership) = ownership.upgrade() else { return };
        let serving = ownership.serving();
        if serving != was_serving || ownership.unsettled() {
            ownership.rechecks.send_replace(());
        }
        was_serving = serving;
    }
}

async fn probe(addr: &str) -> Probe {
    let target = addr.split_once("://").map_or(addr, |(_, rest)| rest).trim_end_matches('/');
    match tokio::time::timeout(PROBE_TIMEOUT, TcpStream::connect(target)).await {
        Ok(Ok(_)) => Probe::Reached,
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::ConnectionRefused => Probe::Refused,
        _ => Probe::Unknown,
    }
}

/// The part of the lease a shard relies on: the store may expire a lease a
/// little early by its own clock, so the last tenth is not used.
fn safe_length(ttl: Duration) -> Duration {
    ttl - ttl / 10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_probe_tells_a_listening_port_from_a_closed_one() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        assert_eq!(probe(&addr).await, Probe::Reached);
        drop(listener);
        assert_eq!(probe(&addr).await, Probe::Refused);
    }

    /// A shard draining after SIGTERM still runs its heartbeat: finding its
    /// given-up lease "lost", it must not register again, or the other
    /// shards would route its games to a process about to exit.
    #[tokio::test]
    async fn a_shard_that_left_never_registers_again() {
        let store: Arc<dyn GameStore> = Arc::new(fogblast_store::MemoryStore::new());
        let shard = ShardId::parse("shard-leaving").unwrap();
        let quiet = || Arc::new(AtomicBool::new(false));
        let ownership = Ownership::register(
            store.clone(),
            shard.clone(),
            "http://127.0.0.1:1".into(),
            Duration::from_secs(3),
            quiet(),
            quiet(),
        )
        .await
        .unwrap();
        assert!(store.members().await.unwrap().iter().any(|m| m.shard == shard));
        ownership.leave().await;
        ownership.beat().await.unwrap();
        assert!(ownership.reregister().await.is_err());
        assert!(!store.members().await.unwrap().iter().any(|m| m.shard == shard), "the shard came back");
        assert!(!ownership.serving());
    }
}
