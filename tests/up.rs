//! `fogblast up` on a fresh machine's terms: no Redis, NATS or Postgres,
//! one process. A player plays the computer to the end over the WebSocket,
//! and the finished game is in the archive as PGN.

mod support;

use serde_json::json;
use support::{http_get, Client, Proc};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_process_plays_the_computer_and_archives_the_game() {
    let up = Proc::up("up");
    let mut player = Client::connect("player", up.http).await;
    player.hello(None).await;
    player
        .send(json!({ "t": "create", "variant": "atomic", "color": "white", "clock": null, "opponent": "computer", "level": "easy" }))
        .await;
    let game = player.expect("created").await["game"].as_str().unwrap().to_owned();
    player.expect("state").await;
    player.send(json!({ "t": "move", "game": game, "uci": "g1f3", "ply": 0 })).await;
    player.expect_move(0).await;
    let reply = player.expect_move(1).await;
    assert!(reply["uci"].is_string(), "the computer replied: {reply}");
    player.send(json!({ "t": "resign", "game": game })).await;
    let end = player.expect("end").await;
    assert_eq!((end["result"].as_str(), end["reason"].as_str()), (Some("0-1"), Some("resign")));
    // The archive gets the game from the in-process bus.
    let mut pgn = None;
    for _ in 0..100 {
        if let Some((200, text)) = http_get(up.http, &format!("/api/games/{game}/pgn")) {
            pgn = Some(text);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let pgn = pgn.expect("the archive has the game");
    assert!(pgn.contains("[Result \"0-1\"]") && pgn.contains("1. Nf3"), "{pgn}");
    up.terminate();
    assert!(up.wait_exit(std::time::Duration::from_secs(15)).is_some_and(|s| s.success()), "{}", up.logs());
}
