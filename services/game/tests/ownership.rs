//! The ownership invariants of `docs/ownership.md`, proved against real
//! Redis and NATS with shards on real gRPC sockets: one writer wins each ply
//! (also when many shards and resends race for it), a resent move is
//! answered again and never played twice, a shard that lost its lease can
//! neither write nor keep a watcher waiting, a shard that gets a game back
//! serves it as the last owner left it, no acknowledged move is lost or
//! doubled and no clock gains or loses time when a shard dies mid-game,
//! flags fall with nobody connected (whether the owner lives or died), and
//! a watcher resumes from its last version, on whichever shard owns the
//! game now, without missing or repeating an event. They exist because each
//! invariant is easy to break by a change that every single-shard test
//! still passes.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fogblast_game_service::{audience, commands, create, deadlines, LiveGame, Timeouts};
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::event_payload::Kind as PayloadKind;
use fogblast_proto::game::{
    watch_event, ClockSettings, ColorChoice, Command, CreateGameRequest, EndReason, GameState, GetStateRequest,
    JoinGameRequest, Player, Status, Variant, WatchEvent, WatchRequest,
};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::record::GameRecord;
use fogblast_rules::{CastlingMode, Game, Position};
use fogblast_store::{placement, Commit, CommitError, EventsAfter, GameStore, StoredGame};
use futures::future::join_all;
use prost::Message;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use support::{eventually, test_config, Backend, Router, ShardProcess};
use tonic::codec::Streaming;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn game_id(text: &str) -> GameId {
    GameId::parse(text).unwrap()
}

fn rules_variant(variant: Variant) -> fogblast_rules::Variant {
    fogblast_rules::Variant::try_from(variant).unwrap_or(fogblast_rules::Variant::Standard)
}

/// The game as the store holds it: the truth every check compares with.
async fn stored(store: &Arc<dyn GameStore>, game: &str) -> (StoredGame, GameRecord) {
    let stored = store.load(&game_id(game)).await.unwrap().expect("the game is stored");
    let record = GameRecord::decode(stored.record.as_slice()).unwrap();
    (stored, record)
}

/// The legal moves that do not end the game at once, in UCI.
fn quiet_moves(replay: &Game) -> Vec<String> {
    replay
        .position()
        .legal_moves()
        .iter()
        .filter(|&&m| {
            let mut next = replay.clone();
            next.play(m).is_ok() && next.outcome().is_none()
        })
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

fn move_request(game: &str, player: &str, uci: &str, ply: u32) -> Command {
    support::move_command(game, player, uci, ply)
}

/// A move sent to one shard, without following redirects.
async fn send_move(router: &Router, addr: &str, request: Command) -> Result<u64, ServiceError> {
    let mut client = router.client(addr);
    client.execute(request).await.map(|r| r.into_inner().version).map_err(|s| ServiceError::from_status(&s))
}

/// A clocked game created on the shard at `addr` (which picks an id it
/// owns) by `white`, and joined by `black` through the router.
async fn start_game_on(
    router: &Router,
    addr: &str,
    variant: Variant,
    white: &str,
    black: &str,
    clock_ms: u32,
) -> String {
    let request = CreateGameRequest {
        player_id: white.to_owned(),
        player_name: white.to_owned(),
        variant: variant as i32,
        color: ColorChoice::ChooseWhite as i32,
        clock: Some(ClockSettings { initial_ms: clock_ms, increment_ms: 0 }),
        ..Default::default()
    };
    let created = router.client(addr).create_game(request).await.unwrap().into_inner();
    router.join(&created.code, black).await.unwrap();
    created.game_id
}

async fn get_state(router: &Router, addr: &str, game: &str, player: &str) -> Result<GameState, ServiceError> {
    let request = GetStateRequest { game_id: game.to_owned(), player_id: player.to_owned() };
    router.client(addr).get_state(request).await.map(|r| r.into_inner()).map_err(|s| ServiceError::from_status(&s))
}

async fn open_watch(
    router: &Router,
    addr: &str,
    game: &str,
    after: u64,
) -> Result<Streaming<WatchEvent>, ServiceError> {
    let request = WatchRequest { game_id: game.to_owned(), after_version: after };
    router.client(addr).watch(request).await.map(|r| r.into_inner()).map_err(|s| ServiceError::from_status(&s))
}

/// How a watch stream stopped delivering.
#[derive(Debug, PartialEq)]
enum StreamEnd {
    /// Still open: `count` events arrived, or the time ran out.
    Open,
    /// Ended cleanly.
    Closed,
    /// Ended with a refusal.
    Error(ServiceError),
}

fn is_heartbeat(event: &WatchEvent) -> bool {
    matches!(event.kind, Some(watch_event::Kind::Heartbeat(_)))
}

/// Reads until `count` events arrived (heartbeats aside), the stream
/// ended, or `limit` passed.
async fn read_events(
    stream: &mut Streaming<WatchEvent>,
    count: usize,
    limit: Duration,
) -> (Vec<WatchEvent>, StreamEnd) {
    let mut events = Vec::new();
    let mut end = StreamEnd::Open;
    let _ = tokio::time::timeout(limit, async {
        while events.len() < count {
            match stream.message().await {
                Ok(Some(event)) if is_heartbeat(&event) => {}
                Ok(Some(event)) => events.push(event),
                Ok(None) => {
                    end = StreamEnd::Closed;
                    break;
                }
                Err(status) => {
                    end = StreamEnd::Error(ServiceError::from_status(&status));
                    break;
                }
            }
        }
    })
    .await;
    (events, end)
}

/// The ply and move of a move event, as White's seat sees it (standard and
/// atomic show every move to every audience).
fn moved(event: &WatchEvent) -> Option<(u32, String)> {
    let Some(watch_event::Kind::Event(all)) = &event.kind else { return None };
    match all.white.as_ref()?.kind.as_ref()? {
        PayloadKind::Move(m) => Some((m.ply, m.uci.clone().unwrap_or_default())),
        _ => None,
    }
}

fn versions(events: &[WatchEvent]) -> Vec<u64> {
    events.iter().map(|e| e.version).collect()
}

/// Every event of a game from the start, as a new watcher on its owner gets
/// them: versions 1..=current with no gap, and each move exactly once, in
/// the stored order.
async fn assert_event_history(router: &Router, game: &str, record: &GameRecord, current: u64) {
    let events = router.watch_events(game, 0, current as usize, Duration::from_secs(5)).await;
    assert_eq!(versions(&events), (1..=current).collect::<Vec<_>>(), "game {game}: the event history has a gap");
    let moves: Vec<(u32, String)> = events.iter().filter_map(moved).collect();
    let expected: Vec<(u32, String)> = record.moves.iter().enumerate().map(|(i, m)| (i as u32, m.clone())).collect();
    assert_eq!(moves, expected, "game {game}: events and stored moves disagree");
}

/// Waits until every shard at `addrs` sees the membership the store holds:
/// a shard's view shows in its answer to a watch of a game that does not
/// exist (`NOT_OWNER` naming the owner it sees, or, for an id it believes
/// it owns, an accepted stream). A shard that started before the others
/// learns of them only at its next heartbeat.
async fn settle(router: &Router, addrs: &[&str]) {
    let probes: Vec<GameId> = (0..8).map(|i| game_id(&format!("probe{i}"))).collect();
    eventually(Duration::from_secs(5), || async {
        let members = router.store.members().await.unwrap();
        for addr in addrs {
            for probe in &probes {
                let owner = placement::owner(probe, &members).unwrap().addr.clone();
                let agrees = match open_watch(router, addr, probe.as_str(), 0).await {
                    Err(e) => e.code == ErrorCode::NotOwner && e.owner.as_deref() == Some(owner.as_str()),
                    Ok(_) => owner == *addr,
                };
                if !agrees {
                    return false;
                }
            }
        }
        true
    })
    .await;
}

fn player(ply: usize, white: &str, black: &str) -> String {
    if ply.is_multiple_of(2) { white } else { black }.to_owned()
}

// ---------------------------------------------------------------------------
// 1, 2: one writer wins
// ---------------------------------------------------------------------------

/// Many move commands for the same ply, with different legal moves and
/// with the same move repeated, all at once to both shards: one move is
/// applied, once; the owner answers the others `STALE_PLY` (or, for copies
/// of the winning move, success at the same version), the other shard
/// answers `NOT_OWNER` naming the owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_writer_wins_each_ply_when_many_race_on_both_shards() {
    let backend = Backend::distributed("own-race");
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    let b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&a.addr, &b.addr]).await;
    let shards = [a.addr.clone(), b.addr.clone()];
    let seed = rand::random::<u64>();
    eprintln!("seed {seed}");
    let mut rng = StdRng::seed_from_u64(seed);

    for (g, variant) in [Variant::Standard, Variant::Atomic, Variant::Fog, Variant::Standard].into_iter().enumerate() {
        let (white, black) = (format!("w{g}"), format!("b{g}"));
        let (game, _) = router.start_game(variant, &white, &black, Some((300_000, 0))).await;
        let owner = router.owner_addr(&game_id(&game)).await.unwrap();
        let mut replay = Game::new(Position::new(rules_variant(variant)));
        let (first, _) = stored(&router.store, &game).await;
        for ply in 0..8usize {
            // The version before this ply's move: one event per move.
            let version = first.version + ply as u64;
            let mut candidates = quiet_moves(&replay);
            candidates.shuffle(&mut rng);
            candidates.truncate(4);
            let mover = player(ply, &white, &black);
            // Each candidate to both shards, the first candidate twice more.
            let mut sends: Vec<(String, String)> = Vec::new();
            for uci in candidates.iter().chain([&candidates[0], &candidates[0]]) {
                for addr in &shards {
                    sends.push((addr.clone(), uci.clone()));
                }
            }
            sends.shuffle(&mut rng);
            let results = join_all(
                sends.iter().map(|(addr, uci)| send_move(&router, addr, move_request(&game, &mover, uci, ply as u32))),
            )
            .await;

            let (after, record) = stored(&router.store, &game).await;
            assert_eq!(record.moves.len(), ply + 1, "game {game} ply {ply}: not exactly one move applied");
            let winner = record.moves[ply].clone();
            assert!(candidates.contains(&winner), "{winner} was never sent");
            assert_eq!(after.version, version + 1, "game {game} ply {ply}: applied more than once");
            let mut successes = 0;
            for ((addr, uci), result) in sends.iter().zip(&results) {
                match result {
                    Ok(v) => {
                        assert_eq!(*uci, winner, "ply {ply}: {uci} succeeded but {winner} was played");
                        assert_eq!(*addr, owner, "a shard that does not own the game accepted a move");
                        assert_eq!(*v, version + 1, "a resend must answer the version of the one application");
                        successes += 1;
                    }
                    Err(e) if e.code == ErrorCode::NotOwner => {
                        assert_ne!(*addr, owner, "the owner refused a move as not its own");
                        assert_eq!(e.owner.as_deref(), Some(owner.as_str()), "NOT_OWNER names the owner");
                    }
                    Err(e) if e.code == ErrorCode::StalePly => {
                        assert_eq!(*addr, owner);
                        assert_ne!(*uci, winner, "a resend of the played move was refused: {e:?}");
                    }
                    Err(e) => panic!("ply {ply}: {uci} at {addr}: unexpected refusal {e:?}"),
                }
            }
            let copies_to_owner = sends.iter().filter(|(addr, uci)| *addr == owner && *uci == winner).count();
            assert_eq!(successes, copies_to_owner, "every copy of the winning move sent to the owner succeeds");
            replay.play_uci(&winner).unwrap();
        }
        let (last, record) = stored(&router.store, &game).await;
        if variant != Variant::Fog {
            assert_event_history(&router, &game, &record, last.version).await;
        }
        let uci: Vec<String> = replay.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
        assert_eq!(record.moves, uci, "the stored history is the sequence of winners");
    }
}

