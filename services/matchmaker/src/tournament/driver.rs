//! The driver: every second each replica takes the lease of the
//! tournaments it can and carries each one forward. One pass reads the
//! tournament at once, decides (start, count results, pair a wave or a
//! Swiss round, finish) with the arena's rules or the Swiss's (`swiss.rs`),
//! and writes it all in one commit fenced by the lease; only then are the
//! paired games made through the game service.
//! A driver killed at any point leaves a state the next holder continues
//! from: a game recorded as paired is made (by its fixed id and request
//! ids, so a create or join sent twice makes nothing twice), and a result
//! is in the inbox until a commit counts it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::{ColorChoice, CreateGameRequest, JoinGameRequest, Variant};
use fogblast_proto::ids::GameId;
use fogblast_proto::notices::{player_notice::Notice, player_subject, Opponent, Paired, PlayerNotice};
use fogblast_tournament::arena::{pair_wave, Candidate, Outcome, Pairing, Played};
use futures::StreamExt;
use prost::Message;
use tokio::sync::watch;
use tracing::{info, warn};

use super::commands::Tournaments;
use super::public;
use super::{Commit, Presence, Snapshot, Stage, Standing, Status, System, TourGame};
use crate::pool::variant_from_name;
use crate::store::StoreError;

/// How often the driver looks at its tournaments.
pub const TICK: Duration = Duration::from_millis(500);
/// How long a lease lasts unless renewed: a killed driver's tournaments
/// are taken over after this.
pub const LEASE: Duration = Duration::from_secs(3);
/// How often a tournament pairs its free players.
pub const WAVE_MS: u64 = 2_000;
/// A paired game the game service could not make in this long is given up.
const GIVE_UP_MS: u64 = 60_000;
/// Games made at once.
const CONCURRENT_GAMES: usize = 32;

/// What this replica remembers between passes: when each tournament it
/// drives last paired.
#[derive(Debug, Default)]
pub struct Memory {
    last_wave: Mutex<HashMap<String, u64>>,
    held: Mutex<HashMap<String, String>>,
    /// Scheduled arenas known to be in the store, by id and start.
    scheduled: Mutex<HashMap<String, u64>>,
    standings_told: public::StandingsTold,
}

/// How far ahead scheduled arenas are made, so players see them coming.
const SCHEDULED_AHEAD_MS: u64 = 6 * 3_600_000;

