//! Which replica pairs which pool, and when. Every replica registers in
//! Redis with a heartbeat; each pool has a preferred replica (the highest
//! rendezvous hash of pool and replica over the live ones), which takes a
//! free pool's lease at its next tick, while any other replica takes it
//! only after several ticks, so a pool whose holder died moves within a
//! lease and the pools spread over the replicas. The holder of a pool
//! renews its lease every third of its length, runs a wave whenever the
//! pool's timer is due or enough seekers wait, hands the pool to its
//! preferred replica when idle between pairings, and lets go of a pool
//! that stayed empty.
//!
//! The lobby publisher lives here too: it coalesces this replica's lobby
//! changes into one lobby notice per `lobby_publish_ms`.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use fogblast_proto::notices::LOBBY_SUBJECT;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::{info, warn};

use crate::core::Matchmaker;
use crate::notices;
use crate::pool::PoolKey;

/// A non-preferred replica tries for a free pool once per this many ticks.
const FALLBACK_TICKS: u64 = 5;
/// How often expired boards are swept from the lobby (more often for short board lifetimes).
const BOARD_SWEEP: Duration = Duration::from_secs(5);

fn rendezvous(pool: &str, replica: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in pool.bytes().chain([0]).chain(replica.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // A final mix so that similar names spread.
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^ (hash >> 33)
}

/// The replica that should pair `pool`, among `replicas`.
pub fn preferred<'a>(pool: &str, replicas: &'a [String]) -> Option<&'a str> {
    replicas.iter().max_by_key(|r| (rendezvous(pool, r), r.as_str())).map(String::as_str)
}

impl Matchmaker {
    fn prefers_me(&self, pool: &str) -> bool {
        let replicas = self.replicas.read().unwrap_or_else(PoisonError::into_inner).clone();
        preferred(pool, &replicas).is_none_or(|r| r == self.replica)
    }

    async fn heartbeat(&self) {
        match self.store.heartbeat(&self.replica, self.config.settings.lease()).await {
            Ok(mut live) => {
                if !live.contains(&self.replica) {
                    live.push(self.replica.clone());
                }
                *self.replicas.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(live);
                self.metrics.ready.store(true, Ordering::Relaxed);
            }
            Err(error) => {
                warn!(%error, "heartbeat failed");
                self.metrics.ready.store(false, Ordering::Relaxed);
            }
        }
    }

    /// Looks after pools until `stop`, then lets go of every lease.
    pub(crate) async fn manage_pools(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut workers: HashMap<String, JoinHandle<()>> = HashMap::new();
        let heartbeat_every = self.config.settings.lease() / 3;
        let mut last_heartbeat: Option<Instant> = None;
        let mut tick: u64 = 0;
        loop {
            if last_heartbeat.is_none_or(|at| at.elapsed() >= heartbeat_every) {
                self.heartbeat().await;
                last_heartbeat = Some(Instant::now());
            }
            workers.retain(|_, worker| !worker.is_finished());
            match self.store.pools().await {
                Ok(pools) => {
                    for name in pools {
                        if workers.contains_key(&name) {
                            continue;
                        }
                        let Some(pool) = PoolKey::parse(&name) else { continue };
                        if !self.prefers_me(&name) && !tick.is_multiple_of(FALLBACK_TICKS) {
                            continue;
                        }
                        match self.store.acquire_lease(&name, &self.replica, self.config.settings.lease()).await {
                            Ok(Some(token)) => {
                                let worker = tokio::spawn(self.clone().work_pool(pool, token, stop.clone()));
                                workers.insert(name, worker);
                            }
                            Ok(None) => {}
                            Err(error) => warn!(pool = %name, %error, "could not ask for a pool's lease"),
                        }
                    }
                }
                Err(error) => warn!(%error, "could not read the pools"),
            }
            tick += 1;
            tokio::select! {
                _ = tokio::time::sleep(self.config.settings.tick()) => {}
                _ = stop.changed() => break,
            }
        }
        for (_, worker) in workers {
            let _ = worker.await;
        }
        if let Err(error) = self.store.leave(&self.replica).await {
            warn!(%error, "could not leave the replica set");
        }
    }

