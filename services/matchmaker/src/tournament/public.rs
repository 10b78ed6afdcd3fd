//! A tournament's life on the public event stream (docs/events.md):
//! `created` when it is made, `started` and `finished` with the driver's
//! commit that moves it on, and `standings` as results are counted, at
//! most every [`STANDINGS_EVERY_MS`] per tournament. Each event has an id
//! that is the same on every resend, and is published in both encodings.
//!
//! `started` and `finished` are published before the commit that records
//! them: a driver killed in between leaves the tournament as it was, and
//! the next holder decides (and publishes) the same again, which the
//! stream drops as a duplicate. `standings` are published after their
//! commit: one lost with a driver is followed by the next.

use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::Headers;
use fogblast_proto::events::tournament_event::Kind;
use fogblast_proto::events::{
    TournamentCreated, TournamentEvent, TournamentFinished, TournamentInfo, TournamentStanding, TournamentStandings,
    TournamentStarted,
};
use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::public_events::{Encoding, CONTENT_TYPE_HEADER};
use fogblast_proto::tournament_events::{self, SCHEMA, TOP_LINES};
use prost::Message;
use tracing::warn;

use super::commands::{standings, Tournaments};
use super::{Commit, Presence, Snapshot, Status, TournamentRecord};
use crate::pool::variant_from_name;

/// The least time between two standings events of one tournament.
pub const STANDINGS_EVERY_MS: u64 = 2_000;

/// Attempts at publishing an event before it is given up (the next
/// standings, or the next holder's resend, follow).
const PUBLISH_ATTEMPTS: u32 = 3;

/// What every event of the tournament says about it.
pub fn info(record: &TournamentRecord) -> TournamentInfo {
    TournamentInfo {
        name: record.name.clone(),
        system: record.system.name().to_owned(),
        variant: variant_from_name(&record.variant).unwrap_or(Variant::Unspecified) as i32,
        chess960: record.chess960,
        clock: Some(ClockSettings { initial_ms: record.clock.0, increment_ms: record.clock.1 }),
        rated: record.rated,
        starts_at_ms: record.starts_ms,
        minutes: record.minutes,
        rounds: record.rounds,
    }
}

fn event(record: &TournamentRecord, event_id: String, at_ms: u64, kind: Kind) -> TournamentEvent {
    TournamentEvent { event_id, tournament_id: record.id.clone(), at_ms, info: Some(info(record)), kind: Some(kind) }
}

/// The `created` event of a tournament made at `at_ms`.
pub fn created(record: &TournamentRecord, at_ms: u64) -> TournamentEvent {
    event(record, format!("{}/created", record.id), at_ms, Kind::Created(TournamentCreated {}))
}

/// The snapshot as it is once `commit` is written.
pub fn after(snapshot: &Snapshot, commit: &Commit) -> Snapshot {
    let mut after = snapshot.clone();
    after.status = commit.status.unwrap_or(snapshot.status);
    after.standing.extend(commit.standing.iter().cloned());
    if let Some(swiss) = &commit.swiss {
        after.swiss = Some(swiss.clone());
    }
    for player in &commit.paused {
        after.presence.insert(player.clone(), Presence::Paused);
    }
    after
}

/// The leaders, as the public stream shows them.
fn top(snapshot: &Snapshot) -> Vec<TournamentStanding> {
    standings(snapshot)
        .into_iter()
        .take(TOP_LINES)
        .map(|line| TournamentStanding {
            rank: line.rank,
            player_id: line.player_id,
            name: line.name,
            rating: line.rating,
            score: line.score,
            games: line.games,
            on_fire: line.fire,
            withdrawn: line.presence == "withdrawn",
        })
        .collect()
}

/// The events of the driver's `commit` on `snapshot` to publish before it
/// is written: `started`, `finished`.
pub fn before_commit(snapshot: &Snapshot, commit: &Commit) -> Vec<TournamentEvent> {
    let record = &snapshot.record;
    let players = snapshot.joined.len() as u32;
    match commit.status {
        Some(Status::Started) => {
            let kind = Kind::Started(TournamentStarted { players });
            vec![event(record, format!("{}/started", record.id), snapshot.now_ms, kind)]
        }
        Some(Status::Finished) => {
            let kind = Kind::Finished(TournamentFinished { players, top: top(&after(snapshot, commit)) });
            vec![event(record, format!("{}/finished", record.id), snapshot.now_ms, kind)]
        }
        _ => Vec::new(),
    }
}

/// Whether `commit` counts a result of one of the tournament's games.
pub fn counts_results(snapshot: &Snapshot, commit: &Commit) -> bool {
    commit.results_taken.iter().any(|game| snapshot.games.contains_key(game))
}

/// The standings of the tournament as `snapshot` (at `version`) has them.
pub fn standings_event(snapshot: &Snapshot, version: u64) -> TournamentEvent {
    // A Swiss's round being played (or the last one recorded).
    let round = snapshot.swiss.as_ref().map_or(0, |swiss| swiss.rounds.len() as u32);
    let kind =
        Kind::Standings(TournamentStandings { players: snapshot.joined.len() as u32, top: top(snapshot), round });
    let record = &snapshot.record;
    event(record, format!("{}/standings/{version}", record.id), snapshot.now_ms, kind)
}

/// When each tournament's standings were last told, and whether results
/// were counted since: standings go out at most every
/// [`STANDINGS_EVERY_MS`], and the last change is always told.
#[derive(Debug, Default)]
pub struct StandingsTold {
    told: std::sync::Mutex<std::collections::HashMap<String, (u64, bool)>>,
}

