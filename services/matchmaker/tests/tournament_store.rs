//! The tournament store's guarantees, held against both adapters (Redis and
//! memory): one create per id, joining and leaving, a result reported once
//! and counted once, and every driver write fenced by the lease.

mod support;

use std::sync::Arc;
use std::time::Duration;

use fogblast_matchmaker::tournament::{
    Commit, Entrant, Joined, MemoryTournamentStore, Presence, RedisTournamentStore, ReportedResult, Stage, Standing,
    Status, SwissLine, SwissRoundState, SwissState, System, TourGame, TournamentRecord, TournamentStore,
};
use fogblast_tournament::swiss::{Board, RoundPairing, SwissPlayer};
use fogblast_tournament::tiebreak::RoundResult;
use support::Backend;

fn record(id: &str) -> TournamentRecord {
    TournamentRecord {
        id: id.into(),
        name: "Hourly <b>Atomic</b>".into(),
        description: String::new(),
        variant: "atomic".into(),
        chess960: false,
        clock: (180_000, 0),
        rated: true,
        starts_ms: 1_000,
        minutes: 57,
        system: System::Arena,
        rounds: 0,
        round_interval_s: 0,
        created_by: String::new(),
        created_ms: 0,
    }
}

fn entrant(name: &str) -> Entrant {
    Entrant { name: name.into(), rating: 1500, joined_ms: 0 }
}

fn result(game: &str) -> ReportedResult {
    ReportedResult { game: game.into(), result: "1-0".into(), plies: 30, white_berserk: false, black_berserk: false }
}

async fn behaves(store: Arc<dyn TournamentStore>) {
    let t = record("arena-1");
    assert!(store.create(&t).await.unwrap());
    assert!(!store.create(&t).await.unwrap(), "an id is made once, whoever asks again");
    let listed = store.list(0).await.unwrap();
    assert_eq!(listed.iter().filter(|(r, _, _)| r.id == "arena-1").count(), 1);
    assert_eq!(store.join("nope", "p1", &entrant("P1")).await.unwrap(), Joined::NoSuchTournament);
    assert_eq!(store.join("arena-1", "p1", &entrant("P1")).await.unwrap(), Joined::Joined);
    assert_eq!(store.join("arena-1", "p1", &entrant("P1")).await.unwrap(), Joined::Already);
    assert_eq!(store.join("arena-1", "p2", &entrant("P2")).await.unwrap(), Joined::Joined);
    assert!(store.set_presence("arena-1", "p2", Presence::Paused).await.unwrap());
    assert!(!store.set_presence("arena-1", "p3", Presence::Paused).await.unwrap(), "p3 never joined");
    assert_eq!(store.join("arena-1", "p2", &entrant("P2")).await.unwrap(), Joined::Joined, "back from a pause");

    // Only the lease holder writes; a stale holder's commit changes nothing.
    let token = store.acquire("arena-1", "mm-a", Duration::from_secs(30)).await.unwrap().expect("free");
    assert_eq!(store.acquire("arena-1", "mm-b", Duration::from_secs(30)).await.unwrap(), None);
    let game = TourGame {
        id: "g1".into(),
        white: "p1".into(),
        black: "p2".into(),
        stage: Stage::Started,
        code: String::new(),
        paired_ms: 5,
        result: String::new(),
        plies: 0,
        chess960_position: None,
    };
    let playing = Standing { playing: Some("g1".into()), ..Standing::default() };
    let commit = Commit {
        status: Some(Status::Started),
        standing: vec![("p1".into(), playing.clone()), ("p2".into(), playing)],
        games: vec![game.clone()],
        ..Commit::default()
    };
    assert!(store.commit("arena-1", &token, &commit).await.unwrap());
    assert!(!store.commit("arena-1", "mm-b:99", &commit).await.unwrap(), "not the holder");

    // A result enters the inbox once; counted, it never comes back.
    assert!(store.report("arena-1", &result("g1")).await.unwrap());
    assert!(!store.report("arena-1", &result("g1")).await.unwrap(), "a second delivery adds nothing");
    assert!(!store.report("nope", &result("g1")).await.unwrap());
    let snapshot = store.snapshot("arena-1").await.unwrap().unwrap();
    assert_eq!(snapshot.status, Status::Started);
    assert_eq!(snapshot.results.len(), 1);
    assert_eq!(snapshot.joined.len(), 2);
    assert_eq!(snapshot.presence["p2"], Presence::Active);
    assert_eq!(snapshot.standing["p1"].playing.as_deref(), Some("g1"));
    let counted = Commit {
        games: vec![TourGame { stage: Stage::Done, result: "1-0".into(), ..game }],
        results_taken: vec!["g1".into()],
        paused: vec!["p2".into()],
        ..Commit::default()
    };
    assert!(store.commit("arena-1", &token, &counted).await.unwrap());
    assert!(!store.report("arena-1", &result("g1")).await.unwrap(), "a counted result is not reported again");
    let snapshot = store.snapshot("arena-1").await.unwrap().unwrap();
    assert!(snapshot.results.is_empty());
    assert_eq!(snapshot.games["g1"].stage, Stage::Done);
    assert_eq!(snapshot.presence["p2"], Presence::Paused);
    assert_eq!(snapshot.record.name, "Hourly <b>Atomic</b>", "text stays text");

    store.release("arena-1", &token).await.unwrap();
    assert!(store.acquire("arena-1", "mm-b", Duration::from_secs(30)).await.unwrap().is_some(), "released");
    let finish = Commit { status: Some(Status::Finished), ..Commit::default() };
    assert!(!store.commit("arena-1", &token, &finish).await.unwrap(), "the old holder is fenced off");
    assert_eq!(store.join("arena-1", "p9", &entrant("P9")).await.unwrap(), Joined::Joined);
    swiss_rounds_are_kept(store.as_ref()).await;
}