/// The same guard without any shard in the way: commits racing at one
/// version, from writers with equal and newer epochs, and from one with an
/// older epoch: exactly one goes through; the rest are refused and change
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_lets_exactly_one_of_many_racing_commits_through() {
    let backend = Backend::distributed("own-store-race");
    let store = backend.store().await;
    let game = game_id("race-game");
    let commit = |expected_version: u64, epoch: u64, tag: &str| Commit {
        game: game.clone(),
        expected_version,
        epoch,
        record: format!("record {tag}").into_bytes(),
        events: vec![format!("event {tag}").into_bytes()],
        due_at_ms: None,
        finished: false,
        expire_after: None,
        in_play: None,
    };
    store.commit(commit(0, 5, "created")).await.unwrap();
    for round in 1..=10u64 {
        let before = store.load(&game).await.unwrap().unwrap();
        let stored_epoch = before.epoch;
        // Alone, a writer with an older epoch is refused, at any version.
        for expected_version in [round, round - 1, 0] {
            match store.commit(commit(expected_version, stored_epoch - 1, "stale")).await {
                Err(CommitError::StaleEpoch { stored }) => assert_eq!(stored, stored_epoch),
                other => panic!("round {round}: an older epoch at version {expected_version}: {other:?}"),
            }
        }
        assert_eq!(store.load(&game).await.unwrap().unwrap(), before);
        // Epochs equal to and newer than the stored one, and one older.
        let racers: Vec<Commit> = (0..12u64)
            .map(|i| commit(round, stored_epoch + i % 3, &format!("r{round}-{i}")))
            .chain([commit(round, stored_epoch - 1, &format!("r{round}-stale"))])
            .collect();
        let results = join_all(racers.iter().cloned().map(|c| {
            let store = store.clone();
            async move { store.commit(c).await }
        }))
        .await;
        let winners: Vec<usize> = results.iter().enumerate().filter(|(_, r)| r.is_ok()).map(|(i, _)| i).collect();
        let stale_writer_won = winners.contains(&(racers.len() - 1));
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        assert!(!stale_writer_won, "a writer with an epoch older than the stored one won");
        for result in &results {
            match result {
                Ok(version) => assert_eq!(*version, round + 1),
                Err(CommitError::VersionConflict { current }) => assert_eq!(*current, round + 1),
                Err(CommitError::StaleEpoch { stored }) => assert!(*stored >= stored_epoch),
                Err(error) => panic!("{error}"),
            }
        }
        let now = store.load(&game).await.unwrap().unwrap();
        let winner = &racers[winners[0]];
        assert_eq!((now.version, now.epoch, &now.record), (round + 1, winner.epoch, &winner.record));
        let EventsAfter::Events { events, current } = store.events_after(&game, round).await.unwrap() else {
            panic!("the history reaches back one event")
        };
        assert_eq!(current, round + 1);
        assert_eq!(events, vec![(round + 1, winner.events[0].clone())], "only the winner's event was appended");
    }
}

