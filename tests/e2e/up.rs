//! `fogblast up` on a fresh machine's terms: no Redis, NATS or Postgres,
//! one process. A player plays the computer to the end over the WebSocket,
//! and the finished game is in the archive as PGN; two players are paired by
//! the matchmaker and see open boards in the lobby. Every service's settings
//! reach `up` with the same flags as the service's own command.

use crate::support::{http_get, Client, Cluster, Proc};
use fogblast_client::Connection;
use serde_json::json;

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

/// The matchmaker runs inside `fogblast up` on its in-process store: two
/// seekers are paired into one game where both are seated, and a board
/// for a human opponent shows in the lobby until it is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_process_pairs_seekers_and_lists_open_boards() {
    let up = Proc::up("up-pairing");
    pairs_seekers_and_lists_open_boards(&up).await;
}

/// With REDIS_URL and NATS_URL set, `fogblast up`'s matchmaker keeps its
/// state in Redis like the rest, and pairs the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_redis_the_embedded_matchmaker_keeps_its_state_there() {
    let cluster = Cluster::start("up-redis", 0, 0);
    let up = cluster.spawn_up("up-redis");
    pairs_seekers_and_lists_open_boards(&up).await;
    let mut redis = redis::Client::open(crate::support::redis_url()).unwrap().get_connection().unwrap();
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{}mm:*", cluster.names.redis_prefix)).query(&mut redis).unwrap();
    let pools = format!("{}mm:pools", cluster.names.redis_prefix);
    assert!(keys.contains(&pools), "the matchmaker's keys are in Redis: {keys:?}");
    assert!(keys.iter().any(|k| k.contains(":mm:player:{")), "players' seek pointers in Redis: {keys:?}");
}

async fn pairs_seekers_and_lists_open_boards(up: &Proc) {
    let mut alice = Client::connect("alice", up.http).await;
    let mut bob = Client::connect("bob", up.http).await;
    let mut watcher = Client::connect("watcher", up.http).await;
    alice.hello(None).await;
    bob.hello(None).await;
    watcher.hello(None).await;

    watcher.send(json!({ "t": "lobby", "id": "l" })).await;
    let lobby = watcher.expect("lobby").await;
    assert_eq!((lobby["id"].as_str(), lobby["open"].as_array().map(Vec::len)), (Some("l"), Some(0)), "{lobby}");

    let clock = json!({ "initial_ms": 180_000, "increment_ms": 2_000 });
    for client in [&mut alice, &mut bob] {
        client.send(json!({ "t": "seek", "variant": "atomic", "clock": clock, "rated": false, "id": "s" })).await;
        assert_eq!(client.expect("seeking").await["id"], "s");
    }
    let a = alice.expect("paired").await;
    let b = bob.expect("paired").await;
    assert_eq!(a["game"], b["game"], "{a} {b}");
    let colors = [a["color"].as_str().unwrap(), b["color"].as_str().unwrap()];
    assert!(colors == ["white", "black"] || colors == ["black", "white"], "{colors:?}");
    let game = a["game"].as_str().unwrap().to_owned();
    alice.send(json!({ "t": "watch", "game": game })).await;
    let state = alice.expect("state").await;
    assert_eq!((state["status"].as_str(), state["you"].as_str()), (Some("playing"), Some(colors[0])), "{state}");

    alice.send(json!({ "t": "create", "variant": "fog", "color": "random", "clock": null, "opponent": "human" })).await;
    let code = alice.expect("created").await["code"].as_str().unwrap().to_owned();
    let listed = watcher
        .lobby_until(std::time::Duration::from_secs(5), |open| !open.is_empty())
        .await
        .expect("the new board reaches the lobby");
    assert_eq!((listed[0]["code"].as_str(), listed[0]["variant"].as_str()), (Some(code.as_str()), Some("fog")));
    bob.send(json!({ "t": "join", "code": code })).await;
    bob.expect("joined").await;
    watcher
        .lobby_until(std::time::Duration::from_secs(5), |open| open.is_empty())
        .await
        .expect("the taken board leaves the lobby");
    up.terminate();
    assert!(up.wait_exit(std::time::Duration::from_secs(15)).is_some_and(|s| s.success()), "{}", up.logs());
}

/// `up` takes the gateway's and the game shard's flags: 1,000 sockets from
/// one address are held with `--max-connections-per-ip 100000` (the default
/// of 64 refuses the 65th), and `--no-start-ms` aborts a game between
/// people whose first move does not come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_applies_the_services_flags() {
    let up = Proc::up_with("up-flags", &["--max-connections-per-ip", "100000", "--no-start-ms", "700"]);
    let url = format!("ws://{}/ws", up.http);
    let mut sockets = Vec::new();
    for batch in 0..10 {
        let connects = (0..100).map(|_| Connection::connect(&url));
        for (i, result) in futures::future::join_all(connects).await.into_iter().enumerate() {
            let ws = result.unwrap_or_else(|e| panic!("socket {} refused: {e}", batch * 100 + i + 1));
            sockets.push(ws);
        }
    }
    assert_eq!(sockets.len(), 1_000);
    let mut alice = Client::join("alice", up.http, None).await;
    let mut bob = Client::join("bob", up.http, None).await;
    alice
        .send(json!({ "t": "create", "variant": "atomic", "color": "white", "clock": null, "opponent": "human", "id": "c" }))
        .await;
    let created = alice.expect("created").await;
    let code = created["code"].as_str().expect("an invite code").to_owned();
    bob.send(json!({ "t": "join", "code": code })).await;
    let state = bob.expect("state").await;
    assert!(state["first_move_in_ms"].as_u64().is_some_and(|ms| ms > 0 && ms <= 700), "{state}");
    let end = alice.expect("end").await;
    assert_eq!(end["reason"].as_str(), Some("aborted"), "{end}");
    drop(sockets);

    let defaults = Proc::up("up-default-limits");
    let url = format!("ws://{}/ws", defaults.http);
    let mut held = Vec::new();
    for _ in 0..64 {
        held.push(Connection::connect(&url).await.expect("within the default limit"));
    }
    let refused = Connection::connect(&url).await.expect_err("the 65th socket is refused");
    assert!(refused.to_string().contains("429"), "{refused}");
}

