//! Puzzles through the HTTP API of an in-process sandbox (gateway and the
//! rating service on SQLite, seeded with the starter set): lichess's
//! daily and by-id routes, the next puzzle by the player's token, attempts
//! judged by the gateway and rated once, and answers that are not for the
//! puzzle refused with nothing changed.

use crate::support::Client;
use fogblast_client::{Http, Method};
use fogblast_sandbox::Sandbox;
use serde_json::{json, Value};

async fn send(http: &Http, method: Method, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let answer = http.send(method, path, Some(token), body.as_ref()).await.expect("the gateway answers");
    (answer.status, answer.json().unwrap_or(Value::Null))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn puzzles_are_served_judged_and_rated_once() {
    let cluster =
        Sandbox::builder().shards(1).gateways(1).rating().embedded().start().await.expect("the sandbox starts");
    let http = cluster.http(0);
    let player = Client::join("puzzler", cluster.gateway(0), None).await;
    let token = player.token.clone();

    let (status, daily): (u16, Value) = http.get_json("/api/puzzle/daily").await.unwrap();
    assert_eq!(status, 200, "{daily}");
    let id = daily["puzzle"]["id"].as_str().unwrap().to_owned();
    assert!(["atomic", "fogOfWar"].contains(&daily["game"]["perf"]["key"].as_str().unwrap()), "{daily}");
    let (status, same): (u16, Value) = http.get_json(&format!("/api/puzzle/{id}")).await.unwrap();
    assert_eq!((status, &same["puzzle"]), (200, &daily["puzzle"]));
    let (status, missing): (u16, Value) = http.get_json("/api/puzzle/zzzzzzzz").await.unwrap();
    assert_eq!((status, missing["code"].as_str()), (404, Some("not_found")), "{missing}");
    let (status, malformed): (u16, Value) = http.get_json("/api/puzzle/..%2Fetc").await.unwrap();
    assert_eq!(status, 400, "{malformed}");

    // A fog puzzle shows the solver's view only.
    let (status, fog) = send(&http, Method::GET, "/api/puzzle/next?variant=fog", &token, None).await;
    assert_eq!(status, 200, "{fog}");
    assert_eq!((fog["puzzle"]["variant"].as_str(), fog["puzzle"]["view"].as_bool()), (Some("fog"), Some(true)));
    assert!(fog["puzzle"]["fen"].as_str().unwrap().contains('*'), "{fog}");
    let (status, atomic) = send(&http, Method::GET, "/api/puzzle/next?variant=atomic", &token, None).await;
    assert_eq!((status, atomic["puzzle"]["variant"].as_str()), (200, Some("atomic")), "{atomic}");
    let atomic_id = atomic["puzzle"]["id"].as_str().unwrap().to_owned();
    let fog_id = fog["puzzle"]["id"].as_str().unwrap().to_owned();
    let atomic_line = strings(&atomic["puzzle"]["solution"]);

    // Refused, changing nothing: the other puzzle's answer, another
    // puzzle's id in the body, a body that is no attempt, no token.
    let attempt = format!("/api/puzzle/{fog_id}/attempt");
    let (status, error) =
        send(&http, Method::POST, &attempt, &token, Some(json!({ "puzzle": fog_id, "moves": atomic_line }))).await;
    assert_eq!((status, error["code"].as_str()), (400, Some("bad_request")), "{error}");
    let (status, error) =
        send(&http, Method::POST, &attempt, &token, Some(json!({ "puzzle": atomic_id, "moves": atomic_line }))).await;
    assert_eq!((status, error["code"].as_str()), (409, Some("conflict")), "{error}");
    assert!(error["message"].as_str().unwrap().contains(&atomic_id), "{error}");
    let (status, error) = send(&http, Method::POST, &attempt, &token, Some(json!({ "moves": "e2e4" }))).await;
    assert_eq!(status, 400, "{error}");
    let answer =
        http.send(Method::POST, &attempt, None, Some(&json!({ "puzzle": fog_id, "moves": [] }))).await.unwrap();
    assert_eq!(answer.status, 401);
    let (_, rating) = send(&http, Method::GET, "/api/puzzle/rating", &token, None).await;
    assert_eq!((rating["rating"].as_f64(), rating["attempts"].as_u64()), (Some(1500.0), Some(0)), "{rating}");

    // The atomic line solves, and moves both ratings.
    let (status, solved) = send(
        &http,
        Method::POST,
        &format!("/api/puzzle/{atomic_id}/attempt"),
        &token,
        Some(json!({ "puzzle": atomic_id, "moves": atomic_line })),
    )
    .await;
    assert_eq!(status, 200, "{solved}");
    assert_eq!((solved["solved"].as_bool(), solved["rated"].as_bool()), (Some(true), Some(true)), "{solved}");
    assert!(solved["player"]["change"].as_f64().unwrap() > 0.0, "{solved}");
    assert!(solved["puzzle"]["rating"].as_f64() < solved["puzzle"]["before"].as_f64(), "{solved}");

    // A wrong first move fails the fog puzzle and lowers the rating.
    let view = fog["puzzle"]["fen"].as_str().unwrap();
    let wrong = other_move(view, &strings(&fog["puzzle"]["solution"])[0]);
    let (status, failed) =
        send(&http, Method::POST, &attempt, &token, Some(json!({ "puzzle": fog_id, "moves": [wrong] }))).await;
    assert_eq!(status, 200, "{failed}");
    assert_eq!((failed["solved"].as_bool(), failed["failedAt"].as_u64()), (Some(false), Some(0)), "{failed}");
    assert!(failed["player"]["change"].as_f64().unwrap() < 0.0, "{failed}");

    // Trying again is judged but not rated.
    let (_, again) = send(
        &http,
        Method::POST,
        &attempt,
        &token,
        Some(json!({ "puzzle": fog_id, "moves": strings(&fog["puzzle"]["solution"]) })),
    )
    .await;
    assert_eq!((again["solved"].as_bool(), again["rated"].as_bool()), (Some(true), Some(false)), "{again}");
    assert_eq!(again["player"]["change"].as_f64(), Some(0.0), "{again}");
    let (_, rating) = send(&http, Method::GET, "/api/puzzle/rating", &token, None).await;
    assert_eq!(rating["attempts"].as_u64(), Some(2), "{rating}");
    assert_eq!(rating["rating"], failed["player"]["rating"], "{rating}");
}

/// A legal move of the view other than `solution`.
fn other_move(view: &str, solution: &str) -> String {
    let parsed = fogblast_puzzles::view::parse_view(view).unwrap();
    fogblast_puzzles::fog::candidate_moves(&parsed)
        .into_iter()
        .map(fogblast_puzzles::uci)
        .find(|m| m != solution)
        .expect("a fog puzzle has another move")
}