/// A Swiss's rounds and its players' records are written with the rest of
/// the driver's commit, fenced alike, and read back whole; a commit
/// without them leaves them as they were.
async fn swiss_rounds_are_kept(store: &dyn TournamentStore) {
    let t = TournamentRecord { system: System::Swiss, rounds: 3, round_interval_s: 10, ..record("swiss-1") };
    assert!(store.create(&t).await.unwrap());
    assert_eq!(store.snapshot("swiss-1").await.unwrap().unwrap().swiss, None, "not paired yet");
    let token = store.acquire("swiss-1", "mm-a", Duration::from_secs(30)).await.unwrap().expect("free");
    let pairing = RoundPairing {
        round: 1,
        boards: vec![Board { white: "p1".into(), black: "p2".into() }],
        bye: Some("p3".into()),
        bye_points_x2: 2,
        not_paired: vec![],
        floats: vec![],
    };
    let state = SwissState {
        rounds: vec![SwissRoundState {
            pairing,
            games: vec!["g1".into()],
            chess960_position: Some(17),
            recorded: false,
        }],
        round_ended_ms: 0,
    };
    let line = SwissLine { player: SwissPlayer::new("p3", 1500), rounds: vec![RoundResult::Unplayed { points_x2: 2 }] };
    let standing = Standing { swiss: Some(line), ..Standing::default() };
    let commit = Commit {
        status: Some(Status::Started),
        swiss: Some(state.clone()),
        standing: vec![("p3".into(), standing.clone())],
        ..Commit::default()
    };
    assert!(!store.commit("swiss-1", "mm-b:1", &commit).await.unwrap(), "not the holder");
    assert_eq!(store.snapshot("swiss-1").await.unwrap().unwrap().swiss, None, "a fenced-off commit writes nothing");
    assert!(store.commit("swiss-1", &token, &commit).await.unwrap());
    let status_only = Commit { results_taken: vec!["g0".into()], ..Commit::default() };
    assert!(store.commit("swiss-1", &token, &status_only).await.unwrap());
    let snapshot = store.snapshot("swiss-1").await.unwrap().unwrap();
    assert_eq!(snapshot.swiss, Some(state), "the rounds are kept across commits without them");
    assert_eq!(snapshot.standing["p3"], standing);
    assert_eq!(snapshot.record.system, System::Swiss);
    assert_eq!((snapshot.record.rounds, snapshot.record.round_interval_s), (3, 10));
}

#[tokio::test]
async fn the_memory_store_keeps_the_tournament_guarantees() {
    behaves(Arc::new(MemoryTournamentStore::new())).await;
}

#[tokio::test]
async fn the_redis_store_keeps_the_tournament_guarantees() {
    let backend = Backend::new("tournament-store");
    let store = RedisTournamentStore::connect(&fogblast_testkit::redis_url(), &backend.prefix).await.unwrap();
    behaves(Arc::new(store)).await;
}

/// On a cluster every script touches one tournament's keys only, which
/// share a hash slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_cluster_keeps_the_tournament_guarantees() {
    let cluster = fogblast_testkit::RedisCluster::start().await;
    let store = RedisTournamentStore::connect(&cluster.url(), "tournament-cluster:").await.unwrap();
    behaves(Arc::new(store)).await;
}