/// A game against the computer waits for its human: nothing aborts it for
/// want of a first move, and no first-move countdown is announced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_against_the_computer_waits_for_the_first_move() {
    let up = Proc::up_with("up-computer-waits", &["--no-start-ms", "300"]);
    let mut player = Client::join("player", up.http, None).await;
    player
        .send(json!({ "t": "create", "variant": "atomic", "color": "white", "clock": null, "opponent": "computer", "level": "easy" }))
        .await;
    let game = player.expect("created").await["game"].as_str().unwrap().to_owned();
    let state = player.expect("state").await;
    assert!(state.get("first_move_in_ms").is_none(), "no countdown against the computer: {state}");
    let early_end = player.find(std::time::Duration::from_millis(1_500), |f| crate::support::t(f) == "end").await;
    assert!(early_end.is_none(), "the game was ended while the human read the board: {early_end:?}");
    player.send(json!({ "t": "move", "game": game, "uci": "g1f3", "ply": 0 })).await;
    player.expect_move(0).await;
    player.expect_move(1).await;
}

/// `fogblast up` keeps its promise across a crash: killed with SIGKILL in
/// the middle of a clocked game and started again on the same files and
/// port, it has every acknowledged move, the running clock has run for the
/// time it was down, and both players come back with their tokens and
/// play on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_in_progress_survives_up_killed_and_started_again() {
    let dir = std::env::temp_dir().join(format!("fogblast-up-kill-{}-{}", std::process::id(), rand::random::<u32>()));
    std::fs::create_dir_all(&dir).unwrap();
    let live = dir.join("live.db").display().to_string();
    let archive = format!("sqlite:{}?mode=rwc", dir.join("fogblast.db").display());
    let files = |listen: String| {
        let args = ["--listen", &listen, "--database-url", &archive, "--live-store", &live, "--engine-workers", "1"];
        args.map(str::to_owned)
    };
    let first = files("127.0.0.1:0".to_owned());
    let up = Proc::up_args("up-kill", &first.iter().map(String::as_str).collect::<Vec<_>>());
    let port = up.http.port();

    let mut alice = Client::join("alice", up.http, None).await;
    let mut bob = Client::join("bob", up.http, None).await;
    alice
        .send(json!({ "t": "create", "variant": "atomic", "color": "white", "clock": { "initial_ms": 300_000, "increment_ms": 0 }, "opponent": "human" }))
        .await;
    let created = alice.expect("created").await;
    let game = created["game"].as_str().unwrap().to_owned();
    bob.send(json!({ "t": "join", "code": created["code"] })).await;
    bob.expect("joined").await;
    for (ply, uci) in ["e2e4", "e7e5", "g1f3"].into_iter().enumerate() {
        let mover = if ply % 2 == 0 { &mut alice } else { &mut bob };
        mover.send(json!({ "t": "move", "game": game, "uci": uci, "ply": ply })).await;
        mover.expect_move(ply).await;
    }
    let (alice_token, bob_token) = (alice.token.clone(), bob.token.clone());
    drop((alice, bob));

    up.kill();
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let again = files(format!("127.0.0.1:{port}"));
    let up = Proc::up_args("up-kill-again", &again.iter().map(String::as_str).collect::<Vec<_>>());

    let mut alice = Client::join("alice", up.http, Some(&alice_token)).await;
    let mut bob = Client::join("bob", up.http, Some(&bob_token)).await;
    for player in [&mut alice, &mut bob] {
        player.send(json!({ "t": "watch", "game": game })).await;
        let state = player.expect("state").await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3), "every acknowledged move is kept: {state}");
        let black_ms = state["clock"]["black_ms"].as_u64().unwrap();
        assert!(black_ms <= 300_000 - 1_500, "black's clock ran while the process was down: {state}");
        assert_eq!(state["clock"]["running"], "black", "{state}");
    }
    bob.send(json!({ "t": "move", "game": game, "uci": "b8c6", "ply": 3 })).await;
    let reply = alice.expect_move(3).await;
    assert_eq!(reply["uci"], "b8c6", "the game plays on: {reply}");
    up.terminate();
    assert!(up.wait_exit(std::time::Duration::from_secs(15)).is_some_and(|s| s.success()), "{}", up.logs());
    let _ = std::fs::remove_dir_all(&dir);
}
