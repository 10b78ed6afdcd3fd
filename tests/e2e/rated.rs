//! A rated game from first move to new ratings, through real processes: a
//! game shard, a gateway and the rating service on its own Postgres
//! database and NATS stream. Both players receive the `rating` message, and
//! the gateway serves the new ratings, the archived game and its PGN.

use crate::support::{api_game, find_line, http_get, play, Client, Cluster};
use fogblast_rules::{Variant, WinReason};
use serde_json::json;
use sqlx::Connection;

fn postgres_base() -> String {
    std::env::var("FOGBLAST_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
}

/// A database of the test's own, dropped at the end.
struct Database {
    name: String,
}

impl Database {
    async fn create() -> (Database, String) {
        let name = format!("test_e2e_rated_{:08x}", rand::random::<u32>());
        let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", postgres_base())).await.unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
        let url = format!("{}/{name}", postgres_base());
        (Database { name }, url)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let name = self.name.clone();
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&format!("{}/postgres", postgres_base())).await {
                    let _ =
                        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await;
                }
            });
        })
        .join();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_ends_with_a_rating_message_to_both_players() {
    let (_database, url) = Database::create().await;
    let cluster = Cluster::start("rated", 1, 0);
    let rating = cluster.spawn_rating("rating", &url);
    let rating_addr = format!("http://{}", rating.grpc.expect("the rating service logs its gRPC address"));
    let gateway = cluster.spawn_gateway_with("gateway", &["--rating-addr", &rating_addr]);
    let mut white = Client::connect("white", gateway.http).await;
    let mut black = Client::connect("black", gateway.http).await;
    let white_id = white.hello(None).await["player"].as_str().unwrap().to_owned();
    let black_id = black.hello(None).await["player"].as_str().unwrap().to_owned();

    white
        .send(json!({ "t": "create", "variant": "atomic", "color": "white", "clock": null, "opponent": "human", "rated": true }))
        .await;
    let created = white.expect("created").await;
    let game = created["game"].as_str().unwrap().to_owned();
    assert_eq!(white.expect("state").await["rated"], true);
    black.send(json!({ "t": "join", "code": created["code"] })).await;
    black.expect("joined").await;
    black.expect("state").await;

    let line = find_line(Variant::Atomic, WinReason::KingExploded, 6, 60);
    let plies = line.moves.len();
    play(&mut white, &mut black, &game, &line.moves, 0, plies).await;
    let winner_is_white = line.result == "1-0";
    for client in [&mut white, &mut black] {
        let end = client.expect("end").await;
        assert_eq!(end["reason"], "explosion");
    }
    for (client, won) in [(&mut white, winner_is_white), (&mut black, !winner_is_white)] {
        let rating = client.expect("rating").await;
        assert_eq!((rating["variant"].as_str(), rating["game"].as_str()), (Some("atomic"), Some(game.as_str())));
        let diff = rating["diff"].as_i64().unwrap();
        assert!(if won { diff > 0 } else { diff < 0 }, "{rating}");
        assert_eq!(rating["rating"].as_i64().unwrap(), 1500 + diff);
        assert_eq!(rating["provisional"], true);
    }

    // The gateway serves what the rating service now holds.
    let (status, profile) = http_get(gateway.http, &format!("/api/players/{white_id}")).unwrap();
    assert_eq!(status, 200, "{profile}");
    let profile: serde_json::Value = serde_json::from_str(&profile).unwrap();
    assert_eq!(profile["ratings"][0]["games"], 1);
    let (status, pgn) = http_get(gateway.http, &format!("/api/games/{game}/pgn")).unwrap();
    assert_eq!(status, 200);
    assert!(pgn.contains("[Variant \"Atomic\"]") && pgn.contains("[Event \"Rated atomic game\"]"), "{pgn}");
    let (status, games) = http_get(gateway.http, &format!("/api/players/{black_id}/games")).unwrap();
    assert_eq!(status, 200);
    assert!(games.contains(&game), "{games}");
    let (status, live) = api_game(gateway.http, &game).await;
    assert_eq!((status, live["status"].as_str()), (200, Some("ended")));
    let (status, _) = http_get(gateway.http, "/api/leaderboard/chess").unwrap();
    assert_eq!(status, 404);
}
