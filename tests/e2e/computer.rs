//! A game against the computer across every tier, in an in-process
//! sandbox: a player on a gateway, game shards whose computer seats ask an
//! engine pool for their moves over gRPC. The computer must answer each move
//! with a legal one, grant a takeback at once, and the game must end when
//! the player resigns (or earlier, by the rules).

use crate::support::{move_frame, t, Client};
use fogblast_rules::{Fen, Game, Position, Variant};
use fogblast_sandbox::Sandbox;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

#[tokio::test]
async fn the_computer_answers_every_move_through_the_engine_pool() {
    let cluster =
        Sandbox::builder().engines(1).shards(2).gateways(1).embedded().start().await.expect("the sandbox starts");
    let mut human = Client::join("human", cluster.gateway(0), None).await;
    human
        .send(json!({
            "t": "create", "variant": "atomic", "color": "white", "clock": null,
            "opponent": "computer", "level": "easy",
        }))
        .await;
    let created = human.expect("created").await;
    let id = created["game"].as_str().unwrap().to_owned();
    let state = human.expect("state").await;
    assert_eq!(state["status"], "playing", "{state}");
    assert_eq!(
        (state["players"]["black"]["computer"].as_bool(), state["players"]["black"]["level"].as_str()),
        (Some(true), Some("easy"))
    );

    let mut game = Game::new(Position::new(Variant::Atomic));
    let mut rng = StdRng::seed_from_u64(0x0c0d);
    let mut took_back = false;
    let ended = loop {
        let ply = game.ply();
        if ply >= 16 {
            break None;
        }
        if ply == 6 && !took_back {
            // Against the computer a takeback is granted at once: its
            // reply and the player's last move go.
            took_back = true;
            human.send(json!({ "t": "takeback", "game": id, "action": "request" })).await;
            let request = human.expect("takeback").await;
            assert_eq!((request["action"].as_str(), request["by"].as_str()), (Some("request"), Some("white")));
            let granted = human.expect("takeback").await;
            assert_eq!((granted["action"].as_str(), granted["by"].as_str()), (Some("accept"), Some("black")));
            let state = human.expect("state").await;
            game.undo(2);
            assert_eq!(state["moves"].as_array().map(Vec::len), Some(4), "{state}");
            assert_eq!(state["fen"], Fen::from_position(game.position()).to_string().as_str(), "{state}");
            continue;
        }
        // The player's move: any legal one.
        let moves = game.position().legal_moves();
        let choice = moves[rng.random_range(0..moves.len())];
        let uci = choice.to_uci(fogblast_rules::CastlingMode::Standard).to_string();
        human.send(move_frame(&id, &uci, ply)).await;
        assert_eq!(human.expect_move(ply).await["uci"], uci.as_str());
        game.play_uci(&uci).unwrap();
        if game.outcome().is_some() {
            break Some(human.expect("end").await);
        }
        // The computer's reply: legal, and the position the frame shows.
        let reply = human.expect_move(ply + 1).await;
        let uci = reply["uci"].as_str().expect("the computer's move is shown");
        game.play_uci(uci).unwrap_or_else(|e| panic!("the computer played {uci}, not legal here: {e:?}"));
        assert_eq!(reply["fen"], Fen::from_position(game.position()).to_string().as_str(), "{reply}");
        if game.outcome().is_some() {
            break Some(human.expect("end").await);
        }
    };
    let end = match ended {
        Some(end) => end,
        None => {
            human.send(json!({ "t": "resign", "game": id })).await;
            let end = human.expect("end").await;
            assert_eq!((end["reason"].as_str(), end["result"].as_str()), (Some("resign"), Some("0-1")), "{end}");
            end
        }
    };
    let played: Vec<String> =
        game.moves().iter().map(|m| m.to_uci(fogblast_rules::CastlingMode::Standard).to_string()).collect();
    assert_eq!(crate::support::strings(&end["moves"]), played, "{end}");
    assert!(human.log.iter().all(|f| t(f) != "error"), "{:?}", human.log);
    cluster.check().await.expect("every service still serves");
}
