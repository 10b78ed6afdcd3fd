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

    // Refused, changing nothing: an atomic puzzle's answer (one whose first
    // move cannot be played in the fog puzzle's view), another puzzle's id
    // in the body, a body that is no attempt, no token.
    let fog_view = fogblast_puzzles::view::parse_view(fog["puzzle"]["fen"].as_str().unwrap()).unwrap();
    let foreign_line = fogblast_puzzles::starter_set()
        .into_iter()
        .find(|p| {
            p.variant == "atomic"
                && fogblast_puzzles::parse_move(&fog_view.position, &p.solution[0], Some(fog_view.visible)).is_none()
        })
        .expect("an atomic answer that is no move in the fog view")
        .solution;
    let attempt = format!("/api/puzzle/{fog_id}/attempt");
    let (status, error) =
        send(&http, Method::POST, &attempt, &token, Some(json!({ "puzzle": fog_id, "moves": foreign_line }))).await;
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

/// A finished game for the archive: a seeded self-play game
/// ([`fogblast_puzzles::selfplay`]) under a game id of its own.
fn archived_selfplay(id: &str, variant: fogblast_rules::Variant, seed: u64) -> fogblast_proto::events::GameFinished {
    use fogblast_proto::events::{FinishedPlayer, GameFinished};
    use fogblast_proto::game::{EndReason, Variant};
    let player = |id: &str| FinishedPlayer { id: id.to_owned(), name: id.to_owned(), ..Default::default() };
    let moves = fogblast_puzzles::selfplay::selfplay_game(variant, seed);
    GameFinished {
        game_id: id.to_owned(),
        variant: if variant == fogblast_rules::Variant::Fog { Variant::Fog } else { Variant::Atomic } as i32,
        initial_fen: fogblast_rules::Position::new(variant).fen(),
        white: Some(player("alice")),
        black: Some(player("bob")),
        result: "1/2-1/2".to_owned(),
        reason: EndReason::Agreement as i32,
        moves: moves.into_iter().map(fogblast_puzzles::uci).collect(),
        created_at_ms: 1_700_000_000_000,
        started_at_ms: 1_700_000_000_000,
        ended_at_ms: 1_700_000_060_000,
        ..Default::default()
    }
}

/// `fogblast-tools puzzles --database-url` against a real archive: finished
/// atomic and fog games archived in a Postgres database of the test's own,
/// the generator run on it with no self-play, and every puzzle it writes
/// cut from an archived game and verified afresh (the atomic line by the
/// engine, the fog move from its view and against the game it came from).
#[tokio::test]
async fn the_generator_cuts_verified_puzzles_from_an_archive() {
    use fogblast_puzzles::{atomic, fog, selfplay};
    use fogblast_rules::Variant;
    let database = fogblast_testkit::ScratchDatabase::create("puzzle_archive").await;
    let archive = fogblast_rating::Archive::connect(&database.url).await.expect("the archive opens");
    // Games the starter set shows have puzzles in them.
    let starter = fogblast_puzzles::starter_set();
    let seed_of = |variant: &str| {
        let puzzle = starter.iter().find(|p| p.variant == variant && p.source.starts_with("selfplay")).unwrap();
        selfplay::parse_source(&puzzle.source).unwrap().1
    };
    let games = [("g-atomic", Variant::Atomic, seed_of("atomic")), ("g-fog", Variant::Fog, seed_of("fog"))];
    let mut archived = std::collections::HashMap::new();
    for (id, variant, seed) in games {
        let game = archived_selfplay(id, variant, seed);
        archive.apply(&game, 1_700_000_100_000).await.expect("the game is archived");
        archived.insert(format!("game {id}"), game.moves);
    }

    let out = std::env::temp_dir().join(format!("fogblast-puzzles-{}.jsonl", rand::random::<u32>()));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_fogblast-tools"))
        .args(["puzzles", "--atomic", "2", "--fog", "2", "--max-games", "0", "--database-url", &database.url])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("fogblast-tools runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(&out).expect("the puzzles are written");
    let _ = std::fs::remove_file(&out);
    let puzzles = fogblast_puzzles::read_jsonl(&text).expect("JSON lines");

    for variant in ["atomic", "fog"] {
        assert!(puzzles.iter().any(|p| p.variant == variant), "no {variant} puzzle in {text}");
    }
    for puzzle in &puzzles {
        let (game, ply) = puzzle.source.rsplit_once(" ply ").expect("a source with a ply");
        let moves = archived.get(game).unwrap_or_else(|| panic!("{} is not an archived game", puzzle.source));
        let ply: usize = ply.parse().unwrap();
        let mut pos = fogblast_rules::Position::new(puzzle.variant().unwrap());
        let mut played = Vec::new();
        for text in &moves[..ply] {
            let m = fogblast_puzzles::parse_move(&pos, text, None).unwrap();
            pos.play_unchecked(m);
            played.push(m);
        }
        if puzzle.variant == "atomic" {
            assert_eq!(pos.fen(), puzzle.fen, "{}", puzzle.source);
            assert_eq!(atomic::verify(puzzle, &atomic::Check::STANDARD), Ok(()), "{}", puzzle.source);
        } else {
            assert_eq!(pos.fog_view(pos.turn()).fen(), puzzle.fen, "{}", puzzle.source);
            assert!(fog::verify(puzzle).is_ok(), "{}", puzzle.source);
            let solution = fogblast_puzzles::parse_move(&pos, &puzzle.solution[0], None).unwrap();
            let deeper = fog::verify_in_game(&played, solution, &fog::DeepCheck::STANDARD);
            assert!(deeper.is_ok(), "{}: {deeper:?}", puzzle.source);
        }
    }
}