impl Tournaments {
    /// Drives tournaments until `stop`; then lets go of their leases.
    pub async fn drive(self: Arc<Self>, memory: Arc<Memory>, mut stop: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => self.pass(&memory).await,
                _ = stop.changed() => break,
            }
        }
        let held: Vec<(String, String)> = memory.held.lock().unwrap_or_else(PoisonError::into_inner).drain().collect();
        for (id, token) in held {
            let _ = self.store.release(&id, &token).await;
        }
    }

    async fn pass(&self, memory: &Memory) {
        let now = match self.store.now_ms().await {
            Ok(now) => now,
            Err(error) => return warn!(%error, "tournaments: the store does not answer"),
        };
        self.make_scheduled(memory, now).await;
        let listed = match self.store.list(now).await {
            Ok(listed) => listed,
            Err(error) => return warn!(%error, "tournaments: cannot list them"),
        };
        for (record, status, _) in listed {
            if status == Status::Finished {
                memory.standings_told.forget(&record.id);
                continue;
            }
            if record.starts_ms > now + 60_000 {
                continue;
            }
            let token = match self.store.acquire(&record.id, &self.replica, LEASE).await {
                Ok(Some(token)) => token,
                Ok(None) => {
                    memory.held.lock().unwrap_or_else(PoisonError::into_inner).remove(&record.id);
                    memory.standings_told.forget(&record.id);
                    continue;
                }
                Err(error) => {
                    warn!(tournament = %record.id, %error, "cannot take the tournament's lease");
                    continue;
                }
            };
            memory.held.lock().unwrap_or_else(PoisonError::into_inner).insert(record.id.clone(), token.clone());
            if let Err(error) = self.drive_one(&record.id, &token, memory).await {
                warn!(tournament = %record.id, %error, "tournament pass left for the next");
            }
        }
    }

    /// Makes the scheduled arenas due in the next hours that this replica
    /// has not seen made. Another replica making the same one is harmless:
    /// the id is the same, and the store makes it once.
    async fn make_scheduled(&self, memory: &Memory, now: u64) {
        for record in super::schedule::due(&self.schedule, now, SCHEDULED_AHEAD_MS) {
            if memory.scheduled.lock().unwrap_or_else(PoisonError::into_inner).contains_key(&record.id) {
                continue;
            }
            match self.store.create(&record).await {
                Ok(made) => {
                    if made {
                        info!(tournament = %record.id, name = %record.name, starts_ms = record.starts_ms, "scheduled arena made");
                        self.changed(&record.id, 1, true).await;
                        self.publish_public(&public::created(&record, now)).await;
                    }
                    let mut known = memory.scheduled.lock().unwrap_or_else(PoisonError::into_inner);
                    known.retain(|_, starts| *starts + SCHEDULED_AHEAD_MS > now);
                    known.insert(record.id.clone(), record.starts_ms);
                }
                Err(error) => warn!(tournament = %record.id, %error, "a scheduled arena was not made"),
            }
        }
    }

    /// One pass over one tournament held under `token`.
    pub async fn drive_one(&self, id: &str, token: &str, memory: &Memory) -> Result<(), StoreError> {
        let Some(snapshot) = self.store.snapshot(id).await? else { return Ok(()) };
        let last_wave = memory.last_wave.lock().unwrap_or_else(PoisonError::into_inner).get(id).copied().unwrap_or(0);
        let wave = snapshot.now_ms >= last_wave + WAVE_MS;
        let decided = match snapshot.record.system {
            System::Arena => decide(&snapshot, wave, &Pairing::default()),
            System::Swiss => super::swiss::decide(&snapshot),
        };
        let mut version = snapshot.version;
        if !decided.is_empty() {
            for event in public::before_commit(&snapshot, &decided) {
                self.publish_public(&event).await;
            }
            if !self.store.commit(id, token, &decided).await? {
                return Ok(());
            }
            version += 1;
            self.changed(id, version, decided.status.is_some()).await;
        }
        let counted = public::counts_results(&snapshot, &decided);
        let over = decided.status == Some(Status::Finished);
        if !over && memory.standings_told.due(id, counted, snapshot.now_ms) {
            self.publish_public(&public::standings_event(&public::after(&snapshot, &decided), version)).await;
        }
        if wave {
            memory.last_wave.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), snapshot.now_ms);
        }
        if let Some(status) = decided.status {
            info!(tournament = %id, ?status, "tournament moved on");
        }
        let mut games: BTreeMap<String, TourGame> = snapshot.games.clone();
        for game in &decided.games {
            games.insert(game.id.clone(), game.clone());
        }
        let to_make: Vec<TourGame> =
            games.into_values().filter(|g| matches!(g.stage, Stage::New | Stage::Created)).collect();
        if to_make.is_empty() {
            return Ok(());
        }
        let made: Vec<(TourGame, Option<(String, String)>)> = futures::stream::iter(to_make)
            .map(|game| self.make(&snapshot, game))
            .buffer_unordered(CONCURRENT_GAMES)
            .collect()
            .await;
        let mut current: BTreeMap<String, Standing> = snapshot.standing.clone();
        current.extend(decided.standing.iter().cloned());
        let mut commit = Commit::default();
        for (game, freed) in made {
            if let Some((white, black)) = freed {
                for player in [white, black] {
                    let mut standing = current.get(&player).cloned().unwrap_or_default();
                    if standing.playing.as_deref() == Some(game.id.as_str()) {
                        standing.playing = None;
                        standing.free_since_ms = snapshot.now_ms;
                        commit.standing.push((player, standing));
                    }
                }
            }
            commit.games.push(game);
        }
        // Told before the commit that records them started: a driver
        // killed in between leaves them `Created`, and the next holder
        // seats (again, harmlessly) and tells them again, so a player may
        // hear of a game twice but never not at all.
        for game in commit.games.iter().filter(|g| g.stage == Stage::Started) {
            self.tell_paired(&snapshot, game).await;
        }
        if self.store.commit(id, token, &commit).await? {
            self.changed(id, snapshot.version + 2, false).await;
        }
        Ok(())
    }

    /// Takes a paired game as far as it goes: made, then the black seat
    /// taken. Returns the game at its new stage and, when it was given up,
    /// its players to free.
    async fn make(&self, snapshot: &Snapshot, mut game: TourGame) -> (TourGame, Option<(String, String)>) {
        let record = &snapshot.record;
        if game.stage == Stage::New {
            let request = CreateGameRequest {
                game_id: game.id.clone(),
                request_id: format!("create-{}", game.id),
                player_id: game.white.clone(),
                player_name: name_of(snapshot, &game.white),
                variant: variant_from_name(&record.variant).unwrap_or(Variant::Atomic) as i32,
                chess960: record.chess960,
                chess960_position: game.chess960_position,
                color: ColorChoice::ChooseWhite as i32,
                clock: Some(fogblast_proto::game::ClockSettings {
                    initial_ms: record.clock.0,
                    increment_ms: record.clock.1,
                }),
                rated: record.rated,
                tournament_id: record.id.clone(),
                ..Default::default()
            };
            match self.games.create(request).await {
                Ok(created) => {
                    game.code = created.code;
                    game.stage = Stage::Created;
                }
                Err(error) => return self.failed(snapshot, game, error),
            }
        }
        let request = JoinGameRequest {
            player_id: game.black.clone(),
            player_name: name_of(snapshot, &game.black),
            code: game.code.clone(),
            request_id: format!("join-{}", game.id),
        };
        match self.games.join(request).await {
            Ok(_) => game.stage = Stage::Started,
            Err(error) if matches!(error.code, ErrorCode::NotFound | ErrorCode::Conflict) => {
                // Seated by an earlier try whose answer was lost?
                let seated = self.games.state(&game.id, &game.black).await.ok().and_then(|s| s.black);
                if seated.is_some_and(|black| black.id == game.black) {
                    game.stage = Stage::Started;
                } else {
                    return self.failed(snapshot, game, error);
                }
            }
            Err(error) => return self.failed(snapshot, game, error),
        }
        (game, None)
    }

    /// A game the game service would not make: tried again while it may
    /// come back, given up (its players free again) otherwise.
    fn failed(
        &self,
        snapshot: &Snapshot,
        mut game: TourGame,
        error: fogblast_proto::error::ServiceError,
    ) -> (TourGame, Option<(String, String)>) {
        let young = snapshot.now_ms.saturating_sub(game.paired_ms) < GIVE_UP_MS;
        if error.code == ErrorCode::Unavailable && young {
            return (game, None);
        }
        warn!(tournament = %snapshot.record.id, game = %game.id, %error, "giving up a paired game");
        game.stage = Stage::Done;
        let players = (game.white.clone(), game.black.clone());
        (game, Some(players))
    }

    async fn tell_paired(&self, snapshot: &Snapshot, game: &TourGame) {
        let record = &snapshot.record;
        for (player, other, white) in [(&game.white, &game.black, true), (&game.black, &game.white, false)] {
            let paired = Paired {
                game_id: game.id.clone(),
                color: if white { fogblast_proto::game::Color::White } else { fogblast_proto::game::Color::Black }
                    as i32,
                variant: variant_from_name(&record.variant).unwrap_or(Variant::Atomic) as i32,
                clock: Some(fogblast_proto::game::ClockSettings {
                    initial_ms: record.clock.0,
                    increment_ms: record.clock.1,
                }),
                rated: record.rated,
                rating: snapshot.joined.get(player).map_or(0, |e| e.rating),
                opponent: Some(Opponent {
                    player_id: other.clone(),
                    name: name_of(snapshot, other),
                    rating: snapshot.joined.get(other).map_or(0, |e| e.rating),
                }),
                tournament_id: record.id.clone(),
            };
            let notice = PlayerNotice { notice: Some(Notice::Paired(paired)) };
            if let Err(error) =
                self.bus.publish(&player_subject(player), Vec::new(), notice.encode_to_vec().into()).await
            {
                warn!(%player, %error, "a tournament pairing was not told");
            }
        }
    }
}

