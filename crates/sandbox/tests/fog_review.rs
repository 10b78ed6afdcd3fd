//! The hindsight review of a fog game (`/api/games/{id}/review`): nothing
//! while the game is played, and once it has ended, each player's view at
//! every ply exactly as their seat was shown it during the game.

use std::time::{Duration, Instant};

use fogblast_client::protocol::{ClientFrame, GameRef, Move, Variant};
use fogblast_client::Client;
use fogblast_sandbox::{started_game, Sandbox};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);
/// How long the archive may take to hold a finished game.
const ARCHIVED: Duration = Duration::from_secs(30);

/// Plays `uci` at `ply` by `mover`; returns the squares each seat was
/// shown as visible in its `move` frame of that ply, white's first.
async fn play(white: &mut Client, black: &mut Client, game: &str, uci: &str, ply: u32) -> [Vec<String>; 2] {
    let mover = if ply.is_multiple_of(2) { &mut *white } else { &mut *black };
    mover.send(ClientFrame::Move(Move { game: game.into(), uci: uci.into(), ply })).await.unwrap();
    let mut shown: [Vec<String>; 2] = Default::default();
    for (seat, client) in [white, black].into_iter().enumerate() {
        let frame = client.wait_for(uci, LIMIT, |f| f.kind() == "move" && f.json()["ply"] == ply).await.unwrap();
        let visible = frame.json()["visible"].as_array().cloned().unwrap_or_default();
        shown[seat] = visible.iter().map(|s| s.as_str().unwrap().to_owned()).collect();
        shown[seat].sort();
    }
    shown
}

async fn review(sandbox: &Sandbox, game: &str) -> (u16, Value) {
    sandbox.http(0).get_json(&format!("/api/games/{game}/review")).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fog_game_is_reviewed_only_once_ended_with_each_seat_shown_what_it_saw() {
    let sandbox =
        Sandbox::builder().shards(1).gateways(1).rating().embedded().start().await.expect("the sandbox starts");
    let (mut ann, _) = sandbox.player(0, "Ann").await.unwrap();
    let (mut bob, _) = sandbox.player(0, "Bob").await.unwrap();
    let game = started_game(&mut ann, &mut bob, Variant::Fog, false).await.unwrap();
    let line = ["e2e4", "d7d5", "e4d5", "d8d5", "b1c3", "d5e5"];
    let mut shown = Vec::new();
    for (ply, uci) in line.iter().enumerate().take(3) {
        shown.push(play(&mut ann, &mut bob, &game, uci, ply as u32).await);
    }
    let (status, body) = review(&sandbox, &game).await;
    assert_eq!(status, 404, "no review of a game being played: {body}");
    assert!(!body.to_string().contains("visible") && !body.to_string().contains("e4d5"), "{body}");
    for (ply, uci) in line.iter().enumerate().skip(3) {
        shown.push(play(&mut ann, &mut bob, &game, uci, ply as u32).await);
    }
    ann.send(ClientFrame::Resign(GameRef { game: game.clone() })).await.unwrap();
    ann.wait_for("end", LIMIT, |f| f.kind() == "end").await.unwrap();

    let deadline = Instant::now() + ARCHIVED;
    let body = loop {
        let (status, body) = review(&sandbox, &game).await;
        if status == 200 {
            break body;
        }
        assert_eq!((status, body["state"].as_str()), (202, Some("pending")), "ended, not archived yet: {body}");
        assert!(Instant::now() < deadline, "the review once the game is archived: {status} {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let plies = body["plies"].as_array().unwrap();
    assert_eq!(plies.len(), line.len() + 1, "the start and every ply: {body}");
    for (ply, [white, black]) in shown.iter().enumerate() {
        let reviewed = &plies[ply + 1];
        assert_eq!(reviewed["uci"], line[ply]);
        let visible = |side: &str| {
            let mut squares: Vec<String> =
                reviewed[side]["visible"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect();
            squares.sort();
            squares
        };
        assert_eq!(&visible("white"), white, "ply {ply}: what white was shown");
        assert_eq!(&visible("black"), black, "ply {ply}: what black was shown");
    }
    assert_eq!(body["white"]["moves"], 3);
    assert_eq!(body["black"]["moves"], 3);
    assert_eq!(body["white"]["captures"], 1, "e4d5");
    assert_eq!(body["black"]["captures"], 1, "d8d5");
    // 4. Nc3 attacks the queen on d5 and black saw the knight: no king moment, but the queen is no free piece.
    assert!(body["moments"].as_array().unwrap().iter().all(|m| m["kind"] != "king_exposed_unseen"), "{body}");

    let (mut carl, _) = sandbox.player(0, "Carl").await.unwrap();
    let (mut dave, _) = sandbox.player(0, "Dave").await.unwrap();
    let atomic = started_game(&mut carl, &mut dave, Variant::Atomic, false).await.unwrap();
    carl.send(ClientFrame::Resign(GameRef { game: atomic.clone() })).await.unwrap();
    carl.wait_for("end", LIMIT, |f| f.kind() == "end").await.unwrap();
    let deadline = Instant::now() + ARCHIVED;
    loop {
        let (status, body) = review(&sandbox, &atomic).await;
        if status == 400 {
            assert!(body.to_string().contains("fog of war"), "{body}");
            break;
        }
        assert_eq!((status, body["state"].as_str()), (202, Some("pending")), "ended, not archived yet: {body}");
        assert!(Instant::now() < deadline, "an atomic game has no hindsight review");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    sandbox.stop().await.expect("the sandbox stops");
}
