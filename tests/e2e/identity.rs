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
    api_game, find_line, move_frame, pieces, play, shared_cluster, start_game, start_game_with_clock, strings, t,
    Client, DRAIN_MS, WAIT,
};
use fogblast_client::tungstenite::Message;
use fogblast_client::{Connection, Http};
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
    assert!(first.token.starts_with("v2.") && first.token.contains(&format!(".{}.", first.player)), "{welcome}");
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
        format!("v3{}", &token[2..]),
        format!("v1.{}.{signature}", first.player),
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
    // Every frame costs a credit, the library's own pong to the gateway's
    // first ping (sent at connect) too: hello, that pong and 98 pings.
    assert!(pongs >= 98, "the first 100 frames (hello, a pong and 98 pings) are all answered, got {pongs}");
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

/// Binary frames and pings cost credits like text: a client that sends
/// nothing but binary frames gets one refusal per credit it lacks, then is
/// closed for flooding, instead of an error frame for each.
#[tokio::test]
async fn binary_and_control_frames_are_charged_like_text() {
    let cluster = shared_cluster("identity");
    for (kind, message) in [
        ("binary", Message::Binary(vec![1u8, 2, 3].into())),
        ("ping", Message::Ping(vec![7u8; 8].into())),
        ("pong", Message::Pong(vec![7u8; 8].into())),
    ] {
        let mut client = Client::join(kind, cluster.gateway(0), None).await;
        let mut sent = 0;
        while sent < 2_000 && client.send_message(message.clone()).await {
            sent += 1;
        }
        // Closed: with 1008, or reset when the gateway closed with the rest
        // of the flood unread.
        let closed = client.wait_closed(Duration::from_secs(5)).await;
        if closed.code().is_some() {
            assert_eq!(closed.code(), Some(1008), "{kind} frames: {closed:?} after {sent}");
        }
        let errors = client.log.iter().filter(|f| t(f) == "error").count();
        assert!(errors <= 300, "{kind} frames were answered with {errors} error frames");
    }
    cluster.assert_healthy();
}

/// Lag compensation is measured by the gateway alone: a player who sends
/// a pong of its own before each move (its payload the gateway's clock of
/// two seconds ago, as the gateway's pings once carried) and one of random
/// bytes is charged its whole thinking time, as an honest player is.
#[tokio::test]
async fn forged_pongs_buy_no_time() {
    let cluster = shared_cluster("identity");
    let mut white = Client::join("pong-forger", cluster.gateway(0), None).await;
    let mut black = Client::join("pong-honest", cluster.gateway(1), None).await;
    let game = start_game_with_clock(&mut white, &mut black, "standard", Some((60_000, 0))).await;
    let line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "c2c3", "d7d6", "b1d2"];
    let think = Duration::from_millis(600);
    let mut white_ms = Vec::new();
    for (ply, uci) in line.iter().enumerate() {
        let (mover, other) = if ply % 2 == 0 { (&mut white, &mut black) } else { (&mut black, &mut white) };
        if ply % 2 == 0 {
            let two_seconds_ago =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64 - 2_000;
            assert!(mover.send_message(Message::Pong(two_seconds_ago.to_be_bytes().to_vec().into())).await);
            assert!(mover.send_message(Message::Pong(rand::random::<[u8; 8]>().to_vec().into())).await);
            tokio::time::sleep(think).await;
        }
        mover.send(move_frame(&game, uci, ply)).await;
        let ack = mover.expect_move(ply).await;
        other.expect_move(ply).await;
        if ply % 2 == 0 {
            white_ms.push(ack["clock"]["white_ms"].as_u64().expect("a clocked move"));
        }
    }
    let charged: Vec<u64> = white_ms.windows(2).map(|w| w[0] - w[1]).collect();
    assert_eq!(charged.len(), 5);
    for spent in &charged {
        assert!(*spent >= think.as_millis() as u64 - 10, "charged {spent} ms for {think:?} of thought: {charged:?}");
    }
}