fn name_of(snapshot: &Snapshot, player: &str) -> String {
    snapshot.joined.get(player).map_or_else(|| player.to_owned(), |e| e.name.clone())
}

/// The pass, without I/O: start, count the results in the inbox, pair a
/// wave (when `wave`), finish. Every change is in the returned commit.
pub fn decide(snapshot: &Snapshot, wave: bool, rules: &Pairing) -> Commit {
    let now = snapshot.now_ms;
    let mut status = snapshot.status;
    let mut commit = Commit::default();
    if status == Status::Created && now >= snapshot.record.starts_ms {
        status = Status::Started;
        commit.status = Some(Status::Started);
    }
    let mut standing: BTreeMap<String, Standing> = snapshot.standing.clone();
    let mut changed: BTreeMap<String, ()> = BTreeMap::new();
    let mut games: BTreeMap<String, TourGame> = BTreeMap::new();
    for result in snapshot.results.values() {
        commit.results_taken.push(result.game.clone());
        let Some(game) = snapshot.games.get(&result.game) else { continue };
        if game.stage == Stage::Done {
            continue;
        }
        count(game, result, now, &mut standing);
        // A game aborted before a side's first move: that side is not
        // there, and is not paired again until they join again.
        if result.result == "*" && result.plies < 2 {
            commit.paused.push(if result.plies == 0 { game.white.clone() } else { game.black.clone() });
        }
        changed.insert(game.white.clone(), ());
        changed.insert(game.black.clone(), ());
        games.insert(
            game.id.clone(),
            TourGame { stage: Stage::Done, result: result.result.clone(), plies: result.plies, ..game.clone() },
        );
    }
    if status == Status::Started && now < snapshot.record.ends_ms() && wave {
        let boards = pair_wave(&candidates(snapshot, &standing), now, rules);
        let first = snapshot.games.len();
        for (i, board) in boards.into_iter().enumerate() {
            let id = GameId::derived(&format!("tour:{}:{}", snapshot.record.id, first + i)).into_string();
            for player in [&board.white, &board.black] {
                standing.entry(player.clone()).or_default().playing = Some(id.clone());
                changed.insert(player.clone(), ());
            }
            let game = TourGame {
                id: id.clone(),
                white: board.white,
                black: board.black,
                stage: Stage::New,
                code: String::new(),
                paired_ms: now,
                result: String::new(),
                plies: 0,
                chess960_position: None,
            };
            games.insert(id, game);
        }
    }
    let in_play = snapshot.games.values().chain(games.values()).any(|g| {
        let current = games.get(&g.id).unwrap_or(g);
        current.stage != Stage::Done
    });
    if status == Status::Started && now >= snapshot.record.ends_ms() && !in_play {
        commit.status = Some(Status::Finished);
    }
    commit.standing = changed
        .into_keys()
        .map(|p| {
            let s = standing.get(&p).cloned().unwrap_or_default();
            (p, s)
        })
        .collect();
    commit.games = games.into_values().collect();
    commit
}

