//! Who may do what, and the limits, on real gateway processes: a `hello`
//! without a token makes a player and hands out its token, which every
//! gateway of the cluster honours and no forgery passes; only a seat's
//! player moves for it, from any of its tabs, all of which hear the game;
//! a flooding connection is refused, then closed with 1008; the HTTP view
//! of a fog game in progress shows nothing; SIGTERM sends every client a
//! `reconnect` and a 1012 close, and the gateway exits within its drain
//! time; and a player whose last socket closes, and only then, is reported
//! to its opponent, wherever its tabs are.

use std::time::{Duration, Instant};

use crate::support::{
    api_game, find_line, move_frame, pieces, play, shared_cluster, start_game, strings, t, Client, DRAIN_MS, WAIT,
};
use fogblast_rules::{Variant, WinReason};
use serde_json::{json, Value};

#[tokio::test]
async fn tokens_name_players_and_forgeries_are_refused() {
    let cluster = shared_cluster("identity");
    let mut first = Client::connect("first", cluster.gateway(0)).await;
    // Nothing but hello and ping before hello.
    first.send(json!({ "t": "watch", "game": "somegame", "id": "early" })).await;
    assert_eq!(first.expect_error_for("early").await["code"], "unauthorized");
    let welcome = first.hello(None).await;
    assert!(!first.player.is_empty(), "{welcome}");
    assert!(first.token.starts_with(&format!("v1.{}.", first.player)), "{welcome}");
    first.send(json!({ "t": "hello", "id": "again" })).await;
    assert_eq!(first.expect_error_for("again").await["code"], "bad_request", "hello only once");

    // The token is the player on every gateway of the cluster.
    let mut elsewhere = Client::connect("elsewhere", cluster.gateway(1)).await;
    let welcome = elsewhere.hello(Some(&first.token.clone())).await;
    assert_eq!(
        (welcome["player"].as_str(), welcome["token"].as_str()),
        (Some(first.player.as_str()), Some(first.token.as_str()))
    );

    let token = first.token.clone();
    let (body, signature) = token.rsplit_once('.').unwrap();
    let flipped: String = signature
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i == 3 {
                if c == 'A' {
                    'B'
                } else {
                    'A'
                }
            } else {
                c
            }
        })
        .collect();
    let forgeries = [
        format!("{body}.{flipped}"),
        token.replacen(&first.player, "aaaaaaaaaaaaaaaa", 1),
        format!("v1.{}.{signature}", "b".repeat(16)),
        format!("v2{}", &token[2..]),
        format!("{token}x"),
        format!("{body}."),
        body.to_owned(),
        "not a token".to_owned(),
        String::new(),
        "x".repeat(3000),
    ];
    let mut forger = Client::connect("forger", cluster.gateway(1)).await;
    for (i, forged) in forgeries.iter().enumerate() {
        let id = format!("forged-{i}");
        forger.send(json!({ "t": "hello", "token": forged, "id": id })).await;
        let error = forger.expect_error_for(&id).await;
        assert_eq!(error["code"], "unauthorized", "{forged:?}: {error}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    assert!(forger.log.iter().all(|f| t(f) != "welcome"), "no forgery is welcomed");
    // Still usable: a new player.
    let welcome = forger.hello(None).await;
    assert_ne!(welcome["player"].as_str(), Some(first.player.as_str()));
}

#[tokio::test]
async fn only_a_seat_moves_and_every_tab_plays() {
    let cluster = shared_cluster("identity");
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 8, 60);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let mut stranger = Client::join("stranger", cluster.gateway(0), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;

    let mut refused = move_frame(&game, &line.moves[0], 0);
    refused["id"] = "stranger".into();
    stranger.send(refused.clone()).await;
    assert_eq!(stranger.expect_error_for("stranger").await["code"], "not_your_game");
    refused["id"] = "black".into();
    black.send(refused).await;
    assert_eq!(black.expect_error_for("black").await["code"], "not_your_turn");

    // White's second tab, on the other gateway.
    let mut tab = Client::join("white-tab", cluster.gateway(1), Some(&white.token.clone())).await;
    assert_eq!(tab.player, white.player);
    tab.send(json!({ "t": "watch", "game": game })).await;
    assert_eq!(tab.expect("state").await["you"], "white");
    // White's moves alternate between its tabs; every tab hears every move.
    for ply in 0..line.moves.len() {
        if ply % 4 == 0 {
            play(&mut tab, &mut black, &game, &line.moves, ply, ply + 1).await;
        } else {
            play(&mut white, &mut black, &game, &line.moves, ply, ply + 1).await;
        }
        let other_tab = if ply % 4 == 0 { &mut white } else { &mut tab };
        other_tab.expect_move(ply).await;
    }
    for client in [&mut white, &mut tab, &mut black] {
        let end = client.expect("end").await;
        assert_eq!(strings(&end["moves"]), line.moves, "{}: {end}", client.name);
        let plies: Vec<u64> = client.moves().iter().map(|f| f["ply"].as_u64().unwrap()).collect();
        assert_eq!(plies, (0..line.moves.len() as u64).collect::<Vec<_>>(), "{}: every move once", client.name);
    }
    assert!(stranger.log.iter().all(|f| t(f) != "move" || f["uci"].is_string()), "a stranger moved nothing");
}

#[tokio::test]
async fn flooding_is_refused_then_closed() {
    let cluster = shared_cluster("identity");
    // In lockstep: every message answered before the next, so the close
    // arrives cleanly once the refusals run out too.
    let mut client = Client::join("flooder", cluster.gateway(0), None).await;
    let (mut pongs, mut limited) = (0, 0);
    let started = Instant::now();
    for i in 0..1_000 {
        if !client.send_text(json!({ "t": "ping", "id": i }).to_string()).await {
            break;
        }
        let Some(answer) = client.find(WAIT, |f| f["id"] == i).await else { break };
        match (t(&answer), answer["code"].as_str()) {
            ("pong", _) => {
                assert_eq!(limited, 0, "refused messages are not followed by answered ones this fast: {answer}");
                pongs += 1;
            }
            ("error", Some("rate_limited")) => limited += 1,
            _ => panic!("unexpected answer {answer}"),
        }
    }
    let closed = client.wait_closed(Duration::from_secs(5)).await;
    assert!(started.elapsed() < Duration::from_secs(10), "flooding took {:?}", started.elapsed());
    assert!(pongs >= 99, "the first 100 messages (hello and 99 pings) are all answered, got {pongs}");
    assert!(limited >= 50, "then messages are refused: {limited} rate_limited");
    assert_eq!(closed.code(), Some(1008), "{closed:?}");
    assert!(matches!(&closed, crate::support::Closed::Frame { reason, .. } if !reason.is_empty()), "{closed:?}");

    // A blast in one write, nothing read until the end: closed all the
    // same. The gateway closes its socket with the rest of the blast unread,
    // so the kernel may reset the connection before the client reads the
    // close frame; when it does read it, the code is 1008 after refusals.
    let mut blaster = Client::join("blaster", cluster.gateway(1), None).await;
    assert!(blaster.blast((0..300).map(|i| json!({ "t": "ping", "id": i }).to_string())).await);
    let closed = blaster.wait_closed(Duration::from_secs(5)).await;
    if closed.code().is_some() {
        assert_eq!(closed.code(), Some(1008), "{closed:?}");
        assert!(blaster.log.iter().any(|f| f["code"] == "rate_limited"), "refusals came first");
    }
    cluster.assert_healthy();
}

#[tokio::test]
async fn a_fog_game_in_progress_shows_nothing_over_http() {
    let cluster = shared_cluster("identity");
    let line = find_line(Variant::Fog, WinReason::KingCaptured, 10, 80);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "fog").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 6).await;
    for gateway in [cluster.gateway(0), cluster.gateway(1)] {
        let (status, state) = api_game(gateway, &game).await;
        assert_eq!(status, 200, "{state}");
        assert_eq!((state["status"].as_str(), state["you"].as_str()), (Some("playing"), Some("spectator")));
        assert!(pieces(state["fen"].as_str().unwrap()).is_empty(), "no pieces: {state}");
        assert_eq!(state["moves"], json!([null, null, null, null, null, null]), "no moves: {state}");
        assert!(strings(&state["visible"]).is_empty(), "no squares: {state}");
    }
    let (status, error) = api_game(cluster.gateway(0), "nosuchgame0000").await;
    assert_eq!((status, error["code"].as_str()), (404, Some("not_found")), "{error}");
    let (status, error) = api_game(cluster.gateway(0), "bad%20id").await;
    assert_eq!((status, error["code"].as_str()), (400, Some("bad_request")), "{error}");
}