/// A move resent with its ply (after a reconnect) is answered with success
/// and is in the history once, also after later moves and however castling
/// is spelled; a different move, a move by the other player, or a ply from
/// the future at that ply is `STALE_PLY`; none of them touches the clocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_move_is_answered_again_and_never_played_twice() {
    let backend = Backend::distributed("own-resend");
    let _a = ShardProcess::start(&backend, "a", test_config()).await;
    let _b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&_a.addr, &_b.addr]).await;
    let (game, _) = router.start_game(Variant::Standard, "alice", "bob", Some((300_000, 0))).await;
    let line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "e1g1"];
    let mut versions_by_ply = Vec::new();
    for (ply, uci) in line.iter().enumerate() {
        let who = player(ply, "alice", "bob");
        let version = router.make_move(&game, &who, uci, ply as u32).await.unwrap();
        // At once, as a client whose answer was lost would.
        assert_eq!(router.make_move(&game, &who, uci, ply as u32).await.unwrap(), version);
        versions_by_ply.push(version);
    }
    let (before, record_before) = stored(&router.store, &game).await;
    assert_eq!(record_before.moves, line);

    let resends = [(0, "alice", "e2e4"), (3, "bob", "b8c6"), (6, "alice", "e1g1"), (6, "alice", "e1h1")];
    for (ply, who, uci) in resends {
        let answer = router.make_move(&game, who, uci, ply).await;
        assert_eq!(answer, Ok(before.version), "resending {uci} at ply {ply}");
    }
    let refusals = [
        (0, "alice", "d2d4", "another move at a played ply"),
        (5, "bob", "g8f6", "another move at the last ply of that player"),
        (0, "bob", "e2e4", "the other player naming a played move"),
        (6, "bob", "e1g1", "the other player naming a played move"),
        (9, "bob", "g8f6", "a ply from the future"),
        (8, "alice", "d2d3", "a ply from the future"),
    ];
    for (ply, who, uci, what) in refusals {
        let answer = router.make_move(&game, who, uci, ply).await;
        assert_eq!(answer.map_err(|e| e.code), Err(ErrorCode::StalePly), "{what}: {uci} at ply {ply}");
    }
    let (after, record_after) = stored(&router.store, &game).await;
    assert_eq!(after, before, "resends and stale moves changed the stored game");
    assert_eq!(record_after.clock_ms, record_before.clock_ms);
    assert_eq!(record_after.turn_started_ms, record_before.turn_started_ms);
    assert_eq!(versions_by_ply, (3..3 + line.len() as u64).collect::<Vec<_>>(), "one event per move");

    // The game goes on from where it is.
    let next = router.make_move(&game, "bob", "g8f6", 7).await.unwrap();
    assert_eq!(next, before.version + 1);
    assert_eq!(router.make_move(&game, "bob", "g8f6", 7).await, Ok(next));
    let (last, record) = stored(&router.store, &game).await;
    assert_eq!(record.moves.len(), 8);
    assert_event_history(&router, &game, &record, last.version).await;
}

// ---------------------------------------------------------------------------
// 3: stale owners lose
// ---------------------------------------------------------------------------

/// Shard A owns a game; its heartbeat stops past the lease; B takes the game
/// and a move is made there. A's watcher is told the game moved. A write with
/// A's old epoch is refused by the store and changes nothing. When A wakes,
/// a move sent to it for the position it last knew is refused, the history
/// stays as B left it, and A serves the game as B left it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_that_lost_its_lease_cannot_write_over_its_successor() {
    let backend = Backend::distributed("own-stale");
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    let b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&a.addr, &b.addr]).await;
    let store = router.store.clone();
    let game = start_game_on(&router, &a.addr, Variant::Standard, "alice", "bob", 300_000).await;
    assert_eq!(router.owner_addr(&game_id(&game)).await.as_deref(), Some(a.addr.as_str()), "created on A, owned by A");
    router.make_move(&game, "alice", "e2e4", 0).await.unwrap();
    let v_a = router.make_move(&game, "bob", "e7e5", 1).await.unwrap();
    let members = store.members().await.unwrap();
    let epoch = |id: &str| members.iter().find(|m| m.shard.as_str() == id).unwrap().epoch;
    let (epoch_a, epoch_b) = (epoch("a"), epoch("b"));
    let (written_by_a, _) = stored(&store, &game).await;
    assert_eq!(written_by_a.epoch, epoch_a);

    // A watcher follows the game on A.
    let mut watch_a = open_watch(&router, &a.addr, &game, 0).await.unwrap();
    let (seen, _) = read_events(&mut watch_a, v_a as usize, Duration::from_secs(5)).await;
    assert_eq!(versions(&seen), (1..=v_a).collect::<Vec<_>>());

    // A stops renewing its lease, as a paused process would.
    a.pause_heartbeat(true);
    let paused_at = tokio::time::Instant::now();
    eventually(Duration::from_secs(5), || async {
        !store.members().await.unwrap().iter().any(|m| m.shard.as_str() == "a")
    })
    .await;
    assert!(paused_at.elapsed() >= Duration::from_millis(600), "A's lease ran out early");

    // B takes over; the move is B's.
    let v_b = router.make_move(&game, "alice", "g1f3", 2).await.unwrap();
    assert_eq!(v_b, v_a + 1);
    let (written_by_b, record_b) = stored(&store, &game).await;
    assert_eq!(written_by_b.epoch, epoch_b, "the move after the takeover was written by B");
    assert_eq!(record_b.moves, ["e2e4", "e7e5", "g1f3"]);

    // The watcher on A learns that A no longer owns the game, although A's
    // view of the membership never changed while it was paused.
    let (events, end) = read_events(&mut watch_a, 1, Duration::from_secs(3)).await;
    assert!(events.is_empty(), "A cannot know of B's events: {events:?}");
    match end {
        StreamEnd::Error(e) => assert_eq!(e.code, ErrorCode::NotOwner, "{e:?}"),
        other => panic!("the watch on a shard that lost its lease must end with NOT_OWNER, not {other:?}"),
    }
    // It resumes on B from its last version and misses nothing.
    let resumed = router.watch_events(&game, v_a, 1, Duration::from_secs(5)).await;
    assert_eq!(versions(&resumed), [v_b]);
    assert_eq!(moved(&resumed[0]), Some((2, "g1f3".to_owned())));

    // At the store: a write with A's old epoch is refused however current
    // its version, and changes nothing.
    let due_before = store.due_games(u64::MAX, 0, 1_000).await.unwrap();
    let history_before = store.events_after(&game_id(&game), 0).await.unwrap();
    let mut forged = record_b.clone();
    forged.moves[2] = "d2d4".to_owned();
    for expected_version in [written_by_b.version, written_by_a.version] {
        let commit = Commit {
            game: game_id(&game),
            expected_version,
            epoch: epoch_a,
            record: forged.encode_to_vec(),
            events: vec![b"forged".to_vec()],
            due_at_ms: Some(1),
            finished: true,
            expire_after: Some(Duration::from_secs(1)),
            in_play: None,
        };
        match store.commit(commit).await {
            Err(CommitError::StaleEpoch { stored }) => assert_eq!(stored, epoch_b),
            other => panic!("a commit with A's old epoch at version {expected_version}: {other:?}"),
        }
    }
    assert_eq!(stored(&store, &game).await.0, written_by_b, "the refused commit changed the game");
    assert_eq!(store.events_after(&game_id(&game), 0).await.unwrap(), history_before);
    assert_eq!(store.due_games(u64::MAX, 0, 1_000).await.unwrap(), due_before);
    assert!(!store.unpublished(0, 1_000).await.unwrap().contains(&game_id(&game)));

    // A wakes. At once, and again once it has registered anew, a move for
    // the position A last knew is refused and changes nothing.
    a.pause_heartbeat(false);
    let stale = move_request(&game, "alice", "d2d4", 2);
    let early = send_move(&router, &a.addr, stale.clone()).await;
    assert!(
        matches!(&early, Err(e) if matches!(e.code, ErrorCode::NotOwner | ErrorCode::StalePly)),
        "a woken shard accepted a stale move: {early:?}"
    );
    eventually(Duration::from_secs(5), || async {
        store.members().await.unwrap().iter().any(|m| m.shard.as_str() == "a" && m.epoch > epoch_b)
    })
    .await;
    // Once every shard has seen A back, A owns the game again (by the hash)
    // and must serve it as B left it.
    settle(&router, &[&a.addr, &b.addr]).await;
    let late = send_move(&router, &a.addr, stale).await;
    assert!(
        matches!(&late, Err(e) if matches!(e.code, ErrorCode::NotOwner | ErrorCode::StalePly)),
        "a re-registered shard accepted a stale move: {late:?}"
    );
    assert_eq!(stored(&store, &game).await.0, written_by_b, "the stale move changed the game");
    let on_a = get_state(&router, &a.addr, &game, "alice").await.unwrap();
    assert_eq!(on_a.version, written_by_b.version, "A serves a stale copy of the game");
    assert_eq!(on_a.moves.len(), 3);

    // The game goes on, linearly, wherever it is owned now.
    let v_next = router.make_move(&game, "bob", "b8c6", 3).await.unwrap();
    assert_eq!(v_next, v_b + 1);
    let (last, record) = stored(&store, &game).await;
    assert_eq!(record.moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
    assert_event_history(&router, &game, &record, last.version).await;
    drop(b);
}

