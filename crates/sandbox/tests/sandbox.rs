//! What the sandbox promises its users: every gateway is ready when
//! `start` returns and reaches every shard, a token from one gateway is
//! good at the others (one secret), and `stop` drains everything cleanly.
//! Spoken in the protocol's types through the client crate.

use std::time::Duration;

use fogblast_client::protocol::{
    ClientFrame, ColorChoice, Create, GameRef, Hello, Join, Move, Opponent, ServerFrame, Variant,
};
use fogblast_sandbox::Sandbox;

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_made_on_one_gateway_is_played_from_the_other_and_the_sandbox_stops_cleanly() {
    let sandbox = Sandbox::builder().shards(2).gateways(2).embedded().start().await.expect("the sandbox starts");
    let mut white = sandbox.client(0).await.unwrap();
    let welcome = white.hello(Hello { token: None, name: Some("white".into()) }, LIMIT).await.unwrap();
    let mut black = sandbox.client(1).await.unwrap();
    black.hello(Hello { token: None, name: Some("black".into()) }, LIMIT).await.unwrap();

    // The same player again on the other gateway: its token is good there.
    let mut again = sandbox.client(1).await.unwrap();
    let back = again.hello(Hello { token: Some(welcome.token.clone()), name: None }, LIMIT).await.unwrap();
    assert_eq!(back.player, welcome.player);

    let create = Create {
        variant: Variant::Atomic,
        color: ColorChoice::White,
        clock: None,
        opponent: Opponent::Human,
        level: None,
        rated: None,
        chess960: None,
    };
    white.send(ClientFrame::Create(create)).await.unwrap();
    let (game, code) = white
        .wait_typed("created", LIMIT, |f| match f {
            ServerFrame::Created { game, code: Some(code), .. } => Some((game, code)),
            _ => None,
        })
        .await
        .unwrap();
    black.send(ClientFrame::Join(Join { code })).await.unwrap();
    let joined = black
        .wait_typed("joined", LIMIT, |f| match f {
            ServerFrame::Joined { game, .. } => Some(game),
            _ => None,
        })
        .await
        .unwrap();
    assert_eq!(joined, game);

    white.send(ClientFrame::Move(Move { game: game.clone(), uci: "e2e4".into(), ply: 0 })).await.unwrap();
    for player in [&mut white, &mut black] {
        let uci = player
            .wait_typed("the move of ply 0", LIMIT, |f| match f {
                ServerFrame::Move(m) if m.ply == 0 => Some(m.uci),
                _ => None,
            })
            .await
            .unwrap();
        assert_eq!(uci.as_deref(), Some("e2e4"));
    }
    let (status, state): (u16, serde_json::Value) =
        sandbox.http(1).get_json(&format!("/api/games/{game}")).await.unwrap();
    assert_eq!((status, &state["moves"]), (200, &serde_json::json!(["e2e4"])), "{state}");

    black.send(ClientFrame::Resign(GameRef { game: game.clone() })).await.unwrap();
    let reason = white.wait_for("end", LIMIT, |f| f.kind() == "end").await.unwrap().json()["reason"].clone();
    assert_eq!(reason, "resign");

    sandbox.check().await.expect("every service still serves");
    sandbox.stop().await.expect("every service stops cleanly");
}
