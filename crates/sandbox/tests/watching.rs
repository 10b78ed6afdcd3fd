//! The games being played, as the gateway lists them for watching
//! (`/api/tv/games`, `/api/tv/channels`): a game is listed from the moment
//! both seats are taken until it ends, on every gateway whichever shard
//! owns it, best rated first; a fog game is listed by its players alone,
//! never by anything of its position.

use std::time::{Duration, Instant};

use fogblast_client::protocol::{ClientFrame, GameRef, Move, Variant};
use fogblast_client::Client;
use fogblast_sandbox::{started_game, Sandbox};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);
/// How long a list may take to show a change: the gateway reads it again
/// every two seconds, and a rating moves once the rating service applied
/// the game.
const SETTLE: Duration = Duration::from_secs(20);

async fn play(client: &mut Client, game: &str, uci: &str, ply: u32) {
    client.send(ClientFrame::Move(Move { game: game.into(), uci: uci.into(), ply })).await.unwrap();
    client.wait_for(uci, LIMIT, |f| f.kind() == "move" && f.json()["ply"] == ply).await.unwrap();
}

async fn resign(client: &mut Client, game: &str) {
    client.send(ClientFrame::Resign(GameRef { game: game.into() })).await.unwrap();
    client.wait_for("end", LIMIT, |f| f.kind() == "end").await.unwrap();
}

async fn listed(sandbox: &Sandbox, gateway: usize) -> Vec<Value> {
    let (status, body): (u16, Value) = sandbox.http(gateway).get_json("/api/tv/games").await.unwrap();
    assert_eq!(status, 200, "{body}");
    body["games"].as_array().cloned().unwrap_or_default()
}

fn ids(games: &[Value]) -> Vec<String> {
    games.iter().map(|g| g["game"].as_str().unwrap_or_default().to_owned()).collect()
}

/// Reads the list from `gateway` until `done` holds for it.
async fn list_until(sandbox: &Sandbox, gateway: usize, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let games = listed(sandbox, gateway).await;
        if done(&games) {
            return games;
        }
        assert!(Instant::now() < deadline, "{what}: the list is still {games:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn games_are_listed_while_played_best_rated_first_and_fog_shows_no_position() {
    let sandbox =
        Sandbox::builder().shards(2).gateways(2).rating().embedded().start().await.expect("the sandbox starts");
    let (mut ann, ann_id) = sandbox.player(0, "Ann").await.unwrap();
    let (mut bob, bob_id) = sandbox.player(1, "Bob").await.unwrap();
    let (mut carl, _) = sandbox.player(0, "Carl").await.unwrap();
    let (mut dave, _) = sandbox.player(1, "Dave").await.unwrap();
    let (mut eve, _) = sandbox.player(0, "Eve").await.unwrap();
    let (mut fred, _) = sandbox.player(1, "Fred").await.unwrap();
    assert!(listed(&sandbox, 0).await.is_empty());

    // Ann beats Bob in a rated atomic game: Ann above 1500, Bob below.
    let first = started_game(&mut ann, &mut bob, Variant::Atomic, true).await.unwrap();
    list_until(&sandbox, 0, "a started game", |games| ids(games) == [first.clone()]).await;
    play(&mut ann, &first, "e2e4", 0).await;
    play(&mut bob, &first, "e7e5", 1).await;
    resign(&mut bob, &first).await;
    list_until(&sandbox, 1, "a finished game leaves", |games| games.is_empty()).await;
    let deadline = Instant::now() + SETTLE;
    while sandbox.http(0).get_json::<Value>(&format!("/api/players/{bob_id}")).await.unwrap().0 != 200 {
        assert!(Instant::now() < deadline, "the first game was never rated");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let low = started_game(&mut carl, &mut bob, Variant::Atomic, true).await.unwrap();
    let high = started_game(&mut ann, &mut dave, Variant::Atomic, true).await.unwrap();
    let fog = started_game(&mut eve, &mut fred, Variant::Fog, false).await.unwrap();
    play(&mut eve, &fog, "e2e4", 0).await;
    play(&mut fred, &fog, "d7d5", 1).await;
    for gateway in [0, 1] {
        let games = list_until(&sandbox, gateway, "three games, rated", |games| {
            games.len() == 3
                && games.iter().all(|g| {
                    g["players"]["white"]["id"] != ann_id || g["players"]["white"]["rating"].as_i64() > Some(1500)
                })
        })
        .await;
        assert_eq!(ids(&games), [high.clone(), fog.clone(), low.clone()], "best rated first: {games:?}");
        let best = &games[0];
        assert_eq!((best["variant"].as_str(), best["rated"].as_bool()), (Some("atomic"), Some(true)));
        assert_eq!(best["players"]["white"]["name"], "Ann");
        assert_eq!(best["players"]["white"]["provisional"], true, "one game: provisional");
        assert!(games[2]["players"]["black"]["rating"].as_i64() < Some(1500), "Bob lost: {games:?}");
        let fogged = &games[1];
        assert_eq!(fogged["variant"], "fog");
        let mut keys: Vec<&String> = fogged.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["chess960", "game", "players", "rated", "started_ms", "time_control", "tournament", "variant"],
            "an entry says who plays what, nothing of the position"
        );
        let mut without_ids = fogged.clone();
        without_ids["game"] = Value::Null;
        for side in ["white", "black"] {
            without_ids["players"][side]["id"] = Value::Null;
        }
        let text = without_ids.to_string();
        for played in ["e2e4", "d7d5", "e4", "d5", "fen"] {
            assert!(!text.contains(played), "the fog game's entry shows {played}: {text}");
        }
    }
    let (status, channels): (u16, Value) = sandbox.http(1).get_json("/api/tv/channels").await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(channels["best"]["gameId"], high.as_str());
    assert_eq!(
        (channels["best"]["user"]["name"].as_str(), channels["best"]["color"].as_str()),
        (Some("Ann"), Some("white"))
    );
    assert_eq!(channels["atomic"]["gameId"], high.as_str());
    assert_eq!(channels["fogOfWar"]["gameId"], fog.as_str());
    assert!(!channels.to_string().contains("fen"), "{channels}");

    // The best game ends: it leaves, and the next is best.
    resign(&mut dave, &high).await;
    for gateway in [0, 1] {
        let games = list_until(&sandbox, gateway, "the ended game leaves", |games| games.len() == 2).await;
        assert_eq!(ids(&games), [fog.clone(), low.clone()]);
    }
    let (status, only_fog): (u16, Value) = sandbox.http(0).get_json("/api/tv/games?variant=fog&nb=5").await.unwrap();
    assert_eq!((status, ids(only_fog["games"].as_array().unwrap())), (200, vec![fog.clone()]));
    let (status, refused): (u16, Value) = sandbox.http(0).get_json("/api/tv/games?variant=chess").await.unwrap();
    assert_eq!((status, refused["code"].as_str()), (400, Some("bad_request")), "{refused}");
    sandbox.stop().await.expect("every service stops cleanly");
}