/// A game moves from A to a shard C that joins, is played there, and moves
/// back to A when C leaves. A must serve it as C left it, not from what it
/// held before: its sweep (which drops games a shard no longer owns) is
/// slow here, so only the ownership change itself can tell A its copy is
/// out of date.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_that_gets_a_game_back_serves_it_as_its_last_owner_left_it() {
    let backend = Backend::distributed("own-back");
    let config = || {
        let mut config = test_config();
        config.settings.sweep_ms = 60_000;
        config
    };
    let a = ShardProcess::start(&backend, "a", config()).await;
    let b = ShardProcess::start(&backend, "b", config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&a.addr, &b.addr]).await;
    // A game of A's that C will own while it is there.
    let mut members = router.store.members().await.unwrap();
    members.push(fogblast_store::Member {
        shard: fogblast_proto::ids::ShardId::parse("c").unwrap(),
        addr: "c".to_owned(),
        epoch: 0,
    });
    let mut game = None;
    for _ in 0..40 {
        let id = start_game_on(&router, &a.addr, Variant::Standard, "alice", "bob", 300_000).await;
        if placement::owner(&game_id(&id), &members).unwrap().shard.as_str() == "c" {
            game = Some(id);
            break;
        }
    }
    let game = game.expect("one game in three falls to C");
    router.make_move(&game, "alice", "e2e4", 0).await.unwrap();
    router.make_move(&game, "bob", "e7e5", 1).await.unwrap();

    let c = ShardProcess::start(&backend, "c", config()).await;
    settle(&router, &[&a.addr, &b.addr, &c.addr]).await;
    let on_c = router.make_move(&game, "alice", "g1f3", 2).await.unwrap();
    assert_eq!(
        stored(&router.store, &game).await.0.epoch,
        router.store.members().await.unwrap().iter().find(|m| m.shard.as_str() == "c").unwrap().epoch,
        "C made the move"
    );
    c.stop().await;
    settle(&router, &[&a.addr, &b.addr]).await;

    let state = get_state(&router, &a.addr, &game, "alice").await.unwrap();
    assert_eq!((state.version, state.moves.len()), (on_c, 3), "A serves the game as it held it before C");
    let next = router.make_move(&game, "bob", "b8c6", 3).await;
    assert_eq!(next, Ok(on_c + 1), "A refuses a move on the strength of an old copy");
    let (last, record) = stored(&router.store, &game).await;
    assert_eq!(record.moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
    assert_event_history(&router, &game, &record, last.version).await;
}

// ---------------------------------------------------------------------------
// 1, 4: a shard dies mid-game
// ---------------------------------------------------------------------------

/// A move the service acknowledged, with Redis `TIME` read just before the
/// attempt that succeeded (`t0`) and just after the answer (`t1`): the
/// store time the shard settled the clock at lies between them.
#[derive(Clone, Debug)]
struct Acked {
    uci: String,
    version: u64,
    t0: u64,
    t1: u64,
}

