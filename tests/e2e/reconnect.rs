//! Reconnects across real gateway processes. A client that drops its
//! socket and comes back on another gateway with its token and `resume`
//! must receive exactly the events it missed: the same frames a socket that
//! stayed saw, in contiguous versions, none twice. A gateway killed with
//! SIGKILL mid-game, with a move in flight, must cost nothing: the players
//! reconnect to a surviving gateway, resume, resend what was unanswered,
//! and finish the game with every acknowledged move in its record. A game
//! shard killed the same way costs the players nothing either: the
//! gateways find the game's new owner while the players stay connected.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::{api_game, find_line, move_frame, play, shared_cluster, start_game, strings, t, Client};
use fogblast_rules::{Variant, WinReason};
use serde_json::{json, Value};

/// The frames of `game` in `log` with a version above `after`.
fn after(log: &[Value], game: &str, after: u64) -> Vec<Value> {
    log.iter().filter(|f| f["game"] == game && f["v"].as_u64().is_some_and(|v| v > after)).cloned().collect()
}

fn versions(frames: &[Value]) -> Vec<u64> {
    frames.iter().map(|f| f["v"].as_u64().unwrap()).collect()
}

/// Each ply's `move` frames across `logs`, which must hold one per ply.
fn plies_once(name: &str, logs: &[&[Value]], game: &str, plies: usize) {
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    for frame in logs.iter().flat_map(|l| l.iter()).filter(|f| t(f) == "move" && f["game"] == game) {
        *seen.entry(frame["ply"].as_u64().unwrap()).or_default() += 1;
    }
    let expected: BTreeMap<u64, usize> = (0..plies as u64).map(|p| (p, 1)).collect();
    assert_eq!(seen, expected, "{name}: every ply's move frame exactly once");
}

#[tokio::test]
async fn resume_on_another_gateway_gets_exactly_the_missed_events() {
    let cluster = shared_cluster("reconnect");
    let (gw0, gw1) = (cluster.gateway(0), cluster.gateway(1));

    // Part one: a tab drops while its player keeps playing from another tab.
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 16, 60);
    let mut white = Client::join("white", gw0, None).await;
    let mut black = Client::join("black", gw1, None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    let mut tab = Client::join("white-tab", gw0, Some(&white.token)).await;
    assert_eq!(tab.player, white.player, "the token names the same player");
    tab.send(json!({ "t": "watch", "game": game })).await;
    assert_eq!(tab.expect("state").await["you"], "white");
    play(&mut white, &mut black, &game, &line.moves, 0, 4).await;
    tab.expect_move(3).await;
    let seen = tab.last_v();
    let tab_log = tab.log.clone();
    tab.close().await;

    play(&mut white, &mut black, &game, &line.moves, 4, 10).await;
    let missed = after(&white.log, &game, seen);
    assert!(missed.len() >= 6, "six moves at least were missed: {missed:?}");

    let mut back = Client::join("white-tab-back", gw1, Some(&white.token)).await;
    assert_eq!(back.player, white.player);
    back.send(json!({ "t": "resume", "game": game, "v": seen })).await;
    back.expect_move(9).await;
    back.drain(Duration::from_millis(300)).await;
    let replayed = after(&back.log, &game, 0);
    assert!(back.log.iter().all(|f| t(f) != "state"), "events, not a whole state: {:?}", back.log);
    assert_eq!(replayed, missed, "the resumed tab gets exactly what the staying tab got");
    let v = versions(&replayed);
    assert_eq!(v, (seen + 1..=seen + v.len() as u64).collect::<Vec<_>>(), "contiguous versions after {seen}");

    // The resumed tab plays on, from the other gateway, to the end.
    play(&mut back, &mut black, &game, &line.moves, 10, line.moves.len()).await;
    for client in [&mut white, &mut back, &mut black] {
        let end = client.expect("end").await;
        assert_eq!((end["reason"].as_str(), strings(&end["moves"])), (Some("explosion"), line.moves.clone()));
    }
    plies_once("white", &[&white.log], &game, line.moves.len());
    plies_once("black", &[&black.log], &game, line.moves.len());
    plies_once("white's tab, before and after", &[&tab_log, &back.log], &game, line.moves.len());
    let tab_versions = versions(&after(&[tab_log, back.log.clone()].concat(), &game, 0));
    assert!(tab_versions.windows(2).all(|w| w[0] < w[1]), "none repeated: {tab_versions:?}");

    // Part two: a player's only socket drops. Its opponent hears it is
    // gone, moves, and hears it is back after it resumes elsewhere.
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 10, 60);
    let mut white = Client::join("white-2", gw0, None).await;
    let mut black = Client::join("black-2", gw0, None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 4).await;
    let seen = black.last_v();
    let black_log = black.log.clone();
    let token = black.token.clone();
    black.close().await;
    let gone = white.expect("opponent_gone").await;
    assert!(gone["claim_in_ms"].as_u64().is_some_and(|ms| ms > 0), "{gone}");
    white.send(move_frame(&game, &line.moves[4], 4)).await;
    white.expect_move(4).await;

    let mut black = Client::join("black-2-back", gw1, Some(&token)).await;
    black.send(json!({ "t": "resume", "game": game, "v": seen })).await;
    let moved = black.expect_move(4).await;
    white.expect("opponent_back").await;
    let replayed = after(&black.drain(Duration::from_millis(300)).await, &game, 0);
    assert!(replayed.is_empty(), "nothing after the missed move: {replayed:?}");
    assert_eq!(after(&black.log, &game, 0), vec![moved.clone()], "exactly the one event black may see");
    let white_since = after(&white.log, &game, seen);
    let kinds: Vec<&str> = white_since.iter().map(t).collect();
    assert_eq!(kinds, ["opponent_gone", "move", "opponent_back"], "{white_since:?}");
    assert_eq!(versions(&white_since), [seen + 1, seen + 2, seen + 3], "{white_since:?}");
    assert_eq!(moved["v"], seen + 2);
    // The same move for both seats; only black, to move next, is sent its legal moves.
    assert!(moved["legal"].as_array().is_some_and(|legal| !legal.is_empty()), "{moved}");
    assert!(white_since[1].get("legal").is_none(), "{}", white_since[1]);
    let mut without_legal = moved.clone();
    without_legal.as_object_mut().expect("an object").remove("legal");
    assert_eq!(without_legal, white_since[1], "the same move frame for both seats");

    play(&mut white, &mut black, &game, &line.moves, 5, line.moves.len()).await;
    for client in [&mut white, &mut black] {
        assert_eq!(strings(&client.expect("end").await["moves"]), line.moves);
    }
    plies_once("black, before and after", &[&black_log, &black.log], &game, line.moves.len());
}

