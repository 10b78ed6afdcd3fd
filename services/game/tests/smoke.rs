//! A first game end to end: two shards on real Redis and NATS, a game
//! created on one, joined, and played to checkmate through the owner.

mod support;

use fogblast_proto::game::{EndReason, Status, Variant};
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