/// A move through the router (which waits out failovers), timed, and
/// sent again with the same ply, as a client would, when the connection
/// broke under the call (the router gives up on a transport error: a
/// connection to the killed shard that was open when it died).
///
/// `t0` is read before each attempt and the last attempt's kept: attempts
/// that failed did not commit (`NOT_OWNER` is decided before any write,
/// and a call that reached no live shard was never run, since no call is in
/// flight when the shard is killed), so the commit happened during the
/// last one.
async fn timed_move(router: &Router, game: &str, player: &str, uci: &str, ply: u32) -> Result<Acked, ServiceError> {
    let request = move_request(game, player, uci, ply);
    let started = Arc::new(AtomicU64::new(0));
    let store = router.store.clone();
    let mut broken = 0;
    let answer = loop {
        let answer = router
            .on_owner(game, |mut client| {
                let (request, started, store) = (request.clone(), started.clone(), store.clone());
                async move {
                    let t0 = store.now_ms().await.map_err(|e| tonic::Status::unavailable(e.to_string()))?;
                    started.store(t0, Ordering::SeqCst);
                    client.execute(request).await
                }
            })
            .await;
        match answer {
            Err(e) if e.owner.is_none() && e.for_log().contains("transport error") && broken < 20 => {
                broken += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            answer => break answer?,
        }
    };
    let t1 = router.store.now_ms().await.unwrap();
    Ok(Acked { uci: uci.to_owned(), version: answer.version, t0: started.load(Ordering::SeqCst), t1 })
}

/// A game the test plays, with every move acknowledged so far.
#[derive(Clone, Debug)]
struct Played {
    id: String,
    variant: Variant,
    white: String,
    black: String,
    acked: Vec<Acked>,
}

/// Plays `plies` random moves that do not end the game, through the router.
async fn play_on(router: Arc<Router>, mut game: Played, plies: usize, seed: u64) -> Played {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut replay = Game::new(Position::new(rules_variant(game.variant)));
    for a in &game.acked {
        replay.play_uci(&a.uci).unwrap();
    }
    for _ in 0..plies {
        let ply = game.acked.len();
        let moves = quiet_moves(&replay);
        let uci = moves[rng.random_range(0..moves.len())].clone();
        let who = player(ply, &game.white, &game.black);
        let done = timed_move(&router, &game.id, &who, &uci, ply as u32)
            .await
            .unwrap_or_else(|e| panic!("game {} ply {ply}: {uci} refused: {e:?}", game.id));
        replay.play_uci(&uci).unwrap();
        game.acked.push(done);
    }
    game
}

/// Bounds on each side's remaining time after each ply, from the test's own
/// `TIME` readings: the clock runs from ply 2, the mover at ply `p` is
/// charged `now_p - now_(p-1)` (no increment, no lag claimed), and each
/// `now_p` lies in `[t0_p, t1_p]`.
fn remaining_bounds(acked: &[Acked], initial: u64) -> Vec<(u64, u64)> {
    let mut spent_lo = [0u64; 2];
    let mut spent_hi = [0u64; 2];
    let mut bounds = Vec::new();
    for (p, a) in acked.iter().enumerate() {
        let side = p % 2;
        if p >= 2 {
            let previous = &acked[p - 1];
            spent_lo[side] += a.t0.saturating_sub(previous.t1);
            spent_hi[side] += a.t1 - previous.t0;
        }
        bounds.push((initial.saturating_sub(spent_hi[side]), initial.saturating_sub(spent_lo[side])));
    }
    bounds
}

const CLOCK_TOLERANCE_MS: u64 = 100;

fn assert_within(what: &str, value: u64, (lo, hi): (u64, u64)) {
    assert!(
        value + CLOCK_TOLERANCE_MS >= lo && value <= hi + CLOCK_TOLERANCE_MS,
        "{what}: {value} ms is not within {CLOCK_TOLERANCE_MS} ms of the truth [{lo}, {hi}]"
    );
}

/// Plays `plies` more in every game at once.
async fn play_all(router: &Arc<Router>, games: Vec<Played>, plies: usize, seed: u64) -> Vec<Played> {
    let tasks: Vec<_> = games
        .into_iter()
        .enumerate()
        .map(|(i, game)| tokio::spawn(play_on(router.clone(), game, plies, seed.wrapping_add(i as u64 * 7_919))))
        .collect();
    let mut played = Vec::new();
    for task in tasks {
        played.push(task.await.unwrap());
    }
    played
}

/// Twelve clocked games spread over three shards; a few moves each; one
/// shard is killed (no lease given up); every game goes on through the
/// router. Every game's history is exactly the acknowledged moves, once
/// each, in order, with contiguous events; and no clock gained or lost time.
///
/// The clocks are checked against an expectation the test computes on its
/// own: it reads Redis `TIME` (the service's one time source) right before
/// and after each move (`Execute`) and `GetState`, which bounds the store time at
/// which the shard settled each move. From those bounds follow bounds on
/// each side's remaining time after every ply (`remaining_bounds`). The
/// stored remaining time after every ply, the waiting side's clock in
/// `GetState` at the end (exactly its remaining time after its last move),
/// and the running side's (its remaining time less the store time since the
/// last move) must lie within 100 ms of those bounds. The first move after
/// the kill spans the failover, so a new owner that restarted the running
/// clock at its takeover, or settled it on its own clock, would hand back
/// that time and fall outside them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_acknowledged_move_is_lost_or_doubled_and_clocks_stay_exact_when_a_shard_dies() {
    const INITIAL_MS: u32 = 300_000;
    const BEFORE: usize = 4;
    const AFTER: usize = 8;
    let backend = Backend::distributed("own-kill");
    let mut shards = Vec::new();
    for id in ["a", "b", "c"] {
        shards.push(ShardProcess::start(&backend, id, test_config()).await);
    }
    let router = Arc::new(Router::new(&backend).await);
    settle(&router, &shards.iter().map(|s| s.addr.as_str()).collect::<Vec<_>>()).await;
    let store = router.store.clone();
    let seed = rand::random::<u64>();
    eprintln!("seed {seed}");
    let variants = [Variant::Standard, Variant::Atomic, Variant::Fog];
    let mut games = Vec::new();
    for i in 0..12 {
        let shard = &shards[i / 4];
        let (white, black) = (format!("g{i}-w"), format!("g{i}-b"));
        let variant = variants[i % 3];
        let id = start_game_on(&router, &shard.addr, variant, &white, &black, INITIAL_MS).await;
        assert_eq!(router.owner_addr(&game_id(&id)).await.as_deref(), Some(shard.addr.as_str()));
        games.push(Played { id, variant, white, black, acked: Vec::new() });
    }
    let games = play_all(&router, games, BEFORE, seed).await;

    let victim = shards.remove(0);
    let victim_id = victim.id.clone();
    victim.kill();
    let killed_at = tokio::time::Instant::now();
    let games = play_all(&router, games, AFTER, seed ^ 0x5eed).await;
    eprintln!("{AFTER} plies in each game, failover included, in {:?}", killed_at.elapsed());
    assert!(
        !store.members().await.unwrap().iter().any(|m| m.shard.as_str() == victim_id),
        "the killed shard's lease outlived it"
    );

    let mut widest = 0;
    for game in &games {
        let n = game.acked.len();
        assert_eq!(n, BEFORE + AFTER);
        let (st, record) = stored(&store, &game.id).await;
        let acked: Vec<String> = game.acked.iter().map(|a| a.uci.clone()).collect();
        assert_eq!(record.moves, acked, "game {}: the history is not the acknowledged moves", game.id);
        let versions: Vec<u64> = game.acked.iter().map(|a| a.version).collect();
        assert_eq!(versions, (3..3 + n as u64).collect::<Vec<_>>(), "game {}: one event per move", game.id);
        assert_eq!(st.version, 2 + n as u64);
        assert_eq!(record.status(), Status::Playing);
        if game.variant != Variant::Fog {
            assert_event_history(&router, &game.id, &record, st.version).await;
        }

        let bounds = remaining_bounds(&game.acked, u64::from(INITIAL_MS));
        widest = widest.max(bounds.iter().map(|(lo, hi)| hi - lo).max().unwrap());
        for (p, (remaining, bound)) in record.clock_ms.iter().zip(&bounds).enumerate() {
            assert_within(&format!("game {} remaining after ply {p}", game.id), *remaining, *bound);
        }
        let last = game.acked.last().unwrap();
        assert!(
            (last.t0..=last.t1).contains(&record.turn_started_ms),
            "game {}: the running clock started at {}, not at the last move [{}, {}]",
            game.id,
            record.turn_started_ms,
            last.t0,
            last.t1
        );

        let g0 = store.now_ms().await.unwrap();
        let state = router.state(&game.id, &game.white).await;
        let g1 = store.now_ms().await.unwrap();
        let clock = state.clock.expect("a clocked game");
        let side_ms = |side: usize| if side == 0 { clock.white_ms } else { clock.black_ms };
        let (waiting, running) = ((n - 1) % 2, n % 2);
        assert_eq!(clock.running, if running == 0 { 1 } else { 2 }, "game {}: the side to move runs", game.id);
        assert_eq!(side_ms(waiting), record.clock_ms[n - 1], "game {}: the waiting clock is frozen", game.id);
        assert_within(&format!("game {} waiting clock", game.id), side_ms(waiting), bounds[n - 1]);
        let (lo, hi) = bounds[n - 2];
        let running_bounds = (lo.saturating_sub(g1 - last.t0), hi.saturating_sub(g0.saturating_sub(last.t1)));
        assert_within(&format!("game {} running clock", game.id), side_ms(running), running_bounds);
    }
    eprintln!("widest bound on a remaining time: {widest} ms");
}

// ---------------------------------------------------------------------------
// 5: flags fall
// ---------------------------------------------------------------------------

/// A game id that `shard` owns under `members`.
fn id_owned_by(members: &[fogblast_store::Member], shard: &str) -> GameId {
    let mut rng = rand::rng();
    loop {
        let id = create::random_game_id(&mut rng);
        if placement::owner(&id, members).unwrap().shard.as_str() == shard {
            return id;
        }
    }
}