/// A player back after its gateway died: connects to `gateway` with its
/// token, resumes from the last version it saw, and, if it is the mover,
/// resends its move of `ply` unless it saw it acknowledged.
async fn come_back(
    old: &Client,
    gateway: std::net::SocketAddr,
    game: &str,
    ply: usize,
    uci: &str,
    mover: bool,
) -> Client {
    let mut back = Client::join(&format!("{}-back", old.name), gateway, Some(&old.token)).await;
    assert_eq!(back.player, old.player, "the token names the same player");
    back.send(json!({ "t": "resume", "game": game, "v": old.last_v() })).await;
    if mover && !old.moves().iter().any(|f| f["ply"] == ply) {
        back.send(move_frame(game, uci, ply)).await;
    }
    back
}

/// Waits until the player, before or after its reconnect, has seen `ply`:
/// its `move` frame, or a `state` (the answer to a `resume` may be either)
/// whose move list holds it.
async fn caught_up(old: &Client, back: &mut Client, ply: usize) {
    if !old.moves().iter().any(|f| f["ply"] == ply) {
        back.expect_where(&format!("ply {ply}"), |f| {
            (t(f) == "move" && f["ply"] == ply) || (t(f) == "state" && f["moves"].as_array().unwrap().len() > ply)
        })
        .await;
    }
}

/// The game as a client following `frames` knows it: a `state` gives the
/// whole move list, each `move` must add the next ply (no gap, none twice),
/// and versions only rise. Returns the moves (`None` where hidden).
fn view(name: &str, frames: &[Value], game: &str) -> Vec<Option<String>> {
    let mut moves: Vec<Option<String>> = Vec::new();
    let mut version = 0;
    for frame in frames.iter().filter(|f| f["game"] == game) {
        let Some(v) = frame["v"].as_u64() else { continue };
        match t(frame) {
            "state" => {
                assert!(v >= version, "{name}: a state older than what it had: {frame}");
                moves = frame["moves"].as_array().unwrap().iter().map(|m| m.as_str().map(str::to_owned)).collect();
            }
            "move" => {
                assert!(v > version, "{name}: an event twice or out of order (had v {version}): {frame}");
                assert_eq!(frame["ply"], moves.len(), "{name}: a gap or a repeat: {frame}");
                moves.push(frame["uci"].as_str().map(str::to_owned));
            }
            _ => assert!(v > version, "{name}: an event twice or out of order (had v {version}): {frame}"),
        }
        version = v;
    }
    moves
}