/// Scores a finished game on both players' sheets and frees them.
fn count(game: &TourGame, result: &super::ReportedResult, now: u64, standing: &mut BTreeMap<String, Standing>) {
    let outcomes = match result.result.as_str() {
        "1-0" => Some((Outcome::Win, Outcome::Loss)),
        "0-1" => Some((Outcome::Loss, Outcome::Win)),
        "1/2-1/2" => Some((Outcome::Draw, Outcome::Draw)),
        _ => None,
    };
    let sides = [
        (&game.white, &game.black, true, result.white_berserk),
        (&game.black, &game.white, false, result.black_berserk),
    ];
    for (i, (player, opponent, white, berserk)) in sides.into_iter().enumerate() {
        let entry = standing.entry(player.clone()).or_default();
        if let Some((white_outcome, black_outcome)) = outcomes {
            let outcome = if i == 0 { white_outcome } else { black_outcome };
            let played = Played { game: &game.id, opponent, outcome, plies: result.plies, berserk };
            entry.sheet.record(&played);
            entry.berserks += u32::from(berserk);
            entry.white_minus_black += if white { 1 } else { -1 };
            entry.last_white = Some(white);
        }
        if entry.playing.as_deref() == Some(game.id.as_str()) {
            entry.playing = None;
            entry.free_since_ms = now;
        }
    }
}