/// Behind a proxy the operator named, the client is the address that proxy
/// saw (the right of `X-Forwarded-For`, not what the client wrote at its
/// left), and every address of one IPv6 /64 counts as one. The HTTP API
/// has a per-address budget too, answered 429 with `Retry-After`.
#[tokio::test]
async fn per_address_limits_hold_behind_a_proxy_and_across_a_slash_64() {
    let cluster = shared_cluster("identity");
    let gateway = cluster.spawn_gateway_with(
        "gateway-behind-proxy",
        &[
            "--trusted-proxies",
            "127.0.0.1",
            "--max-connections-per-ip",
            "4",
            "--http-requests-per-ip-minute",
            "20",
            "--web-pages-per-ip-minute",
            "3",
            "--web-requests-per-ip-minute",
            "4",
        ],
    );
    let url = format!("ws://{}/ws", gateway.http);
    let connect = |forwarded_for: String| {
        let url = url.clone();
        async move {
            let headers = [("x-forwarded-for", forwarded_for.as_str())];
            Connection::connect_with_headers(&url, Default::default(), &headers).await
        }
    };
    let mut held = Vec::new();
    for i in 1..=4 {
        held.push(connect(format!("2001:db8:1:2::{i:x}")).await.expect("within the limit"));
    }
    for forwarded_for in ["2001:db8:1:2:ffff::1", "2001:db8:7::1, 2001:db8:1:2::99"] {
        let refused = connect(forwarded_for.to_owned()).await.expect_err("the /64 is full");
        assert!(refused.to_string().contains("429"), "{forwarded_for}: {refused}");
    }
    held.push(connect("2001:db8:1:3::1".into()).await.expect("another /64"));
    held.push(connect("2001:db8:1:2::1, 203.0.113.5".into()).await.expect("the proxy saw another client"));

    let http = Http::for_addr(gateway.http);
    let mut answers = Vec::new();
    for _ in 0..25 {
        answers.push(http.game("aaaaaaaaaaaa").await.expect("the gateway answers"));
    }
    let limited: Vec<_> = answers.iter().filter(|a| a.status == 429).collect();
    // One more may have come back to the bucket (a third of a token a
    // second) while the requests ran.
    assert!((4..=5).contains(&limited.len()), "{:?}", answers.iter().map(|a| a.status).collect::<Vec<_>>());
    assert!(answers[..20].iter().all(|a| a.status != 429), "the budget comes first");
    for answer in limited {
        assert!(answer.retry_after.is_some_and(|s| (1..=3).contains(&s)), "{answer:?}");
        let body: Value = answer.json().expect("an error body");
        assert_eq!(body["code"], "rate_limited", "{body}");
    }
    // The web client's page and its files have buckets of their own, apart
    // from the API's, which is spent by now.
    let mut statuses = Vec::new();
    for path in ["/", "/assets/app.js", "/g/2Y3FFY65", "/assets/app.css", "/", "/g/2Y3FFY65", "/"] {
        let answer = http.get(path).await.expect("the gateway answers");
        assert!(answer.status != 429 || answer.retry_after.is_some(), "{path}: a 429 says when to come back");
        statuses.push((path, answer.status));
    }
    assert_eq!(
        statuses.iter().map(|(_, status)| *status).collect::<Vec<_>>(),
        [200, 200, 200, 200, 200, 429, 429],
        "three page loads a minute: {statuses:?}"
    );
    let mut statuses = Vec::new();
    for path in ["/sw.js", "/assets/app.js", "/assets/app.css"] {
        statuses.push(http.get(path).await.expect("the gateway answers").status);
    }
    assert_eq!(statuses, [200, 200, 429], "four file requests a minute, the pages apart");
    drop(held);
}

/// A classroom behind one address (a school's NAT): with the default
/// budgets, twenty first visits in a minute are all served. A first visit
/// asks for the page, the service worker, every file the page has, and
/// then the page and every file again for the service worker's offline
/// copy.
#[tokio::test]
async fn a_classroom_behind_one_address_loads_the_page_with_the_default_budgets() {
    let cluster = shared_cluster("identity");
    let gateway = cluster.spawn_gateway_with("gateway-classroom", &[]);
    let http = Http::for_addr(gateway.http);
    let worker = http.get("/sw.js").await.expect("the gateway answers");
    assert_eq!(worker.status, 200);
    let worker = worker.text();
    let list = worker
        .lines()
        .find_map(|line| line.trim().strip_prefix("const ASSETS = "))
        .expect("the service worker names the page's files");
    let files: Vec<String> = serde_json::from_str(list.trim_end_matches(';')).expect("a list of paths");
    assert!(files.len() > 20, "the page has its files: {files:?}");
    let mut refused = Vec::new();
    for load in 0..20 {
        let page = if load % 2 == 0 { "/" } else { "/g/2Y3FFY65" };
        let mut paths = vec![page.to_owned(), "/sw.js".to_owned()];
        paths.extend(files.iter().cloned());
        paths.push("/".to_owned());
        paths.extend(files.iter().cloned());
        for path in paths {
            let answer = http.get(&path).await.expect("the gateway answers");
            if answer.status != 200 {
                refused.push((load, path, answer.status));
            }
        }
    }
    assert!(
        refused.is_empty(),
        "{} of the classroom's requests refused: {:?}",
        refused.len(),
        &refused[..refused.len().min(5)]
    );
}

