//! The matchmaker's store in this process's memory, for `fogblast up`: one
//! replica, no Redis. It keeps the Redis adapter's behaviour, TTLs and
//! fencing included (each method holds one lock for the whole of its
//! check-and-write, as each Lua script is atomic), so the matchmaker runs
//! the same code on a laptop as in production; `tests/store.rs` holds both
//! adapters to the same assertions.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use crate::store::{
    BoardRecord, Cleared, Fenced, Lock, MatchBackend, PendingPairing, PlayerSeek, PoolStatus, Seek, SeekEntry,
    StoreError, WaveSnapshot, PLAYER_TTL_MS,
};

/// An in-process [`MatchBackend`].
#[derive(Debug, Default)]
pub struct MemoryMatchStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The last time handed out, so the clock never goes back.
    last_ms: u64,
    /// Live replicas by id: their registration's expiry.
    replicas: HashMap<String, u64>,
    /// Pools by name: when a seek last arrived.
    pools: HashMap<String, u64>,
    pool: HashMap<String, Pool>,
    players: HashMap<String, Player>,
    /// A pairing holding a player, and when that lock expires.
    busy: HashMap<String, (String, u64)>,
    /// Each player's open boards.
    boards: HashMap<String, BTreeSet<String>>,
    lobby: BTreeMap<String, BoardRecord>,
    lobby_version: u64,
}

#[derive(Debug, Default)]
struct Pool {
    seeks: BTreeMap<String, Seek>,
    /// Waves run so far.
    wave: u64,
    last_wave_ms: Option<u64>,
    /// The lease token and when it expires.
    lease: Option<(String, u64)>,
    fence: u64,
    pending: BTreeMap<String, PendingPairing>,
}

/// A player's hash: the one current seek, and recent colours.
#[derive(Debug, Default)]
struct Player {
    /// Seek id, pool, spec.
    seek: Option<(String, String, String)>,
    colors: String,
    expires_ms: u64,
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl State {
    fn now_ms(&mut self) -> u64 {
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, ms);
        self.last_ms = self.last_ms.max(wall);
        self.last_ms
    }

    /// The player's hash, unless it expired (then it is gone, as in Redis).
    fn player(&mut self, player: &str, now: u64) -> Option<&mut Player> {
        if self.players.get(player).is_some_and(|p| p.expires_ms <= now) {
            self.players.remove(player);
        }
        self.players.get_mut(player)
    }

    fn busy_holder(&mut self, player: &str, now: u64) -> Option<String> {
        if self.busy.get(player).is_some_and(|(_, expires)| *expires <= now) {
            self.busy.remove(player);
        }
        self.busy.get(player).map(|(pairing, _)| pairing.clone())
    }

    fn lease_holder(&mut self, pool: &str, now: u64) -> Option<String> {
        let pool = self.pool.get_mut(pool)?;
        if pool.lease.as_ref().is_some_and(|(_, expires)| *expires <= now) {
            pool.lease = None;
        }
        pool.lease.as_ref().map(|(token, _)| token.clone())
    }

    fn holds(&mut self, pool: &str, token: &str, now: u64) -> bool {
        self.lease_holder(pool, now).as_deref() == Some(token)
    }

    fn close_board(&mut self, game: &str, player: Option<&str>) -> Option<BoardRecord> {
        let board = self.lobby.get(game)?;
        if player.is_some_and(|player| board.player != player) {
            return None;
        }
        let board = self.lobby.remove(game)?;
        if let Some(games) = self.boards.get_mut(&board.player) {
            games.remove(game);
            if games.is_empty() {
                self.boards.remove(&board.player);
            }
        }
        Some(board)
    }

    /// Drops what has expired, so a long-running process does not grow.
    fn purge(&mut self, now: u64) {
        self.players.retain(|_, p| p.expires_ms > now);
        self.busy.retain(|_, (_, expires)| *expires > now);
        for pool in self.pool.values_mut() {
            if pool.lease.as_ref().is_some_and(|(_, expires)| *expires <= now) {
                pool.lease = None;
            }
        }
    }
}

impl MemoryMatchStore {
    pub fn new() -> MemoryMatchStore {
        MemoryMatchStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every method leaves the state consistent before anything can
        // panic, so a poisoned lock still guards good data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl MatchBackend for MemoryMatchStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(self.lock().now_ms())
    }

