//! A hung matchmaker delays only the lobby: with the matchmaker frozen by
//! SIGSTOP (its sockets stay open, so nothing is refused, nothing answers),
//! two players keep moving on the very sockets that asked for the lobby,
//! each move acknowledged within a bound; the lobby requests are answered
//! `unavailable` once the gateway's matchmaker deadline has passed; a socket
//! that asks for more than its commands in flight is refused at once; and
//! after SIGCONT the lobby answers again.

use std::time::{Duration, Instant};

use fogblast_rules::{Variant, WinReason};
use serde_json::json;

use crate::support::{find_line, move_frame, start_game, t, Client, Cluster};

/// The gateway's matchmaker deadline in this test.
const MATCHMAKER_TIMEOUT: Duration = Duration::from_millis(1_500);

/// The longest a move may wait for its acknowledgement.
const MOVE_BOUND: Duration = Duration::from_secs(1);

const MAX_IN_FLIGHT: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_keep_moving_while_the_matchmaker_is_frozen() {
    let cluster = Cluster::start("frozen-matchmaker", 1, 0);
    let matchmaker = cluster.spawn_matchmaker("matchmaker");
    let matchmaker_addr = format!("http://{}", matchmaker.grpc.expect("the matchmaker logs its gRPC address"));
    let timeout = MATCHMAKER_TIMEOUT.as_millis().to_string();
    let in_flight = MAX_IN_FLIGHT.to_string();
    let gateway = cluster.spawn_gateway_with(
        "gateway",
        &["--matchmaker-addr", &matchmaker_addr, "--matchmaker-timeout-ms", &timeout, "--max-in-flight", &in_flight],
    );
    let mut white = Client::join("white", gateway.http, None).await;
    let mut black = Client::join("black", gateway.http, None).await;
    let mut carol = Client::join("carol", gateway.http, None).await;
    let game = start_game(&mut white, &mut black, "standard").await;
    white.send(json!({ "t": "lobby", "id": "before" })).await;
    assert_eq!(white.expect("lobby").await["id"], "before");

    matchmaker.freeze();
    let frozen = Instant::now();
    for client in [&mut white, &mut black] {
        client.send(json!({ "t": "lobby", "id": "frozen" })).await;
    }
    // Past its commands in flight a socket is refused at once, not queued.
    for i in 0..=MAX_IN_FLIGHT {
        carol.send(json!({ "t": "lobby", "id": format!("c{i}") })).await;
    }
    let refused = carol.expect_error_for(&format!("c{MAX_IN_FLIGHT}")).await;
    assert_eq!(refused["code"], "rate_limited", "{refused}");
    assert!(frozen.elapsed() < MATCHMAKER_TIMEOUT / 2, "refused only after {:?}", frozen.elapsed());

    let line = find_line(Variant::Standard, WinReason::Checkmate, 12, 40);
    let mut slowest = Duration::ZERO;
    let mut acked_before_deadline = 0;
    for (ply, uci) in line.moves.iter().enumerate().take(12) {
        let (mover, other) = if ply % 2 == 0 { (&mut white, &mut black) } else { (&mut black, &mut white) };
        let sent = Instant::now();
        mover.send(move_frame(&game, uci, ply)).await;
        let ack = mover.find(MOVE_BOUND, |f| t(f) == "move" && f["ply"] == ply).await.unwrap_or_else(|| {
            panic!("ply {ply} not acknowledged within {MOVE_BOUND:?} while the matchmaker is frozen")
        });
        let took = sent.elapsed();
        assert_eq!(ack["uci"], uci.as_str());
        slowest = slowest.max(took);
        if frozen.elapsed() < MATCHMAKER_TIMEOUT {
            acked_before_deadline += 1;
        }
        other.expect_move(ply).await;
    }
    println!("12 plies with the matchmaker frozen: slowest acknowledgement {slowest:?}");
    assert!(acked_before_deadline > 0, "no move was acknowledged before the lobby's deadline");

    for client in [&mut white, &mut black] {
        let error = client.expect_error_for("frozen").await;
        assert_eq!(error["code"], "unavailable", "{error}");
        assert!(error["message"].as_str().is_some_and(|m| m.contains("matchmaker")), "{error}");
    }
    let answered = frozen.elapsed();
    assert!(answered >= MATCHMAKER_TIMEOUT, "unavailable before the deadline, after {answered:?}");
    for i in 0..MAX_IN_FLIGHT {
        assert_eq!(carol.expect_error_for(&format!("c{i}")).await["code"], "unavailable");
    }
    println!("lobby answered unavailable {answered:?} after the freeze (deadline {MATCHMAKER_TIMEOUT:?})");

    matchmaker.thaw();
    white.send(json!({ "t": "lobby", "id": "after" })).await;
    let lobby = white.expect_where("the lobby after the thaw", |f| t(f) == "lobby" && f["id"] == "after").await;
    assert!(lobby["open"].is_array(), "{lobby}");
    carol.send(json!({ "t": "lobby", "id": "carol-after" })).await;
    carol.expect_where("carol's lobby after the thaw", |f| t(f) == "lobby" && f["id"] == "carol-after").await;
    gateway.assert_healthy();
}
