//! Presence by lease, with gateways killed outright (kill -9: no socket is
//! closed cleanly, no "gone" is ever sent). The gateways renew their seated
//! players' presence on a short lease here, and the shard's claim and
//! abandon times are short, so the rules of docs/game-service.md play out
//! in seconds: the opponent of a player whose gateway died hears
//! `opponent_gone` once the lease lapses and may claim victory after the
//! announced time; an untimed game whose two gateways both died ends as
//! `abandoned`.

use std::time::{Duration, Instant};

use fogblast_rules::{Variant, WinReason};
use serde_json::json;

use crate::support::{api_game, find_line, play, start_game, t, Client, Cluster};

const LEASE: Duration = Duration::from_millis(1_500);
const CLAIM_AFTER: Duration = Duration::from_millis(2_000);
const ABANDON: Duration = Duration::from_millis(3_000);

fn cluster(test: &str, gateways: usize) -> Cluster {
    let (lease, claim, abandon) =
        (LEASE.as_millis().to_string(), CLAIM_AFTER.as_millis().to_string(), ABANDON.as_millis().to_string());
    let env = [
        ("FOGBLAST_GATEWAY_PRESENCE_LEASE_MS", lease.as_str()),
        ("FOGBLAST_GAME_CLAIM_AFTER_MS", claim.as_str()),
        ("FOGBLAST_GAME_ABANDON_MS", abandon.as_str()),
    ];
    Cluster::start_with_env(test, &env, 0, 1, gateways)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_opponent_of_a_player_whose_gateway_died_can_claim_victory() {
    let cluster = cluster("presence-claim", 2);
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 8, 60);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 2).await;
    // Renewals keep a player who stays present past several leases.
    let quiet = white.find(LEASE * 3, |f| t(f) == "opponent_gone").await;
    assert_eq!(quiet, None, "black is still here");

    cluster.gateways[1].kill();
    let killed = Instant::now();
    let gone = white
        .find(LEASE * 2 + Duration::from_secs(1), |f| t(f) == "opponent_gone")
        .await
        .expect("black's lease lapses and white hears it");
    let heard = killed.elapsed();
    let claim_in = Duration::from_millis(gone["claim_in_ms"].as_u64().expect("claim_in_ms"));
    assert!(claim_in <= CLAIM_AFTER, "{gone}");
    println!("opponent_gone {heard:?} after the kill -9 (lease {LEASE:?}), claim in {claim_in:?}");
    white.send(json!({ "t": "claim_victory", "game": game, "id": "early" })).await;
    assert_eq!(white.expect_error_for("early").await["code"], "conflict", "too early to claim");

    tokio::time::sleep(claim_in).await;
    white.send(json!({ "t": "claim_victory", "game": game, "id": "claim" })).await;
    let end = white.expect("end").await;
    assert_eq!((end["result"].as_str(), end["reason"].as_str()), (Some("1-0"), Some("abandoned")), "{end}");
    println!("claimed {:?} after the kill -9", killed.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untimed_game_whose_two_gateways_died_ends_as_abandoned() {
    let mut cluster = cluster("presence-abandon", 2);
    let line = find_line(Variant::Standard, WinReason::Checkmate, 8, 60);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "standard").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 2).await;

    cluster.gateways[0].kill();
    cluster.gateways[1].kill();
    let killed = Instant::now();
    let observer = cluster.spawn_gateway("observer");
    let bound = LEASE + ABANDON + Duration::from_secs(3);
    let ended = loop {
        let (code, state) = api_game(observer.http, &game).await;
        assert_eq!(code, 200, "{state}");
        if state["status"] == "ended" {
            break state;
        }
        assert!(killed.elapsed() < bound, "not ended {bound:?} after both gateways died: {state}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let took = killed.elapsed();
    assert_eq!(ended["reason"], "abandoned", "{ended}");
    assert!(took >= ABANDON, "ended after {took:?}, before the abandon time");
    println!("abandoned {took:?} after both gateways died (lease {LEASE:?} + abandon {ABANDON:?})");
    cluster.gateways.push(observer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_who_moves_by_http_requests_stays_present_until_they_stop() {
    let cluster = cluster("presence-requests", 1);
    let gateway = cluster.gateway(0);
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 30, 120);
    // Black's token works on the socket and over the Bot API alike.
    let token = crate::hostile::bot_token(gateway).await;
    let mut white = Client::join("white", gateway, None).await;
    let mut black = Client::join("black", gateway, Some(&token)).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    // Black closes its socket and plays on by HTTP requests alone.
    drop(black);
    white.find(LEASE * 2, |f| t(f) == "opponent_gone").await.expect("black's socket closed");
    let mut ply = 0;
    let started = Instant::now();
    while started.elapsed() < (LEASE + CLAIM_AFTER) * 2 {
        let uci = &line.moves[ply];
        if ply % 2 == 0 {
            white.send(json!({ "t": "move", "game": game, "uci": uci, "ply": ply })).await;
        } else {
            let path = format!("/api/board/game/{game}/move/{uci}");
            let (status, _) = crate::hostile::request(gateway, "POST", &path, Some(&token), "").await;
            assert_eq!(status, 200, "black's move {ply} by HTTP");
        }
        white.expect_where("the move", |f| t(f) == "move" && f["ply"] == ply).await;
        ply += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    white.send(json!({ "t": "claim_victory", "game": game, "id": "while-moving" })).await;
    let refused = white.expect_error_for("while-moving").await;
    assert_eq!(refused["code"], "conflict", "black moves by requests, so it is here: {refused}");
    // Black stops: the lease of its last request lapses (a report still on
    // its way may renew it once), and then the claim comes due.
    white.find(LEASE * 3, |f| t(f) == "opponent_gone").await.expect("black's lease lapses");
    let deadline = Instant::now() + Duration::from_secs(60);
    for attempt in 0.. {
        let id = format!("claim-{attempt}");
        white.send(json!({ "t": "claim_victory", "game": game, "id": id })).await;
        let answer = white
            .expect_where("the claim's answer", |f| t(f) == "end" || (t(f) == "error" && f["id"] == id.as_str()))
            .await;
        if t(&answer) == "end" {
            assert_eq!(answer["reason"], "abandoned", "{answer}");
            break;
        }
        assert_eq!(answer["code"], "conflict", "{answer}");
        assert!(Instant::now() < deadline, "black stopped a minute ago and the claim is still refused: {answer}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