impl StandingsTold {
    /// Notes whether results were counted now (`counted`), and says
    /// whether the standings are to be told now.
    pub fn due(&self, id: &str, counted: bool, now_ms: u64) -> bool {
        let mut told = self.told.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (last_ms, pending) = told.entry(id.to_owned()).or_insert((0, false));
        *pending |= counted;
        if *pending && now_ms >= *last_ms + STANDINGS_EVERY_MS {
            *last_ms = now_ms;
            *pending = false;
            return true;
        }
        false
    }

    /// Forgets a tournament this replica no longer drives.
    pub fn forget(&self, id: &str) {
        self.told.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
    }
}

impl Tournaments {
    /// Publishes `event` in both encodings, trying a few times.
    pub(crate) async fn publish_public(&self, event: &TournamentEvent) {
        let protobuf = Bytes::from(event.encode_to_vec());
        let json = Bytes::from(tournament_events::to_json(event).to_string());
        for (encoding, payload) in [(Encoding::Protobuf, protobuf), (Encoding::Json, json)] {
            let headers: Headers = vec![
                (CONTENT_TYPE_HEADER.to_owned(), encoding.content_type().to_owned()),
                ("Fogblast-Schema".to_owned(), SCHEMA.to_owned()),
            ];
            let subject = tournament_events::subject(event, encoding);
            let id = tournament_events::message_id(event, encoding);
            let mut wait = Duration::from_millis(100);
            for attempt in 1..=PUBLISH_ATTEMPTS {
                match self.bus.publish_durable(&subject, &id, headers.clone(), payload.clone()).await {
                    Ok(_) => break,
                    Err(error) if attempt == PUBLISH_ATTEMPTS => {
                        warn!(event = %event.event_id, %error, "a tournament event was not published");
                    }
                    Err(_) => {
                        tokio::time::sleep(wait).await;
                        wait *= 2;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use fogblast_tournament::arena::{Outcome, Played};

    use super::*;
    use crate::tournament::{Entrant, Standing};

    fn snapshot(status: Status) -> Snapshot {
        let record = TournamentRecord {
            id: "t1".into(),
            name: "Hourly atomic".into(),
            description: String::new(),
            variant: "atomic".into(),
            chess960: false,
            clock: (180_000, 0),
            rated: true,
            starts_ms: 1_000,
            minutes: 60,
            system: crate::tournament::System::Arena,
            rounds: 0,
            round_interval_s: 0,
            created_by: String::new(),
            created_ms: 0,
        };
        let joined = ["ann", "bob", "cy"]
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p.to_owned(), Entrant { name: p.to_uppercase(), rating: 1500 + i as u32, joined_ms: 0 }))
            .collect();
        Snapshot {
            record,
            status,
            version: 7,
            now_ms: 5_000,
            joined,
            presence: BTreeMap::new(),
            standing: BTreeMap::new(),
            games: BTreeMap::new(),
            results: BTreeMap::new(),
            swiss: None,
        }
    }

    fn won(player: &str, game: &str) -> (String, Standing) {
        let mut standing = Standing::default();
        let played = Played { game, opponent: "x", outcome: Outcome::Win, plies: 30, berserk: false };
        standing.sheet.record(&played);
        (player.to_owned(), standing)
    }

    #[test]
    fn a_start_and_a_finish_are_announced_with_their_commit_and_the_final_leaders() {
        let start = Commit { status: Some(Status::Started), ..Commit::default() };
        let events = before_commit(&snapshot(Status::Created), &start);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event_id, "t1/started");
        assert!(matches!(events[0].kind, Some(Kind::Started(TournamentStarted { players: 3 }))));

        let finish = Commit { status: Some(Status::Finished), standing: vec![won("bob", "g1")], ..Commit::default() };
        let events = before_commit(&snapshot(Status::Started), &finish);
        let Some(Kind::Finished(finished)) = &events[0].kind else { panic!("not finished: {events:?}") };
        assert_eq!(events[0].event_id, "t1/finished");
        let names: Vec<&str> = finished.top.iter().map(|l| l.name.as_str()).collect();
        // Bob won; then by rating.
        assert_eq!(names, ["BOB", "CY", "ANN"]);
        assert_eq!((finished.top[0].rank, finished.top[0].score), (1, 2));
        assert!(before_commit(&snapshot(Status::Started), &Commit::default()).is_empty());
    }

    #[test]
    fn standings_are_told_when_a_result_of_the_tournament_was_counted_at_most_every_interval() {
        let mut snapshot = snapshot(Status::Started);
        let counted = Commit { standing: vec![won("cy", "g1")], results_taken: vec!["g1".into()], ..Commit::default() };
        assert!(!counts_results(&snapshot, &counted), "g1 is no game of this tournament");
        snapshot.games.insert(
            "g1".into(),
            crate::tournament::TourGame {
                id: "g1".into(),
                white: "cy".into(),
                black: "ann".into(),
                stage: crate::tournament::Stage::Started,
                code: String::new(),
                paired_ms: 0,
                result: String::new(),
                plies: 0,
                chess960_position: None,
            },
        );
        assert!(counts_results(&snapshot, &counted));
        let event = standings_event(&after(&snapshot, &counted), 8);
        assert_eq!(event.event_id, "t1/standings/8");
        let Some(Kind::Standings(standings)) = event.kind else { panic!("not standings") };
        assert_eq!((standings.players, standings.top[0].player_id.as_str()), (3, "cy"));

        let told = StandingsTold::default();
        assert!(!told.due("t1", false, 10_000), "nothing counted");
        assert!(told.due("t1", true, 10_000));
        assert!(!told.due("t1", true, 11_000), "too soon after the last");
        assert!(!told.due("t1", false, 11_500));
        assert!(told.due("t1", false, 12_000), "the result counted in between is told");
        assert!(!told.due("t1", false, 20_000));
    }
}
