//! Computer analysis through the HTTP API of an in-process sandbox (game
//! shard, engine pool taking the analysis queue, rating service, gateway):
//! a finished atomic game is analysed once however often it is asked for,
//! and its PGN carries `[%eval]`; a game in play, and a fog of war game
//! above all, is refused and nothing of it is analysed; an unknown game
//! and a malformed id are refused with their reasons.

use std::time::Duration;

use crate::support::{find_line, play, start_game, Client};
use fogblast_client::{Http, Method};
use fogblast_rules::{Variant, WinReason};
use fogblast_sandbox::Sandbox;
use serde_json::Value;

async fn post(http: &Http, path: &str) -> (u16, Value) {
    let answer = http.send(Method::POST, path, None, None).await.expect("the gateway answers");
    (answer.status, answer.json().unwrap_or(Value::Null))
}

/// GETs `path` until `done` holds for its answer, pausing as long as the
/// gateway's per-address budget asks when it refuses.
async fn poll(http: &Http, path: &str, done: impl Fn(u16, &Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let answer = http.get(path).await.expect("the gateway answers");
        let body = answer.json().unwrap_or(Value::Null);
        if done(answer.status, &body) {
            return body;
        }
        assert!(tokio::time::Instant::now() < deadline, "{path}: still {} {body}", answer.status);
        let pause = if answer.status == 429 { answer.retry_after.unwrap_or(1) * 1000 } else { 250 };
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

/// Polls the analysis until it is no longer queued.
async fn analysed(http: &Http, game: &str) -> Value {
    poll(http, &format!("/api/games/{game}/analysis"), |status, body| status == 200 && body["state"] != "queued").await
}

/// Polls until the archive holds the game (the rating service consumes the
/// finished games' stream).
async fn archived(http: &Http, game: &str) {
    poll(http, &format!("/api/games/{game}/pgn"), |status, _| status == 200).await;
}

#[tokio::test]
async fn a_finished_game_is_analysed_once_and_a_game_in_play_never() {
    let cluster = Sandbox::builder()
        .shards(1)
        .gateways(1)
        .engines(1)
        .rating()
        .embedded()
        .start()
        .await
        .expect("the sandbox starts");
    let http = cluster.http(0);

    // Refused: a malformed id, an unknown game.
    let (status, error) = post(&http, "/api/games/..%2Fx/analysis").await;
    assert_eq!(status, 400, "{error}");
    let (status, error) = post(&http, "/api/games/nosuchgame1/analysis").await;
    assert_eq!((status, error["code"].as_str()), (404, Some("not_found")), "{error}");

    // A fog of war game in play: refused, and no analysis exists for it.
    let mut fog_white = Client::join("fog-white", cluster.gateway(0), None).await;
    let mut fog_black = Client::join("fog-black", cluster.gateway(0), None).await;
    let fog = start_game(&mut fog_white, &mut fog_black, "fog").await;
    let fog_line = find_line(Variant::Fog, WinReason::KingCaptured, 10, 60);
    play(&mut fog_white, &mut fog_black, &fog, &fog_line.moves, 0, 4).await;
    let (status, error) = post(&http, &format!("/api/games/{fog}/analysis")).await;
    assert_eq!((status, error["code"].as_str()), (409, Some("conflict")), "{error}");
    assert!(error["message"].as_str().unwrap().contains("still being played"), "{error}");
    let (status, none): (u16, Value) = http.get_json(&format!("/api/games/{fog}/analysis")).await.unwrap();
    assert_eq!(
        (status, none["state"].as_str()),
        (200, Some("none")),
        "nothing of a fog game in play is analysed: {none}"
    );
    assert!(none.get("positions").is_none() && none.get("moves").is_none(), "{none}");
    let (status, error): (u16, Value) = http.get_json("/api/games/nosuchgame1/analysis").await.unwrap();
    assert_eq!((status, error["code"].as_str()), (404, Some("not_found")), "{error}");

    // A finished atomic game: asked for twice, analysed once.
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(0), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 6, 30);
    play(&mut white, &mut black, &game, &line.moves, 0, line.moves.len()).await;
    white.expect("end").await;
    archived(&http, &game).await;
    let (status, first) = post(&http, &format!("/api/games/{game}/analysis")).await;
    assert!(status == 202 || status == 200, "{status}: {first}");
    let (_, again) = post(&http, &format!("/api/games/{game}/analysis")).await;
    assert_eq!(again["requested_ms"], first["requested_ms"], "one analysis: {again}");

    let analysis = analysed(&http, &game).await;
    assert_eq!(analysis["state"], "done", "{analysis}");
    let positions = analysis["positions"].as_array().unwrap();
    assert_eq!(positions.len(), line.moves.len() + 1, "{analysis}");
    assert_eq!(positions.last().unwrap()["result"], line.result, "the explosion ends it: {analysis}");
    let moves = analysis["moves"].as_array().unwrap();
    assert_eq!(moves.len(), line.moves.len());
    for judged in moves {
        let mark = judged["mark"].as_str();
        assert!(matches!(mark, None | Some("?!" | "?" | "??")), "{judged}");
        if judged["better"].is_string() {
            assert!(mark.is_some() && judged["better"] != judged["uci"], "{judged}");
        }
    }
    assert!(analysis["accuracy"]["white"].is_number() && analysis["accuracy"]["black"].is_number(), "{analysis}");

    let pgn = http.pgn(&game).await.unwrap().text();
    assert!(pgn.contains("[%eval "), "{pgn}");
    assert_eq!(pgn.matches("[%eval ").count(), line.moves.len() - 1, "every move but the last: {pgn}");

    // The fog game, finished, may now be analysed from the true board.
    play(&mut fog_white, &mut fog_black, &fog, &fog_line.moves, 4, fog_line.moves.len()).await;
    fog_white.expect("end").await;
    archived(&http, &fog).await;
    let (status, queued) = post(&http, &format!("/api/games/{fog}/analysis")).await;
    assert!(status == 202 || status == 200, "{status}: {queued}");
    let fog_analysis = analysed(&http, &fog).await;
    assert_eq!(fog_analysis["state"], "done", "{fog_analysis}");
    assert_eq!(fog_analysis["positions"].as_array().unwrap().len(), fog_line.moves.len() + 1);
    cluster.stop().await.expect("the sandbox stops cleanly");
}