#[tokio::test]
async fn sigterm_sends_clients_elsewhere_within_the_drain_time() {
    let cluster = shared_cluster("identity");
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 8, 60);
    let draining = cluster.spawn_gateway("draining-gateway");
    let mut white = Client::join("white", draining.http, None).await;
    let mut black = Client::join("black", draining.http, None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 4).await;
    let mut idle = Client::join("idle", draining.http, None).await;
    let mut anonymous = Client::connect("anonymous", draining.http).await;

    let signalled = Instant::now();
    draining.terminate();
    for client in [&mut white, &mut black, &mut idle, &mut anonymous] {
        client.expect("reconnect").await;
        let closed = client.wait_closed(Duration::from_millis(DRAIN_MS)).await;
        assert_eq!(closed.code(), Some(1012), "{}: {closed:?}", client.name);
    }
    let status = draining.wait_exit(Duration::from_millis(DRAIN_MS + 1_000)).expect("the gateway exits");
    let took = signalled.elapsed();
    assert!(status.success(), "{status:?}:\n{}", draining.logs());
    assert!(took < Duration::from_millis(DRAIN_MS), "exited {took:?} after SIGTERM");

    // The players carry on elsewhere.
    let seen = (white.last_v(), black.last_v());
    let mut white = Client::join("white-again", cluster.gateway(0), Some(&white.token.clone())).await;
    let mut black = Client::join("black-again", cluster.gateway(1), Some(&black.token.clone())).await;
    white.send(json!({ "t": "resume", "game": game, "v": seen.0 })).await;
    black.send(json!({ "t": "resume", "game": game, "v": seen.1 })).await;
    white.drain(Duration::from_millis(100)).await;
    black.drain(Duration::from_millis(100)).await;
    play(&mut white, &mut black, &game, &line.moves, 4, line.moves.len()).await;
    assert_eq!(strings(&white.expect("end").await["moves"]), line.moves);
    cluster.assert_healthy();
}