/// Player ids are public, so a gateway signing with a published or short
/// secret would let anyone make any player's token: it will not start.
#[test]
fn a_gateway_refuses_a_published_or_short_token_secret() {
    for secret in ["compose-demo-secret-change-me", "short-secret"] {
        let output = std::process::Command::new(crate::support::BIN)
            .args(["gateway", "--gateway-listen", "127.0.0.1:0", "--token-secret", secret])
            .env_remove("FOGBLAST_TOKEN_SECRET")
            .output()
            .expect("fogblast runs");
        assert!(!output.status.success(), "{secret}: the gateway started");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("refusing to start") && stderr.contains("token secret"), "{secret}: {stderr}");
    }
}

/// A few addresses must not take the whole engine pool: an address holds
/// seats in only so many live games against the computer at once (here
/// two), from any of its sockets; a finished game frees its place.
#[tokio::test]
async fn an_address_plays_only_so_many_games_against_the_computer_at_once() {
    let cluster = shared_cluster("identity");
    let gateway = cluster.spawn_gateway_with("gateway-computer-cap", &["--computer-games-per-ip", "2"]);
    let create = |id: &str| json!({ "t": "create", "variant": "atomic", "color": "white", "opponent": "computer", "level": "easy", "id": id });
    let mut player = Client::join("computer-fan", gateway.http, None).await;
    let mut games = Vec::new();
    for id in ["first", "second"] {
        player.send(create(id)).await;
        games.push(player.expect("created").await["game"].as_str().expect("a game").to_owned());
    }
    player.send(create("third")).await;
    let refused = player.expect_error_for("third").await;
    assert_eq!(refused["code"], "rate_limited", "{refused}");
    let mut other_tab = Client::join("computer-fan-too", gateway.http, None).await;
    other_tab.send(create("elsewhere")).await;
    assert_eq!(other_tab.expect_error_for("elsewhere").await["code"], "rate_limited");

    player.send(json!({ "t": "resign", "game": games[0] })).await;
    player.expect_where("the end of the first game", |f| t(f) == "end" && f["game"] == games[0].as_str()).await;
    player.send(create("after")).await;
    player.expect("created").await;
}

/// The token secret is replaced without logging anyone out: a gateway with
/// the new secret and the old one as previous accepts a player's old token
/// and hands back one of the new secret, which only gateways holding the
/// new secret accept.
#[tokio::test]
async fn a_rotated_secret_renews_old_tokens() {
    let cluster = shared_cluster("identity");
    let mut before = Client::join("before-rotation", cluster.gateway(0), None).await;
    let old_token = before.token.clone();
    let new_secret = format!("rotated-{:032x}", rand::random::<u128>());
    let rotated = cluster.spawn_gateway_with(
        "gateway-rotated",
        &["--token-secret", &new_secret, "--token-previous-secrets", &cluster.secret],
    );
    let mut after = Client::connect("after-rotation", rotated.http).await;
    let welcome = after.hello(Some(&old_token)).await;
    assert_eq!(welcome["player"].as_str(), Some(before.player.as_str()), "the same player");
    let renewed = welcome["token"].as_str().expect("a token").to_owned();
    assert_ne!(renewed, old_token, "renewed under the new secret");
    let mut again = Client::connect("renewed-token", rotated.http).await;
    let welcome = again.hello(Some(&renewed)).await;
    assert_eq!(
        (welcome["player"].as_str(), welcome["token"].as_str()),
        (Some(before.player.as_str()), Some(renewed.as_str()))
    );
    let mut old_gateway = Client::connect("old-gateway", cluster.gateway(1)).await;
    old_gateway.send(json!({ "t": "hello", "token": renewed, "id": "renewed" })).await;
    assert_eq!(
        old_gateway.expect_error_for("renewed").await["code"],
        "unauthorized",
        "the old secret alone does not sign it"
    );
    before.send(json!({ "t": "ping", "id": "still" })).await;
    before.expect("pong").await;
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