#[tokio::test]
async fn a_gateway_killed_mid_game_loses_no_move() {
    let cluster = shared_cluster("reconnect");
    let line = find_line(Variant::Fog, WinReason::KingCaptured, 16, 80);
    let doomed = cluster.spawn_gateway("doomed-gateway");
    let mut white = Client::join("white", doomed.http, None).await;
    let mut black = Client::join("black", doomed.http, None).await;
    let game = start_game(&mut white, &mut black, "fog").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 6).await;

    // White's move is played, but its acknowledgement is lost with the
    // gateway: white forgets whatever arrived after it sent the move.
    let known = white.log.len();
    white.send(move_frame(&game, &line.moves[6], 6)).await;
    let applied = std::time::Instant::now();
    while api_game(cluster.gateway(0), &game).await.1["moves"].as_array().map(Vec::len) != Some(7) {
        assert!(applied.elapsed() < Duration::from_secs(5), "the move was not played");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    doomed.kill();
    for client in [&mut white, &mut black] {
        let closed = client.wait_closed(Duration::from_secs(5)).await;
        assert_eq!(closed.code(), None, "{}: a killed gateway sends no close frame: {closed:?}", client.name);
    }
    white.log.truncate(known);
    let doomed_too = cluster.spawn_gateway("doomed-gateway-2");
    let mut white2 = come_back(&white, doomed_too.http, &game, 6, &line.moves[6], true).await;
    let mut black2 = come_back(&black, doomed_too.http, &game, 6, &line.moves[6], false).await;
    caught_up(&white, &mut white2, 6).await;
    caught_up(&black, &mut black2, 6).await;
    play(&mut white2, &mut black2, &game, &line.moves, 7, 11).await;

    // Black's move is on its way when this gateway dies too: played or not,
    // resending it after the reconnect settles it once.
    black2.send(move_frame(&game, &line.moves[11], 11)).await;
    doomed_too.kill();
    for client in [&mut white2, &mut black2] {
        assert_eq!(client.wait_closed(Duration::from_secs(5)).await.code(), None);
    }
    let mut white3 = come_back(&white2, cluster.gateway(0), &game, 11, &line.moves[11], false).await;
    let mut black3 = come_back(&black2, cluster.gateway(1), &game, 11, &line.moves[11], true).await;
    caught_up(&white2, &mut white3, 11).await;
    caught_up(&black2, &mut black3, 11).await;
    play(&mut white3, &mut black3, &game, &line.moves, 12, line.moves.len()).await;

    for client in [&mut white3, &mut black3] {
        let end = client.expect("end").await;
        assert_eq!(end["reason"], "king_captured", "{end}");
        assert_eq!(strings(&end["moves"]), line.moves, "{end}");
    }
    // Each player's view, across its three connections, holds every move
    // once, and its own moves as it played them.
    let logs = |a: &Client, b: &Client, c: &Client| [a.log.clone(), b.log.clone(), c.log.clone()].concat();
    let (white_log, black_log) = (logs(&white, &white2, &white3), logs(&black, &black2, &black3));
    let mut acknowledged: Vec<Option<String>> = vec![None; line.moves.len()];
    for (name, log, first) in [("white", &white_log, 0), ("black", &black_log, 1)] {
        assert!(log.iter().all(|f| t(f) != "error"), "{name}: no command was refused: {log:?}");
        let seen = view(name, log, &game);
        assert_eq!(seen.len(), line.moves.len(), "{name}: every move");
        for ply in (first..line.moves.len()).step_by(2) {
            assert_eq!(seen[ply].as_deref(), Some(line.moves[ply].as_str()), "{name}: its move of ply {ply}");
            acknowledged[ply] = seen[ply].clone();
        }
    }
    // The record holds exactly the moves the movers saw acknowledged.
    let (status, state) = api_game(cluster.gateway(0), &game).await;
    assert_eq!((status, state["status"].as_str()), (200, Some("ended")), "{state}");
    assert_eq!(strings(&state["moves"]), acknowledged.into_iter().flatten().collect::<Vec<_>>());
    assert_eq!(strings(&state["moves"]), line.moves, "the final state's move list");
    assert!(!doomed.is_running() && !doomed_too.is_running());
    cluster.assert_healthy();
}

/// The value of an unlabelled metric on a process's `/metrics`.
fn metric(proc: &crate::support::Proc, name: &str) -> f64 {
    let (_, body) = crate::support::http_get(proc.metrics.unwrap_or(proc.http), "/metrics").expect("metrics answer");
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {body}"))
}

#[tokio::test]
async fn a_game_shard_killed_mid_game_fails_over_under_the_players() {
    let cluster = crate::support::Cluster::start("failover", 2, 2);
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 12, 60);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 4).await;

    // The owner is the shard the gateways' feeds watch the game on.
    let owner = cluster.shards.iter().position(|s| metric(s, "fogblast_game_watch_streams") > 0.0).expect("an owner");
    cluster.shards[owner].kill();
    // The players stay where they are: the gateways find the new owner.
    play(&mut white, &mut black, &game, &line.moves, 4, line.moves.len()).await;
    for client in [&mut white, &mut black] {
        let end = client.expect("end").await;
        assert_eq!(strings(&end["moves"]), line.moves, "{end}");
        assert!(client.log.iter().all(|f| t(f) != "error"), "{}: {:?}", client.name, client.log);
        plies_once(&client.name, &[&client.log], &game, line.moves.len());
        let v = versions(&after(&client.log, &game, 0));
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{}: no event twice: {v:?}", client.name);
    }
    assert!(!cluster.shards[owner].is_running());
    cluster.shards[1 - owner].assert_healthy();
    for gateway in &cluster.gateways {
        gateway.assert_healthy();
    }
}
