//! Tournaments in this process's memory, for `fogblast up`: each method
//! holds one lock for its whole check-and-write, as each Redis script is
//! atomic, and the lease is fenced the same way.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use super::{
    Commit, Entrant, Joined, Presence, ReportedResult, Snapshot, Standing, Status, SwissState, TourGame,
    TournamentRecord, TournamentStore,
};
use crate::store::StoreError;

#[derive(Debug, Default)]
pub struct MemoryTournamentStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last_ms: u64,
    tournaments: HashMap<String, Tournament>,
}

#[derive(Debug)]
struct Tournament {
    record: TournamentRecord,
    status: Status,
    version: u64,
    joined: BTreeMap<String, Entrant>,
    presence: BTreeMap<String, Presence>,
    standing: BTreeMap<String, Standing>,
    games: BTreeMap<String, TourGame>,
    results: BTreeMap<String, ReportedResult>,
    counted: std::collections::HashSet<String>,
    swiss: Option<SwissState>,
    lease: Option<(String, u64)>,
    fence: u64,
}

impl State {
    fn now_ms(&mut self) -> u64 {
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        self.last_ms = self.last_ms.max(wall);
        self.last_ms
    }
}

impl Tournament {
    fn holds(&self, token: &str, now: u64) -> bool {
        self.lease.as_ref().is_some_and(|(held, expires)| held == token && *expires > now)
    }
}

impl MemoryTournamentStore {
    pub fn new() -> MemoryTournamentStore {
        MemoryTournamentStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl TournamentStore for MemoryTournamentStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(self.lock().now_ms())
    }

    async fn create(&self, record: &TournamentRecord) -> Result<bool, StoreError> {
        let mut state = self.lock();
        if state.tournaments.contains_key(&record.id) {
            return Ok(false);
        }
        let tournament = Tournament {
            record: record.clone(),
            status: Status::Created,
            version: 1,
            joined: BTreeMap::new(),
            presence: BTreeMap::new(),
            standing: BTreeMap::new(),
            games: BTreeMap::new(),
            results: BTreeMap::new(),
            counted: Default::default(),
            swiss: None,
            lease: None,
            fence: 0,
        };
        state.tournaments.insert(record.id.clone(), tournament);
        Ok(true)
    }

    async fn list(&self, since_ms: u64) -> Result<Vec<(TournamentRecord, Status, usize)>, StoreError> {
        let state = self.lock();
        let mut listed: Vec<_> = state
            .tournaments
            .values()
            .filter(|t| t.status != Status::Finished || t.record.ends_ms() >= since_ms)
            .map(|t| (t.record.clone(), t.status, t.joined.len()))
            .collect();
        listed.sort_by(|a, b| a.0.starts_ms.cmp(&b.0.starts_ms).then(a.0.id.cmp(&b.0.id)));
        Ok(listed)
    }

    async fn snapshot(&self, id: &str) -> Result<Option<Snapshot>, StoreError> {
        let mut state = self.lock();
        let now_ms = state.now_ms();
        Ok(state.tournaments.get(id).map(|t| Snapshot {
            record: t.record.clone(),
            status: t.status,
            version: t.version,
            now_ms,
            joined: t.joined.clone(),
            presence: t.presence.clone(),
            standing: t.standing.clone(),
            games: t.games.clone(),
            results: t.results.clone(),
            swiss: t.swiss.clone(),
        }))
    }

    async fn join(&self, id: &str, player: &str, entrant: &Entrant) -> Result<Joined, StoreError> {
        let mut state = self.lock();
        let Some(t) = state.tournaments.get_mut(id) else { return Ok(Joined::NoSuchTournament) };
        if t.status == Status::Finished {
            return Ok(Joined::Finished);
        }
        if t.presence.get(player) == Some(&Presence::Active) {
            return Ok(Joined::Already);
        }
        t.joined.entry(player.to_owned()).or_insert_with(|| entrant.clone());
        t.presence.insert(player.to_owned(), Presence::Active);
        t.version += 1;
        Ok(Joined::Joined)
    }

    async fn set_presence(&self, id: &str, player: &str, presence: Presence) -> Result<bool, StoreError> {
        let mut state = self.lock();
        let Some(t) = state.tournaments.get_mut(id) else { return Ok(false) };
        if !t.joined.contains_key(player) {
            return Ok(false);
        }
        t.presence.insert(player.to_owned(), presence);
        t.version += 1;
        Ok(true)
    }

    async fn report(&self, id: &str, result: &ReportedResult) -> Result<bool, StoreError> {
        let mut state = self.lock();
        let Some(t) = state.tournaments.get_mut(id) else { return Ok(false) };
        if t.counted.contains(&result.game) || t.results.contains_key(&result.game) {
            return Ok(false);
        }
        t.results.insert(result.game.clone(), result.clone());
        Ok(true)
    }

    async fn acquire(&self, id: &str, replica: &str, ttl: Duration) -> Result<Option<String>, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        let Some(t) = state.tournaments.get_mut(id) else { return Ok(None) };
        let expires = now.saturating_add(ttl.as_millis() as u64);
        let mine = format!("{replica}:");
        match &t.lease {
            Some((held, until)) if *until > now => {
                if held.starts_with(&mine) {
                    let held = held.clone();
                    t.lease = Some((held.clone(), expires));
                    return Ok(Some(held));
                }
                Ok(None)
            }
            _ => {
                t.fence += 1;
                let token = format!("{mine}{}", t.fence);
                t.lease = Some((token.clone(), expires));
                Ok(Some(token))
            }
        }
    }

    async fn release(&self, id: &str, token: &str) -> Result<(), StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        if let Some(t) = state.tournaments.get_mut(id) {
            if t.holds(token, now) {
                t.lease = None;
            }
        }
        Ok(())
    }

    async fn commit(&self, id: &str, token: &str, commit: &Commit) -> Result<bool, StoreError> {
        let mut state = self.lock();
        let now = state.now_ms();
        let Some(t) = state.tournaments.get_mut(id) else { return Ok(false) };
        if !t.holds(token, now) {
            return Ok(false);
        }
        if let Some(status) = commit.status {
            t.status = status;
        }
        for player in &commit.paused {
            t.presence.insert(player.clone(), Presence::Paused);
        }
        for (player, standing) in &commit.standing {
            t.standing.insert(player.clone(), standing.clone());
        }
        for game in &commit.games {
            t.games.insert(game.id.clone(), game.clone());
        }
        for game in &commit.results_taken {
            t.results.remove(game);
            t.counted.insert(game.clone());
        }
        if let Some(swiss) = &commit.swiss {
            t.swiss = Some(swiss.clone());
        }
        t.version += 1;
        Ok(true)
    }
}