/// Writes a game into the store as its owner (at `epoch`) would have
/// committed it, at version 0: a 1+0 game between `flag-w` and `flag-b`
/// with two plies played and White to move, each side with the time given
/// left, no lag quota (so the flag falls exactly when the time is out), the
/// clock started now, and the flag time in the deadline set. Returns the
/// flag time. This is how a test gets a flag in seconds without letting a
/// client create a clock shorter than a minute.
async fn write_clocked_game(
    store: &Arc<dyn GameStore>,
    game: &GameId,
    epoch: u64,
    initial_fen: Option<&str>,
    moves: [&str; 2],
    white_ms: u64,
    black_ms: u64,
) -> u64 {
    let now = store.now_ms().await.unwrap();
    let timeouts = Timeouts::default();
    let spec = create::NewGame {
        player: PlayerId::parse("flag-w").unwrap(),
        name: "flag-w".to_owned(),
        variant: fogblast_rules::Variant::Standard,
        chess960: false,
        chess960_position: None,
        color: ColorChoice::ChooseWhite,
        clock: Some(ClockSettings { initial_ms: 60_000, increment_ms: 0 }),
        computer: None,
        rated: false,
        tournament: String::new(),
    };
    let (mut record, _) = create::new_record(game, "", &spec, now - 20_000, &mut StdRng::seed_from_u64(1));
    if let Some(fen) = initial_fen {
        record.initial_fen = fen.to_owned();
    }
    record.black.as_mut().unwrap().player =
        Some(Player { id: "flag-b".to_owned(), name: "flag-b".to_owned(), ..Default::default() });
    record.set_status(Status::Playing);
    record.started_at_ms = now - 20_000;
    record.moves = moves.iter().map(|m| (*m).to_owned()).collect();
    record.clock_ms = vec![white_ms, black_ms];
    for (seat, remaining_ms) in [(&mut record.white, white_ms), (&mut record.black, black_ms)] {
        let seat = seat.as_mut().unwrap();
        seat.remaining_ms = remaining_ms;
        seat.lag_quota_ms = 0;
    }
    record.turn_started_ms = now;
    let mut live = LiveGame::from_record(record).unwrap();
    let due = deadlines::next_due(&live, &timeouts).unwrap();
    assert_eq!(due, now + white_ms, "White's flag is what falls due");
    live.record.due_at_ms = due;
    let reset = audience::event_for_all(&live, &commands::Event::Reset, 1, now, &timeouts);
    let event = WatchEvent { version: 1, kind: Some(watch_event::Kind::Event(reset)) };
    let commit = Commit {
        game: game.clone(),
        expected_version: 0,
        epoch,
        record: live.record.encode_to_vec(),
        events: vec![event.encode_to_vec()],
        due_at_ms: Some(due),
        finished: false,
        expire_after: None,
        in_play: None,
    };
    assert_eq!(store.commit(commit).await.unwrap(), 1);
    due
}

/// A game flagged as it should be: ended on time, the flagged side at zero,
/// not before its time ran out and no later than `latest`; and `GetState`
/// through the router says so.
async fn assert_flagged(router: &Router, game: &GameId, due: u64, latest: u64, result: &str) -> StoredGame {
    let (st, record) = stored(&router.store, game.as_str()).await;
    assert_eq!(record.status(), Status::Ended, "game {game}");
    assert_eq!(record.reason(), EndReason::Timeout, "game {game}");
    assert_eq!(record.result, result, "game {game}");
    assert!(record.ended_at_ms >= due, "game {game} flagged {} ms early", due - record.ended_at_ms);
    assert!(record.ended_at_ms <= latest, "game {game} flagged {} ms late", record.ended_at_ms - due);
    let flagged = if record.moves.len() % 2 == 0 { &record.white } else { &record.black };
    assert_eq!(flagged.as_ref().unwrap().remaining_ms, 0);
    let state = router.state(game.as_str(), "flag-w").await;
    assert_eq!((state.status(), state.reason(), state.result.as_str()), (Status::Ended, EndReason::Timeout, result));
    assert_eq!(state.version, st.version);
    st
}

async fn ended(store: &Arc<dyn GameStore>, game: &GameId) -> bool {
    let (_, record) = stored(store, game.as_str()).await;
    record.status() == Status::Ended
}

/// Two games run out of time with nobody connected, and their owner is
/// killed the moment they are written: another shard flags both, within
/// the lease and a sweep of the flag time, one as a loss and one as a draw
/// (the side left with a bare king cannot win), and publishes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_fall_with_nobody_connected_after_the_owner_died() {
    let backend = Backend::distributed("own-flag-dead");
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    let _b = ShardProcess::start(&backend, "b", test_config()).await;
    let _c = ShardProcess::start(&backend, "c", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&a.addr, &_b.addr, &_c.addr]).await;
    let store = router.store.clone();
    let members = store.members().await.unwrap();
    let epoch_a = members.iter().find(|m| m.shard.as_str() == "a").unwrap().epoch;
    let (decisive, drawn) = (id_owned_by(&members, "a"), id_owned_by(&members, "a"));
    let due_decisive = write_clocked_game(&store, &decisive, epoch_a, None, ["e2e4", "e7e5"], 1_500, 50_000).await;
    let bare_king = "4k3/8/8/8/8/8/8/4K2Q w - - 0 1";
    let due_drawn = write_clocked_game(&store, &drawn, epoch_a, Some(bare_king), ["e1e2", "e8e7"], 1_500, 50_000).await;
    a.kill();

    let config = test_config();
    let slack = config.settings.lease_ms + config.settings.sweep_ms;
    let limit = due_drawn.max(due_decisive) + slack + 1_000 - store.now_ms().await.unwrap();
    eventually(Duration::from_millis(limit), || async {
        ended(&store, &decisive).await && ended(&store, &drawn).await
    })
    .await;
    let survivors = store.members().await.unwrap();
    assert!(!survivors.iter().any(|m| m.shard.as_str() == "a"));
    for (game, due, result) in [(&decisive, due_decisive, "0-1"), (&drawn, due_drawn, "1/2-1/2")] {
        let st = assert_flagged(&router, game, due, due + slack, result).await;
        let owner = placement::owner(game, &survivors).unwrap();
        assert_eq!(st.epoch, owner.epoch, "game {game} was flagged by its new owner, {}", owner.shard);
    }
    eventually(Duration::from_secs(5), || async {
        let outbox = store.unpublished(0, 1_000).await.unwrap();
        !outbox.contains(&decisive) && !outbox.contains(&drawn)
    })
    .await;
}

/// With the owner alive and nobody connected, a flag falls on time both for
/// a game the owner never loaded (its sweep finds the deadline) and for one
/// whose last move it made (its own timer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_fall_with_nobody_connected_on_a_live_owner() {
    let backend = Backend::distributed("own-flag-live");
    let _a = ShardProcess::start(&backend, "a", test_config()).await;
    let _b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&_a.addr, &_b.addr]).await;
    let store = router.store.clone();
    let members = store.members().await.unwrap();
    let epoch_b = members.iter().find(|m| m.shard.as_str() == "b").unwrap().epoch;
    let (swept, timed) = (id_owned_by(&members, "b"), id_owned_by(&members, "b"));
    let due_swept = write_clocked_game(&store, &swept, epoch_b, None, ["e2e4", "e7e5"], 1_500, 50_000).await;
    write_clocked_game(&store, &timed, epoch_b, None, ["d2d4", "d7d5"], 50_000, 1_500).await;
    router.make_move(timed.as_str(), "flag-w", "g1f3", 2).await.unwrap();
    let (_, record) = stored(&store, timed.as_str()).await;
    let due_timed = record.turn_started_ms + 1_500;

    let config = test_config();
    let slack = config.settings.sweep_ms + 600;
    let limit = due_swept.max(due_timed) + slack + 1_000 - store.now_ms().await.unwrap();
    eventually(Duration::from_millis(limit), || async { ended(&store, &swept).await && ended(&store, &timed).await })
        .await;
    for (game, due, result) in [(&swept, due_swept, "0-1"), (&timed, due_timed, "1-0")] {
        let st = assert_flagged(&router, game, due, due + slack, result).await;
        assert_eq!(st.epoch, epoch_b, "game {game} was flagged by its owner");
    }
}

