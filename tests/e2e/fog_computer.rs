//! A fog-of-war game against the computer across every tier, as real
//! processes: a player on a gateway, game shards whose computer seat asks an
//! engine pool (`fogblast engine`) for its moves from its own observations.
//! The player never sees the computer's moves while the game runs; the game
//! is played to its end, and the moves shown then replay by the rules.

use crate::support::{move_frame, t, Client, Cluster};
use fogblast_rules::{Game, Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

#[tokio::test]
async fn the_computer_plays_fog_of_war_to_the_end_through_the_engine_pool() {
    let cluster = Cluster::start_with_engines("fog-computer", 1, 2, 1);
    let mut human = Client::join("human", cluster.gateway(0), None).await;
    human
        .send(json!({
            "t": "create", "variant": "fog", "color": "white", "clock": null,
            "opponent": "computer", "level": "hard",
        }))
        .await;
    let created = human.expect("created").await;
    let id = created["game"].as_str().unwrap().to_owned();
    let state = human.expect("state").await;
    assert_eq!(state["status"], "playing", "{state}");
    assert_eq!(state["players"]["black"]["computer"].as_bool(), Some(true), "{state}");

    let mut rng = StdRng::seed_from_u64(0xf09);
    let mut legal = crate::support::strings(&state["legal"]);
    let mut ply = 0;
    let end = loop {
        assert!(ply < 300, "the game did not end");
        assert!(!legal.is_empty(), "the player has moves at ply {ply}");
        let uci = legal[rng.random_range(0..legal.len())].clone();
        human.send(move_frame(&id, &uci, ply)).await;
        let mine =
            human.expect_where("our move or the end", |f| (t(f) == "move" && f["ply"] == ply) || t(f) == "end").await;
        if t(&mine) == "end" {
            break mine;
        }
        assert_eq!(mine["uci"], uci.as_str());
        let reply = human
            .expect_where("the reply or the end", |f| (t(f) == "move" && f["ply"] == ply + 1) || t(f) == "end")
            .await;
        if t(&reply) == "end" {
            break reply;
        }
        assert!(reply.get("uci").is_none_or(|u| u.is_null()), "the computer's move is hidden: {reply}");
        legal = crate::support::strings(&reply["legal"]);
        if legal.is_empty() {
            // The computer's move ended the game (a king taken, or a draw).
            break human.expect("end").await;
        }
        ply += 2;
    };
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&end["result"].as_str().unwrap_or("")), "{end}");
    // The fog lifts: every move is shown, and they replay by the rules to
    // the game's end.
    let moves = crate::support::strings(&end["moves"]);
    assert!(moves.len() >= 2, "{end}");
    println!("fog game against the computer: {} plies, {} by {}", moves.len(), end["result"], end["reason"]);
    let mut game = Game::new(Position::new(Variant::Fog));
    for m in &moves {
        game.play_uci(m).unwrap_or_else(|e| panic!("{m} is not legal here: {e:?}"));
    }
    assert!(game.outcome().is_some() || end["reason"] == "resign", "{end}");
    assert!(human.log.iter().all(|f| t(f) != "error"), "{:?}", human.log);
    cluster.assert_healthy();
}