/// Waits until the game says `gone` is gone (or nobody, for `None`) and
/// keeps saying so, and the opponent's last word on it agrees. Presence is
/// reported by every gateway concerned, and may flicker on its way there.
async fn settled(opponent: &mut Client, game: &str, gone: Option<&str>) {
    let wanted = gone.map_or(Value::Null, Value::from);
    let deadline = Instant::now() + WAIT;
    let mut steady = 0;
    while steady < 5 {
        assert!(Instant::now() < deadline, "presence did not settle on {wanted}");
        let (_, state) = api_game(opponent.gateway, game).await;
        steady = if state["gone"] == wanted { steady + 1 } else { 0 };
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    opponent.drain(Duration::from_millis(50)).await;
    let last = opponent.log.iter().rev().map(t).find(|t| ["opponent_gone", "opponent_back"].contains(t));
    let expected = if gone.is_some() { "opponent_gone" } else { "opponent_back" };
    assert_eq!(last, Some(expected), "{}: {:?}", opponent.name, opponent.log);
}

#[tokio::test]
async fn the_opponent_hears_when_a_player_is_gone_and_back() {
    let cluster = shared_cluster("identity");
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 8, 60);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 2).await;

    // Black's second tab closing is not black leaving.
    let mut tab = Client::join("black-tab", cluster.gateway(1), Some(&black.token.clone())).await;
    tab.send(json!({ "t": "watch", "game": game })).await;
    tab.expect("state").await;
    tab.close().await;
    let early = white.find(Duration::from_millis(500), |f| t(f) == "opponent_gone").await;
    assert_eq!(early, None, "a tab closed, but black is still here");

    // Nor is a tab closing on another gateway: that gateway reports black
    // gone, and the one holding black's other socket reports it back.
    let mut far_tab = Client::join("black-far-tab", cluster.gateway(0), Some(&black.token.clone())).await;
    far_tab.send(json!({ "t": "watch", "game": game })).await;
    far_tab.expect("state").await;
    far_tab.close().await;
    white.expect("opponent_gone").await;
    white.expect("opponent_back").await;
    settled(&mut white, &game, None).await;

    // Its last socket closing is.
    let token = black.token.clone();
    let seen = black.last_v();
    black.close().await;
    let gone = white.expect("opponent_gone").await;
    assert_eq!(gone["game"], game.as_str());
    let claim_in = gone["claim_in_ms"].as_u64().expect("claim_in_ms");
    assert!(claim_in > 0 && claim_in <= 30_000, "{gone}");
    // Too early to claim the win.
    white.send(json!({ "t": "claim_victory", "game": game, "id": "claim" })).await;
    assert_eq!(white.expect_error_for("claim").await["code"], "conflict");

    // A tab opened and closed at once leaves black gone, whichever of the
    // gateway's two reports the game hears first.
    let mut blink = Client::join("black-blink", cluster.gateway(0), Some(&token)).await;
    blink.send(json!({ "t": "watch", "game": game })).await;
    blink.expect("state").await;
    blink.close().await;
    settled(&mut white, &game, Some("black")).await;

    let mut black = Client::join("black-again", cluster.gateway(0), Some(&token)).await;
    black.send(json!({ "t": "resume", "game": game, "v": seen })).await;
    white.expect("opponent_back").await;
    play(&mut white, &mut black, &game, &line.moves, 2, line.moves.len()).await;
    let end = black.expect("end").await;
    assert_eq!(strings(&end["moves"]), line.moves);
    let frames: Vec<&Value> = black.log.iter().filter(|f| t(f) == "opponent_gone").collect();
    assert!(frames.is_empty(), "black hears nothing of its own absence: {frames:?}");
}
