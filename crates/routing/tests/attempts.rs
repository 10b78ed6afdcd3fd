//! The router against shards that fail the ways real ones do, on real
//! sockets: one that froze (accepts connections, never answers) and one
//! that died (its port refuses connections). Each attempt has its own
//! deadline, so a frozen shard costs a call one attempt rather than the
//! whole route timeout, and a call finds the shard membership names next.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::GetStateRequest;
use fogblast_routing::Router;
use support::Members;
use tokio::net::TcpListener;

/// A shard frozen with SIGSTOP, as its callers see it: the kernel completes
/// connections to its port, nobody ever answers on them.
async fn frozen_shard() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (addr, task)
}

/// A port nothing listens on any more: a shard killed outright.
async fn dead_shard() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    addr
}

fn state_of(game: &str) -> GetStateRequest {
    GetStateRequest { game_id: game.to_owned(), player_id: String::new() }
}

#[tokio::test]
async fn a_frozen_shard_costs_each_attempt_its_own_deadline_not_the_whole_call() {
    let (frozen, _task) = frozen_shard().await;
    let members = Arc::new(Members::default());
    members.set(&[&frozen]);
    let router =
        Router::new(members.clone(), Duration::from_secs(3)).await.with_attempt_timeout(Duration::from_millis(200));

    // While the frozen shard is the only one, the call gives up at the route
    // timeout with `unavailable`, instead of waiting on the first attempt
    // for as long as the shard stays frozen.
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(6), router.get_state(state_of("game1"))).await;
    let error = answer.expect("the call ends although the shard never answers").unwrap_err();
    assert_eq!(error.code, ErrorCode::Unavailable, "{error}");
    assert!(started.elapsed() < Duration::from_secs(4), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_call_moves_on_from_a_frozen_or_dead_shard_once_membership_does() {
    for stuck in ["frozen", "dead"] {
        let (frozen, _task) = frozen_shard().await;
        let target = if stuck == "frozen" { frozen } else { dead_shard().await };
        let members = Arc::new(Members::default());
        members.set(&[&target]);
        let router =
            Router::new(members.clone(), Duration::from_secs(2)).await.with_attempt_timeout(Duration::from_millis(200));
        // The shard that takes over: a dead port too, so the answer is an
        // error, but one that can only come from asking it.
        let (next, _next_task) = frozen_shard().await;
        let call = tokio::spawn(async move {
            let started = Instant::now();
            let answer = router.get_state(state_of("game1")).await;
            (answer, started.elapsed())
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let changed = Instant::now();
        members.set(&[&next]);
        let (answer, _) = call.await.unwrap();
        let error = answer.unwrap_err();
        let addr = next.trim_start_matches("http://");
        assert!(error.for_log().contains(addr), "{stuck}: asked the new owner: {}", error.for_log());
        assert!(!error.message.contains(addr), "{stuck}: a client is not told shard addresses: {error}");
        assert!(
            changed.elapsed() > Duration::from_millis(1_500),
            "{stuck}: retried the new owner until the route timeout"
        );
    }
}
