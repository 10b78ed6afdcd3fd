//! Quick pairing and the lobby through the gateway, with a matchmaker, a
//! game shard and a gateway in an in-process sandbox: two seekers are told `seeking`, then `paired`
//! with opposite colours in a game where both are seated; a game created for
//! a human opponent shows in the lobby of a watching socket and leaves it
//! when taken.

use std::time::Duration;

use crate::support::Client;
use fogblast_sandbox::Sandbox;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seekers_are_paired_and_the_lobby_shows_open_boards() {
    let sandbox =
        Sandbox::builder().shards(1).gateways(1).matchmaker().embedded().start().await.expect("the sandbox starts");
    let gateway = sandbox.gateway(0);

    let mut alice = Client::connect("alice", gateway).await;
    let mut bob = Client::connect("bob", gateway).await;
    let mut watcher = Client::connect("watcher", gateway).await;
    alice.hello(None).await;
    bob.hello(None).await;
    watcher.hello(None).await;

    watcher.send(json!({ "t": "lobby", "id": "l" })).await;
    let lobby = watcher.expect("lobby").await;
    assert_eq!(lobby["id"], "l");
    assert_eq!(lobby["open"].as_array().map(Vec::len), Some(0));

    let clock = json!({ "initial_ms": 180_000, "increment_ms": 2_000 });
    for client in [&mut alice, &mut bob] {
        client.send(json!({ "t": "seek", "variant": "atomic", "clock": clock, "rated": false, "id": "s" })).await;
        let seeking = client.expect("seeking").await;
        assert_eq!(seeking["id"], "s");
    }
    let a = alice.expect("paired").await;
    let b = bob.expect("paired").await;
    assert_eq!(a["game"], b["game"]);
    let colors = [a["color"].as_str().unwrap(), b["color"].as_str().unwrap()];
    assert!(colors == ["white", "black"] || colors == ["black", "white"], "{colors:?}");
    let game = a["game"].as_str().unwrap().to_owned();
    alice.send(json!({ "t": "watch", "game": game })).await;
    let state = alice.expect("state").await;
    assert_eq!((state["status"].as_str(), state["you"].as_str()), (Some("playing"), Some(colors[0])));

    // A board for a human opponent is listed, then taken.
    alice
        .send(json!({ "t": "create", "variant": "standard", "color": "random", "clock": null, "opponent": "human" }))
        .await;
    let created = alice.expect("created").await;
    let code = created["code"].as_str().unwrap().to_owned();
    let listed = watcher
        .lobby_until(Duration::from_secs(5), |open| !open.is_empty())
        .await
        .expect("the new board reaches the lobby");
    assert_eq!(listed[0]["code"], code.as_str());
    assert_eq!(listed[0]["variant"], "standard");
    bob.send(json!({ "t": "join", "code": code })).await;
    bob.expect("joined").await;
    watcher.lobby_until(Duration::from_secs(5), <[Value]>::is_empty).await.expect("the taken board leaves the lobby");

    // A cancelled seek is never paired.
    bob.send(json!({ "t": "seek", "variant": "fog", "clock": null })).await;
    bob.expect("seeking").await;
    bob.send(json!({ "t": "cancel_seek", "id": "c" })).await;
    let cancelled = bob.expect("seek_cancelled").await;
    assert_eq!(cancelled["cancelled"], true);
}