// ---------------------------------------------------------------------------
// 6: resumable
// ---------------------------------------------------------------------------

const LINE: [&str; 13] =
    ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "d2d3", "g8f6", "c2c3", "d7d6", "b1d2", "a7a6", "e1g1"];

/// A watcher that read up to version v and went away gets exactly the
/// events after v when it comes back, in order; one that comes back from
/// further than the store's history reaches gets a snapshot of the game at
/// the current version and then every event after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_resumes_from_its_last_version_or_gets_a_snapshot() {
    // The default history.
    let backend = Backend::distributed("own-resume");
    let _a = ShardProcess::start(&backend, "a", test_config()).await;
    let _b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&_a.addr, &_b.addr]).await;
    let (game, _) = router.start_game(Variant::Standard, "alice", "bob", None).await;
    for (ply, uci) in LINE[..4].iter().enumerate() {
        router.make_move(&game, &player(ply, "alice", "bob"), uci, ply as u32).await.unwrap();
    }
    let first = router.watch_events(&game, 0, 6, Duration::from_secs(5)).await;
    assert_eq!(versions(&first), [1, 2, 3, 4, 5, 6]);
    // The watcher is gone; five moves happen.
    for (ply, uci) in LINE[..9].iter().enumerate().skip(4) {
        router.make_move(&game, &player(ply, "alice", "bob"), uci, ply as u32).await.unwrap();
    }
    let resumed = router.watch_events(&game, 6, 6, Duration::from_millis(700)).await;
    assert_eq!(versions(&resumed), [7, 8, 9, 10, 11], "exactly the missing events");
    let all = router.watch_events(&game, 0, 11, Duration::from_secs(5)).await;
    assert_eq!(resumed, all[6..], "the resumed events are the events");
    let moves: Vec<(u32, String)> = resumed.iter().filter_map(moved).collect();
    let expected: Vec<(u32, String)> = (4..9).map(|p| (p as u32, LINE[p].to_owned())).collect();
    assert_eq!(moves, expected);

    // A history of eight events.
    let backend = Backend::distributed("own-snapshot");
    let _x = ShardProcess::start_with_history(&backend, "x", test_config(), 8).await;
    let _y = ShardProcess::start_with_history(&backend, "y", test_config(), 8).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&_x.addr, &_y.addr]).await;
    let (game, _) = router.start_game(Variant::Standard, "alice", "bob", None).await;
    for (ply, uci) in LINE[..12].iter().enumerate() {
        router.make_move(&game, &player(ply, "alice", "bob"), uci, ply as u32).await.unwrap();
    }
    assert_eq!(router.store.events_after(&game_id(&game), 5).await.unwrap(), EventsAfter::Gap { current: 14 });
    // Exactly as far back as the history reaches: events.
    let edge = router.watch_events(&game, 6, 9, Duration::from_millis(700)).await;
    assert_eq!(versions(&edge), (7..=14).collect::<Vec<_>>());
    assert!(edge.iter().all(|e| matches!(e.kind, Some(watch_event::Kind::Event(_)))));
    // One further: a snapshot, then the events after it.
    let owner = router.owner_addr(&game_id(&game)).await.unwrap();
    let mut stream = open_watch(&router, &owner, &game, 5).await.unwrap();
    let (events, _) = read_events(&mut stream, 1, Duration::from_secs(5)).await;
    assert_eq!(versions(&events), [14]);
    let Some(watch_event::Kind::Snapshot(snapshot)) = &events[0].kind else { panic!("not a snapshot: {events:?}") };
    for state in [&snapshot.white, &snapshot.black, &snapshot.spectators] {
        let state = state.as_ref().unwrap();
        assert_eq!(state.version, 14);
        let moves: Vec<String> = state.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
        assert_eq!(moves, LINE[..12]);
    }
    router.make_move(&game, "alice", LINE[12], 12).await.unwrap();
    let (events, end) = read_events(&mut stream, 1, Duration::from_secs(5)).await;
    assert_eq!(end, StreamEnd::Open);
    assert_eq!(versions(&events), [15]);
    assert_eq!(moved(&events[0]), Some((12, LINE[12].to_owned())));
}

/// A watch stream on the owner ends with `NOT_OWNER` naming the new owner
/// when the owner shuts down; the watcher resumes there from its last
/// version and gets every event it had not seen, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_on_a_stopping_owner_ends_with_not_owner_and_resumes_on_the_new_owner() {
    let backend = Backend::distributed("own-handover");
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    let b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Arc::new(Router::new(&backend).await);
    settle(&router, &[&a.addr, &b.addr]).await;
    let game = start_game_on(&router, &a.addr, Variant::Standard, "alice", "bob", 300_000).await;
    let refused = open_watch(&router, &b.addr, &game, 0).await.expect_err("B does not own the game");
    assert_eq!((refused.code, refused.owner.as_deref()), (ErrorCode::NotOwner, Some(a.addr.as_str())));

    router.make_move(&game, "alice", LINE[0], 0).await.unwrap();
    let mut stream = open_watch(&router, &a.addr, &game, 0).await.unwrap();
    let (seen, _) = read_events(&mut stream, 3, Duration::from_secs(5)).await;
    assert_eq!(versions(&seen), [1, 2, 3]);
    router.make_move(&game, "bob", LINE[1], 1).await.unwrap();
    // A move the watcher may or may not see before A goes.
    router.make_move(&game, "alice", LINE[2], 2).await.unwrap();

    let reader = tokio::spawn(async move { read_events(&mut stream, usize::MAX, Duration::from_secs(10)).await });
    a.stop().await;
    let (events, end) = reader.await.unwrap();
    match end {
        StreamEnd::Error(e) => {
            assert_eq!(e.code, ErrorCode::NotOwner, "{e:?}");
            assert_eq!(e.owner.as_deref(), Some(b.addr.as_str()), "NOT_OWNER names the new owner");
        }
        other => panic!("the watch on a stopping owner must end with NOT_OWNER, not {other:?}"),
    }
    let mut last = 3;
    for event in &events {
        assert_eq!(event.version, last + 1);
        last = event.version;
    }
    assert!(last <= 5);

    for (ply, uci) in LINE[..6].iter().enumerate().skip(3) {
        router.make_move(&game, &player(ply, "alice", "bob"), uci, ply as u32).await.unwrap();
    }
    let request = WatchRequest { game_id: game.clone(), after_version: last };
    let resumed = router
        .on_owner(&game, |mut client| {
            let request = request.clone();
            async move { client.watch(request).await }
        })
        .await;
    let mut resumed = resumed.unwrap();
    let (events, end) = read_events(&mut resumed, (8 - last) as usize, Duration::from_secs(5)).await;
    assert_eq!(end, StreamEnd::Open);
    assert_eq!(versions(&events), (last + 1..=8).collect::<Vec<_>>(), "resumed from {last}");
    let moves: Vec<(u32, String)> = events.iter().filter_map(moved).collect();
    let expected: Vec<(u32, String)> = ((last - 2) as usize..6).map(|p| (p as u32, LINE[p].to_owned())).collect();
    assert_eq!(moves, expected);
}