    async fn heartbeat(&self, replica: &str, ttl: Duration) -> Result<Vec<String>, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        state.replicas.insert(replica.to_owned(), now.saturating_add(ms(ttl)));
        state.replicas.retain(|_, expires| *expires > now);
        state.purge(now);
        let mut live: Vec<(u64, String)> = state.replicas.iter().map(|(id, expires)| (*expires, id.clone())).collect();
        live.sort();
        Ok(live.into_iter().map(|(_, id)| id).collect())
    }

    async fn leave(&self, replica: &str) -> Result<(), StoreError> {
        self.lock().replicas.remove(replica);
        Ok(())
    }

    async fn pool_seen(&self, pool: &str) -> Result<(), StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        state.pools.insert(pool.to_owned(), now);
        Ok(())
    }

    async fn pools(&self) -> Result<Vec<String>, StoreError> {
        let state = self.lock();
        let mut pools: Vec<(u64, String)> = state.pools.iter().map(|(name, seen)| (*seen, name.clone())).collect();
        pools.sort();
        Ok(pools.into_iter().map(|(_, name)| name).collect())
    }

    async fn forget_pool(&self, pool: &str, idle: Duration) -> Result<bool, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        match state.pools.get(pool) {
            Some(seen) if seen.saturating_add(ms(idle)) < now => {
                state.pools.remove(pool);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn acquire_lease(&self, pool: &str, replica: &str, ttl: Duration) -> Result<Option<String>, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        let holder = state.lease_holder(pool, now);
        let entry = state.pool.entry(pool.to_owned()).or_default();
        let expires = now.saturating_add(ms(ttl));
        if let Some(holder) = holder {
            if holder.strip_prefix(replica).is_some_and(|rest| rest.starts_with(':')) {
                entry.lease = Some((holder.clone(), expires));
                return Ok(Some(holder));
            }
            return Ok(None);
        }
        entry.fence += 1;
        let token = format!("{replica}:{}", entry.fence);
        entry.lease = Some((token.clone(), expires));
        Ok(Some(token))
    }

    async fn renew_lease(&self, pool: &str, token: &str, ttl: Duration) -> Result<bool, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if !state.holds(pool, token, now) {
            return Ok(false);
        }
        if let Some(entry) = state.pool.get_mut(pool) {
            entry.lease = Some((token.to_owned(), now.saturating_add(ms(ttl))));
        }
        Ok(true)
    }

    async fn release_lease(&self, pool: &str, token: &str) -> Result<(), StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if state.holds(pool, token, now) {
            if let Some(entry) = state.pool.get_mut(pool) {
                entry.lease = None;
            }
        }
        Ok(())
    }

    async fn player_seek(
        &self,
        player: &str,
        seek: &str,
        pool: &str,
        spec: &str,
        force: bool,
    ) -> Result<PlayerSeek, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if state.busy_holder(player, now).is_some() {
            return Ok(PlayerSeek::Busy);
        }
        let _ = state.player(player, now);
        let record = state.players.entry(player.to_owned()).or_default();
        let colors = record.colors.clone();
        if let Some((current, current_pool, current_spec)) = &record.seek {
            if current_spec == spec && !force {
                return Ok(PlayerSeek::Same { seek: current.clone(), pool: current_pool.clone(), colors });
            }
        }
        let old = record.seek.replace((seek.to_owned(), pool.to_owned(), spec.to_owned()));
        record.expires_ms = now.saturating_add(PLAYER_TTL_MS);
        Ok(PlayerSeek::New { old: old.map(|(seek, pool, _)| (seek, pool)), colors })
    }

    async fn clear_player_seek(&self, player: &str, seek: Option<&str>) -> Result<Cleared, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if state.busy_holder(player, now).is_some() {
            return Ok(Cleared::Busy);
        }
        let Some(record) = state.player(player, now) else { return Ok(Cleared::Nothing) };
        match &record.seek {
            Some((current, _, _)) if seek.is_none_or(|seek| seek == current) => {
                let (seek, pool, _) = record.seek.take().expect("just matched");
                Ok(Cleared::Seek { seek, pool })
            }
            _ => Ok(Cleared::Nothing),
        }
    }

    async fn add_seek(&self, pool: &str, seek: &str, entry: &SeekEntry) -> Result<u64, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        let pool = state.pool.entry(pool.to_owned()).or_default();
        let stored = Seek { id: seek.to_owned(), created_ms: now, joined_wave: pool.wave, entry: entry.clone() };
        pool.seeks.insert(seek.to_owned(), stored);
        Ok(now)
    }

    async fn has_seek(&self, pool: &str, seek: &str) -> Result<bool, StoreError> {
        Ok(self.lock().pool.get(pool).is_some_and(|p| p.seeks.contains_key(seek)))
    }

    async fn remove_seek(&self, pool: &str, seek: &str) -> Result<bool, StoreError> {
        Ok(self.lock().pool.get_mut(pool).is_some_and(|p| p.seeks.remove(seek).is_some()))
    }

    async fn pool_status(&self, pool: &str) -> Result<PoolStatus, StoreError> {
        let mut state = self.lock();
        let now_ms = state.now_ms();
        let (seeks, pending, last_wave_ms) =
            state.pool.get(pool).map_or((0, 0, 0), |p| (p.seeks.len(), p.pending.len(), p.last_wave_ms.unwrap_or(0)));
        Ok(PoolStatus { seeks, pending, last_wave_ms, now_ms })
    }

    async fn begin_wave(&self, pool: &str, token: &str) -> Result<Option<WaveSnapshot>, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if !state.holds(pool, token, now) {
            return Ok(None);
        }
        let pool = state.pool.entry(pool.to_owned()).or_default();
        pool.wave += 1;
        pool.last_wave_ms = Some(now);
        Ok(Some(WaveSnapshot {
            wave: pool.wave,
            now_ms: now,
            seeks: pool.seeks.values().cloned().collect(),
            pending: pool.pending.values().cloned().collect(),
            unreadable: Vec::new(),
        }))
    }

    async fn lock_player(&self, player: &str, seek: &str, pairing: &str, ttl: Duration) -> Result<Lock, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        match state.busy_holder(player, now) {
            Some(holder) if holder == pairing => return Ok(Lock::Ok),
            Some(_) => return Ok(Lock::Busy),
            None => {}
        }
        let current = state.player(player, now).and_then(|p| p.seek.as_ref().map(|(s, _, _)| s.clone()));
        if current.as_deref() != Some(seek) {
            return Ok(Lock::Stale);
        }
        state.busy.insert(player.to_owned(), (pairing.to_owned(), now.saturating_add(ms(ttl))));
        Ok(Lock::Ok)
    }

    async fn unlock_player(&self, player: &str, pairing: &str, consumed: Option<&str>) -> Result<(), StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if state.busy_holder(player, now).as_deref() == Some(pairing) {
            state.busy.remove(player);
        }
        if let (Some(consumed), Some(record)) = (consumed.filter(|c| !c.is_empty()), state.player(player, now)) {
            if record.seek.as_ref().is_some_and(|(seek, _, _)| seek == consumed) {
                record.seek = None;
            }
        }
        Ok(())
    }

    async fn commit_pair(&self, pool: &str, token: &str, pairing: &PendingPairing) -> Result<Fenced, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if !state.holds(pool, token, now) {
            return Ok(Fenced::Fenced);
        }
        let pool = state.pool.entry(pool.to_owned()).or_default();
        if pool.pending.contains_key(&pairing.id) {
            return Ok(Fenced::Ok);
        }
        if !pool.seeks.contains_key(&pairing.white.seek) || !pool.seeks.contains_key(&pairing.black.seek) {
            return Ok(Fenced::Gone);
        }
        pool.seeks.remove(&pairing.white.seek);
        pool.seeks.remove(&pairing.black.seek);
        pool.pending.insert(pairing.id.clone(), pairing.clone());
        Ok(Fenced::Ok)
    }

    async fn update_pending(
        &self,
        pool: &str,
        token: &str,
        id: &str,
        pairing: Option<&PendingPairing>,
    ) -> Result<Fenced, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if !state.holds(pool, token, now) {
            return Ok(Fenced::Fenced);
        }
        let pool = state.pool.entry(pool.to_owned()).or_default();
        if !pool.pending.contains_key(id) {
            return Ok(Fenced::Gone);
        }
        match pairing {
            Some(pairing) => pool.pending.insert(id.to_owned(), pairing.clone()),
            None => pool.pending.remove(id),
        };
        Ok(Fenced::Ok)
    }

    async fn pending(&self, pool: &str, id: &str) -> Result<Option<PendingPairing>, StoreError> {
        Ok(self.lock().pool.get(pool).and_then(|p| p.pending.get(id).cloned()))
    }

    async fn push_color(&self, player: &str, white: bool, keep: usize) -> Result<(), StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        let _ = state.player(player, now);
        let record = state.players.entry(player.to_owned()).or_default();
        let newest = if white { 'w' } else { 'b' };
        record.colors = std::iter::once(newest).chain(record.colors.chars()).take(keep.max(1)).collect();
        record.expires_ms = now.saturating_add(PLAYER_TTL_MS);
        Ok(())
    }

    async fn colors(&self, player: &str) -> Result<String, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        Ok(state.player(player, now).map(|p| p.colors.clone()).unwrap_or_default())
    }

    async fn open_board(&self, board: &BoardRecord) -> Result<(), StoreError> {
        let mut state = self.lock();
        state.boards.entry(board.player.clone()).or_default().insert(board.game.clone());
        state.lobby.insert(board.game.clone(), board.clone());
        Ok(())
    }

    async fn close_board(&self, game: &str, player: Option<&str>) -> Result<Option<BoardRecord>, StoreError> {
        Ok(self.lock().close_board(game, player.filter(|p| !p.is_empty())))
    }

    async fn close_player_boards(&self, player: &str) -> Result<u32, StoreError> {
        let mut state = self.lock();
        let games = state.boards.remove(player).unwrap_or_default();
        let closed = games.iter().filter(|game| state.close_board(game, Some(player)).is_some()).count();
        Ok(u32::try_from(closed).unwrap_or(u32::MAX))
    }

    async fn boards(&self) -> Result<(u64, Vec<BoardRecord>), StoreError> {
        let state = self.lock();
        Ok((state.lobby_version, state.lobby.values().cloned().collect()))
    }

    async fn bump_lobby_version(&self) -> Result<u64, StoreError> {
        let mut state = self.lock();
        state.lobby_version += 1;
        Ok(state.lobby_version)
    }

    async fn sweep_boards(&self, now_ms: u64) -> Result<usize, StoreError> {
        let mut state = self.lock();
        let due: Vec<String> =
            state.lobby.values().filter(|b| b.expires_ms <= now_ms).map(|b| b.game.clone()).collect();
        Ok(due.iter().filter(|game| state.close_board(game, None).is_some()).count())
    }
}
