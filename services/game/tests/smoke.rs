//! A first game end to end: two shards on real Redis and NATS, a game
//! created on one, joined, and played to checkmate through the owner; and
//! its events as both Watch streams carry them.

mod support;

use std::time::Duration;

use fogblast_proto::game::{watch_event, EndReason, Status, Variant, WatchEvent, WatchRequest};
use fogblast_proto::ids::GameId;
use fogblast_store::EventsAfter;
use prost::Message;
use support::{test_config, Backend, Router, ShardProcess};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fools_mate_ends_the_game_by_checkmate() {
    let backend = Backend::distributed("smoke");
    let _a = ShardProcess::start(&backend, "a", test_config()).await;
    let _b = ShardProcess::start(&backend, "b", test_config()).await;
    let router = Router::new(&backend).await;
    let (game, _) = router.start_game(Variant::Standard, "alice", "bob", None).await;
    let moves = ["f2f3", "e7e5", "g2g4", "d8h4"];
    let mut last = 0;
    for (ply, uci) in moves.iter().enumerate() {
        let player = if ply % 2 == 0 { "alice" } else { "bob" };
        let version = router.make_move(&game, player, uci, ply as u32).await.unwrap();
        assert!(version > last);
        last = version;
    }
    let state = router.state(&game, "alice").await;
    assert_eq!(state.status(), Status::Ended);
    assert_eq!(state.reason(), EndReason::Checkmate);
    assert_eq!(state.result, "0-1");
    assert_eq!(state.moves.len(), 4);
}

/// The encoded stream sends each event as the store holds it, live and
/// from the history alike, and the plain stream is the same events decoded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_encoded_watch_stream_carries_the_stored_bytes_of_every_event() {
    let backend = Backend::distributed("encoded-watch");
    let _a = ShardProcess::start(&backend, "a", test_config()).await;
    let router = Router::new(&backend).await;
    let (game, _) = router.start_game(Variant::Atomic, "alice", "bob", None).await;
    let id = GameId::parse(&game).unwrap();
    let addr = router.owner_addr(&id).await.unwrap();
    let request = WatchRequest { game_id: game.clone(), after_version: 0 };
    let mut encoded = router.client(&addr).watch_encoded(request).await.unwrap().into_inner();
    // The history so far comes first, then the moves as they are played.
    let moves = ["e2e4", "d7d5", "e4d5"];
    for (ply, uci) in moves.iter().enumerate() {
        let player = if ply % 2 == 0 { "alice" } else { "bob" };
        router.make_move(&game, player, uci, ply as u32).await.unwrap();
    }
    let Ok(EventsAfter::Events { current, events: stored }) = backend.store().await.events_after(&id, 0).await else {
        panic!("no history");
    };
    let mut received = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        while received.len() < stored.len() {
            let event = encoded.message().await.unwrap().expect("the stream goes on");
            let decoded = WatchEvent::decode(event.event.clone()).unwrap();
            if !matches!(decoded.kind, Some(watch_event::Kind::Heartbeat(_))) {
                received.push((decoded.version, event.event.to_vec()));
            }
        }
    })
    .await
    .expect("every event arrives");
    assert_eq!(received, stored, "the stored bytes, in order");
    assert_eq!(received.last().unwrap().0, current);
    let plain = router.watch_events(&game, 0, stored.len(), Duration::from_secs(10)).await;
    let decoded: Vec<WatchEvent> =
        stored.iter().map(|(_, bytes)| WatchEvent::decode(bytes.as_slice()).unwrap()).collect();
    assert_eq!(plain, decoded);
    assert!(plain.iter().any(|e| matches!(e.kind, Some(watch_event::Kind::Event(_)))));
}