/// Right after a shard joins, a shard that registered before it may still
/// believe it owns games the new one owns, and write them. The new owner's
/// broadcast never carries those writes; its watchers read them from the
/// store while membership is unsettled, so nobody waits for a `seated` or
/// a move that already happened.
#[tokio::test]
async fn a_watch_relays_what_a_shard_with_an_older_view_wrote() {
    let backend = Backend::distributed("own-older-view");
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    a.freeze_view(true);
    let b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    // A, seeing only itself, creates games under any id; find one B owns.
    // Half of them are B's; B is looked for by the store's membership, which
    // may lack B for a moment on a loaded machine (its lease is short here),
    // so the search goes on for a while rather than for a count.
    let mut on_b = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    for attempt in 0.. {
        if tokio::time::Instant::now() >= deadline {
            break;
        }
        let request = CreateGameRequest {
            player_id: format!("white{attempt}"),
            player_name: "white".to_owned(),
            variant: Variant::Standard as i32,
            color: ColorChoice::ChooseWhite as i32,
            ..Default::default()
        };
        let created = router.client(&a.addr).create_game(request).await.unwrap().into_inner();
        if router.owner_addr(&game_id(&created.game_id)).await.as_deref() == Some(b.addr.as_str()) {
            on_b = Some((created.game_id, format!("white{attempt}")));
            break;
        }
    }
    let (game, white) = on_b.expect("a game A made hashes to B within 20 s");
    let mut watch_b = open_watch(&router, &b.addr, &game, 1).await.unwrap();
    // A seats black and plays a move on its stale view; B is not told.
    let (_, record) = stored(&router.store, &game).await;
    let joined = router
        .client(&a.addr)
        .join_game(JoinGameRequest {
            player_id: "black".into(),
            player_name: "black".into(),
            code: record.code.clone(),
            ..Default::default()
        })
        .await
        .expect("A seats black on its own view")
        .into_inner();
    assert_eq!(joined.game_id, game);
    send_move(&router, &a.addr, move_request(&game, &white, "e2e4", 0)).await.expect("A plays on its own view");
    let (_, record) = stored(&router.store, &game).await;
    assert_eq!(record.moves, ["e2e4"], "the store holds A's writes");

    let (seen, end) = read_events(&mut watch_b, 2, Duration::from_secs(3)).await;
    assert_eq!(end, StreamEnd::Open);
    assert_eq!(versions(&seen), [2, 3], "B's watcher gets the seat and the move A wrote");
    assert_eq!(moved(&seen[1]), Some((0, "e2e4".to_owned())));
    a.freeze_view(false);
}

/// A game against the Easy computer, which moves first.
fn computer_moves_first(player: &str) -> CreateGameRequest {
    CreateGameRequest {
        player_id: player.to_owned(),
        player_name: "p".to_owned(),
        variant: Variant::Standard as i32,
        color: ColorChoice::ChooseBlack as i32,
        computer: true,
        level: fogblast_proto::game::Level::Easy as i32,
        ..Default::default()
    }
}

/// A dead shard's deadlines are found by the shard that takes its games,
/// however many entries it cannot act on come first: here 600 computer
/// turns with no engine to ask, older than an open game's expiry.
#[tokio::test]
async fn the_sweep_pages_past_deadlines_it_cannot_act_on() {
    let backend = Backend::embedded();
    let config = || {
        let mut config = test_config();
        config.settings.timeouts.open_game_ms = 3_000;
        config
    };
    let a = ShardProcess::start(&backend, "a", config()).await;
    let router = Router::new(&backend).await;
    for n in 0..600 {
        router.client(&a.addr).create_game(computer_moves_first(&format!("p{n}"))).await.unwrap();
    }
    let open = CreateGameRequest {
        player_id: "host".to_owned(),
        player_name: "host".to_owned(),
        variant: Variant::Standard as i32,
        color: ColorChoice::ChooseWhite as i32,
        ..Default::default()
    };
    let open = router.client(&a.addr).create_game(open).await.unwrap().into_inner().game_id;
    // A dies with every timer; B takes all of it over from the store.
    a.kill();
    let b = ShardProcess::start(&backend, "b", config()).await;
    settle(&router, &[&b.addr]).await;
    eventually(Duration::from_secs(10), || async {
        let (_, record) = stored(&router.store, &open).await;
        record.status() == fogblast_proto::game::Status::Ended
    })
    .await;
    let (_, record) = stored(&router.store, &open).await;
    assert_eq!(record.reason(), EndReason::Aborted, "the open game nobody joined expired");
}

/// A computer's turn that no engine answers leaves no deadline overdue:
/// its rescue deadline moves on after each look, so the sweep's list of
/// overdue games holds only what can be acted on.
#[tokio::test]
async fn a_computer_turn_no_engine_answers_is_rescheduled() {
    let backend = Backend::embedded();
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    let router = Router::new(&backend).await;
    let game = router.client(&a.addr).create_game(computer_moves_first("p")).await.unwrap().into_inner().game_id;
    let game = GameId::parse(&game).unwrap();
    let created = router.store.now_ms().await.unwrap();
    let rescue = deadlines::COMPUTER_RESCUE_MS;
    let first = router.store.due_games(created + rescue + 1_000, 0, 10).await.unwrap();
    assert_eq!(first.iter().map(|(g, _)| g).collect::<Vec<_>>(), vec![&game], "the computer's turn has a deadline");
    // Past the deadline and a sweep: moved on, not left overdue.
    tokio::time::sleep(Duration::from_millis(rescue + 1_500)).await;
    let now = router.store.now_ms().await.unwrap();
    assert!(router.store.due_games(now, 0, 10).await.unwrap().is_empty(), "nothing overdue");
    let later = router.store.due_games(now + rescue, 0, 10).await.unwrap();
    assert_eq!(later.len(), 1, "the rescue comes up again");
    assert!(later[0].1 > first[0].1, "{later:?} after {first:?}");
}

/// A quiet game's stream says it is alive about once a second, with the
/// last version it sent, and carries the next event as usual.
#[tokio::test]
async fn a_quiet_watch_stream_sends_heartbeats() {
    let backend = Backend::embedded();
    let a = ShardProcess::start(&backend, "a", test_config()).await;
    let router = Router::new(&backend).await;
    settle(&router, &[&a.addr]).await;
    let (game, _) = router.start_game(Variant::Standard, "alice", "bob", None).await;
    let version = router.make_move(&game, "alice", "e2e4", 0).await.unwrap();
    let mut stream = open_watch(&router, &a.addr, &game, version).await.unwrap();
    let started = std::time::Instant::now();
    let beat = tokio::time::timeout(Duration::from_secs(3), stream.message()).await.unwrap().unwrap().unwrap();
    assert!(is_heartbeat(&beat), "{beat:?}");
    assert_eq!(beat.version, version);
    assert!(started.elapsed() >= Duration::from_millis(900), "not before the stream was quiet for a second");
    let moved = router.make_move(&game, "bob", "e7e5", 1).await.unwrap();
    let (events, _) = read_events(&mut stream, 1, Duration::from_secs(3)).await;
    assert_eq!(events.iter().map(|e| e.version).collect::<Vec<_>>(), vec![moved]);
}