    /// Holds one pool's lease and runs its waves.
    async fn work_pool(self: Arc<Self>, pool: PoolKey, token: String, mut stop: watch::Receiver<bool>) {
        let name = pool.name();
        let lease = self.config.settings.lease();
        let mut renewed = Instant::now();
        let mut idle_since: Option<Instant> = None;
        // Seeks left waiting by the last wave: an early wave needs newcomers.
        let mut left_waiting = 0;
        let mut lost = false;
        self.metrics.pools_held.inc();
        info!(pool = %name, token = %token, "pool lease taken");
        loop {
            tokio::select! {
                _ = tokio::time::sleep(self.config.settings.tick()) => {}
                _ = stop.changed() => break,
            }
            if renewed.elapsed() >= lease / 3 {
                let sent = Instant::now();
                match self.store.renew_lease(&name, &token, lease).await {
                    Ok(true) => renewed = sent,
                    Ok(false) => {
                        lost = true;
                        break;
                    }
                    Err(error) => {
                        warn!(pool = %name, %error, "could not renew a pool's lease");
                        if renewed.elapsed() >= lease {
                            lost = true;
                            break;
                        }
                        continue;
                    }
                }
            }
            let status = match self.store.pool_status(&name).await {
                Ok(status) => status,
                Err(error) => {
                    warn!(pool = %name, %error, "could not read a pool");
                    continue;
                }
            };
            let timer_due = status.now_ms >= status.last_wave_ms.saturating_add(self.config.settings.wave_ms);
            // As in lichess's pools: on the timer, or as soon as enough
            // seekers wait and someone new came since the last wave.
            let full = status.seeks >= self.config.settings.wave_players.max(2) && status.seeks > left_waiting;
            let due = full || (timer_due && (status.seeks > 0 || status.pending > self.inflight_in(&name)));
            if due {
                match self.run_wave(&pool, &token).await {
                    Ok(Some(report)) => left_waiting = report.seeks.len().saturating_sub(2 * report.paired.len()),
                    Ok(None) => {
                        lost = true;
                        break;
                    }
                    Err(error) => warn!(pool = %name, %error, "wave failed"),
                }
            }
            let busy = status.seeks > 0 || status.pending > 0 || self.inflight_in(&name) > 0;
            if busy {
                idle_since = None;
            }
            // Hand the pool to the replica it belongs to, between pairings.
            if !self.prefers_me(&name) && status.pending == 0 && self.inflight_in(&name) == 0 {
                break;
            }
            if !busy {
                let since = *idle_since.get_or_insert_with(Instant::now);
                let idle = lease.max(Duration::from_millis(self.config.settings.wave_ms.saturating_mul(3)));
                if since.elapsed() >= idle {
                    match self.store.forget_pool(&name, idle).await {
                        Ok(true) => {
                            // A seek may have slipped in meanwhile: keep the pool known.
                            if matches!(self.store.pool_status(&name).await, Ok(s) if s.seeks > 0 || s.pending > 0) {
                                let _ = self.store.pool_seen(&name).await;
                            }
                            break;
                        }
                        Ok(false) => idle_since = None,
                        Err(error) => warn!(pool = %name, %error, "could not forget an idle pool"),
                    }
                }
            }
        }
        if !lost {
            // Pairings still being made carry this token: let them finish first.
            let deadline = Instant::now() + Duration::from_secs(3);
            while self.inflight_in(&name) > 0 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if let Err(error) = self.store.release_lease(&name, &token).await {
                warn!(pool = %name, %error, "could not release a pool's lease");
            }
        } else {
            warn!(pool = %name, "pool lease lost");
        }
        self.metrics.pools_held.dec();
    }

    /// Publishes the lobby after changes made here, and sweeps expired boards.
    pub(crate) async fn publish_lobby(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut last_sweep = Instant::now();
        let sweep_every = BOARD_SWEEP
            .min(Duration::from_millis(self.config.settings.board_ttl_ms / 4).max(Duration::from_millis(100)));
        loop {
            let sweep_in = sweep_every.saturating_sub(last_sweep.elapsed());
            tokio::select! {
                _ = self.lobby_changed.notified() => {
                    tokio::time::sleep(Duration::from_millis(self.config.settings.lobby_publish_ms)).await;
                }
                _ = tokio::time::sleep(sweep_in) => {
                    last_sweep = Instant::now();
                    let swept = match self.store.now_ms().await {
                        Ok(now) => self.store.sweep_boards(now).await,
                        Err(error) => Err(error),
                    };
                    match swept {
                        Ok(0) => continue,
                        Ok(_) => {}
                        Err(error) => {
                            warn!(%error, "could not sweep the lobby");
                            continue;
                        }
                    }
                }
                _ = stop.changed() => return,
            }
            if let Err(error) = self.publish_lobby_now().await {
                warn!(%error, "could not publish the lobby");
            }
        }
    }

    /// One lobby notice with the current list.
    pub async fn publish_lobby_now(&self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let version = self.store.bump_lobby_version().await?;
        let (_, boards) = self.lobby(None, self.config.settings.lobby_max).await?;
        self.bus.publish(LOBBY_SUBJECT, Vec::new(), notices::lobby(version, &boards)).await?;
        self.metrics.lobby_frames.inc();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_spread_over_replicas_and_move_only_when_theirs_leaves() {
        let replicas: Vec<String> = (0..3).map(|i| format!("mm-{i}")).collect();
        let pools: Vec<String> = (0..60).map(|i| format!("atomic-{}+0-rated", 60_000 + i * 1000)).collect();
        let mut counts = HashMap::new();
        for pool in &pools {
            *counts.entry(preferred(pool, &replicas).unwrap().to_owned()).or_insert(0) += 1;
        }
        assert_eq!(counts.len(), 3, "{counts:?}");
        assert!(counts.values().all(|n| *n >= 8), "{counts:?}");
        let fewer = &replicas[..2];
        for pool in &pools {
            let before = preferred(pool, &replicas).unwrap();
            if before != "mm-2" {
                assert_eq!(preferred(pool, fewer).unwrap(), before);
            }
        }
        assert_eq!(preferred("x", &[]), None);
    }
}