/// The players who may be paired now: joined, active and not playing.
fn candidates(snapshot: &Snapshot, standing: &BTreeMap<String, Standing>) -> Vec<Candidate> {
    snapshot
        .joined
        .iter()
        .filter(|(player, _)| snapshot.presence.get(*player).copied().unwrap_or(Presence::Active) == Presence::Active)
        .filter_map(|(player, entrant)| {
            let line = standing.get(player).cloned().unwrap_or_default();
            line.playing.is_none().then(|| Candidate {
                id: player.clone(),
                score: line.sheet.score,
                rating: entrant.rating,
                white_minus_black: line.white_minus_black,
                last_white: line.last_white,
                last_opponent: line.sheet.last_opponent().map(str::to_owned),
                free_since_ms: line.free_since_ms.max(entrant.joined_ms),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Entrant, ReportedResult, TournamentRecord};
    use super::*;

    const START: u64 = 1_000_000;

    fn snapshot(players: &[&str], now_ms: u64) -> Snapshot {
        let record = TournamentRecord {
            id: "t1".into(),
            name: "Hourly".into(),
            description: String::new(),
            variant: "atomic".into(),
            chess960: false,
            clock: (60_000, 0),
            rated: true,
            starts_ms: START,
            minutes: 10,
            system: System::Arena,
            rounds: 0,
            round_interval_s: 0,
            created_by: String::new(),
            created_ms: 0,
        };
        let joined = players
            .iter()
            .enumerate()
            .map(|(i, p)| ((*p).to_owned(), Entrant { name: p.to_uppercase(), rating: 1500 + i as u32, joined_ms: 0 }))
            .collect();
        Snapshot {
            record,
            status: Status::Created,
            version: 1,
            now_ms,
            joined,
            presence: BTreeMap::new(),
            standing: BTreeMap::new(),
            games: BTreeMap::new(),
            results: BTreeMap::new(),
            swiss: None,
        }
    }

    /// The snapshot after `commit`, as the store would give it back.
    fn after(mut snapshot: Snapshot, commit: &Commit, now_ms: u64) -> Snapshot {
        if let Some(status) = commit.status {
            snapshot.status = status;
        }
        snapshot.standing.extend(commit.standing.iter().cloned());
        for game in &commit.games {
            snapshot.games.insert(game.id.clone(), game.clone());
        }
        for taken in &commit.results_taken {
            snapshot.results.remove(taken);
        }
        snapshot.now_ms = now_ms;
        snapshot
    }

    fn started(mut snapshot: Snapshot) -> Snapshot {
        for game in snapshot.games.values_mut() {
            game.stage = Stage::Started;
        }
        snapshot
    }

    #[test]
    fn an_arena_starts_on_time_and_pairs_everyone_free() {
        let early = snapshot(&["a", "b", "c", "d", "e"], START - 1);
        assert!(decide(&early, true, &Pairing::default()).is_empty(), "nothing before the start");
        let due = snapshot(&["a", "b", "c", "d", "e"], START);
        let commit = decide(&due, true, &Pairing::default());
        assert_eq!(commit.status, Some(Status::Started));
        assert_eq!(commit.games.len(), 2, "five players: two boards, one waits");
        let playing: Vec<_> = commit.standing.iter().filter(|(_, s)| s.playing.is_some()).collect();
        assert_eq!(playing.len(), 4);
        assert!(commit.games.iter().all(|g| g.stage == Stage::New));
        let next = after(due, &commit, START + 100);
        let again = decide(&next, true, &Pairing::default());
        assert!(again.games.is_empty(), "the one left has nobody free to meet");
    }

    #[test]
    fn a_result_is_counted_once_and_frees_both_players() {
        let first = snapshot(&["a", "b"], START);
        let commit = decide(&first, true, &Pairing::default());
        let mut playing = started(after(first, &commit, START + 60_000));
        let game = playing.games.values().next().unwrap().clone();
        let result = ReportedResult {
            game: game.id.clone(),
            result: "1-0".into(),
            plies: 30,
            white_berserk: true,
            black_berserk: false,
        };
        playing.results.insert(game.id.clone(), result.clone());
        let counted = decide(&playing, false, &Pairing::default());
        assert_eq!(counted.results_taken, vec![game.id.clone()]);
        let scored = after(playing, &counted, START + 61_000);
        let white = &scored.standing[&game.white];
        assert_eq!((white.sheet.score, white.berserks, white.playing.clone()), (3, 1, None), "2 + a berserk point");
        assert_eq!(scored.standing[&game.black].sheet.score, 0);
        assert_eq!(scored.games[&game.id].stage, Stage::Done);
        // Told again (a redelivery): taken out, scored nothing more.
        let mut again = scored.clone();
        again.results.insert(game.id.clone(), result);
        let commit = decide(&again, false, &Pairing::default());
        assert_eq!(commit.results_taken, vec![game.id.clone()]);
        let twice = after(again, &commit, START + 62_000);
        assert_eq!(twice.standing[&game.white].sheet.score, 3);
        assert_eq!(twice.standing[&game.white].sheet.entries.len(), 1);
    }

    #[test]
    fn the_arena_finishes_once_its_last_game_has_ended() {
        let first = snapshot(&["a", "b"], START);
        let commit = decide(&first, true, &Pairing::default());
        let ends = first.record.ends_ms();
        let mut late = started(after(first, &commit, ends + 1));
        let finishing = decide(&late, true, &Pairing::default());
        assert_eq!(finishing.status, None, "a game is still being played");
        assert!(finishing.games.is_empty(), "nobody is paired after the end");
        let game = late.games.values().next().unwrap().id.clone();
        let result = ReportedResult {
            game: game.clone(),
            result: "1/2-1/2".into(),
            plies: 40,
            white_berserk: false,
            black_berserk: false,
        };
        late.results.insert(game, result);
        let done = decide(&late, true, &Pairing::default());
        assert_eq!(done.status, Some(Status::Finished));
    }

    #[test]
    fn paused_and_withdrawn_players_are_not_paired() {
        let mut snap = snapshot(&["a", "b", "c", "d"], START);
        snap.presence.insert("a".into(), Presence::Paused);
        snap.presence.insert("b".into(), Presence::Withdrawn);
        let commit = decide(&snap, true, &Pairing::default());
        assert_eq!(commit.games.len(), 1);
        let game = &commit.games[0];
        let mut seated = [game.white.as_str(), game.black.as_str()];
        seated.sort();
        assert_eq!(seated, ["c", "d"]);
    }
}
