//! The public event stream on real NATS: every game's created, started,
//! move and finished events arrive once each, in the game's order, in both
//! encodings; a fog game's events name no square until it has ended; and a
//! shard that takes a game over publishes what the previous owner
//! committed but never published.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use fogblast_bus::{ConsumerConfig, EventBus, NatsBus};
use fogblast_proto::events::game_event::Kind;
use fogblast_proto::events::GameEvent;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{Command, Resign, Status, Variant};
use fogblast_proto::public_events::{filter, Encoding};
use futures::StreamExt;
use prost::Message;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use support::{test_config, Backend, Router, ShardProcess};

/// Every public event of `encoding` on the stream, by game, until the
/// stream has been quiet for a second.
async fn public_events(backend: &Backend, encoding: Encoding) -> BTreeMap<String, Vec<(GameEvent, serde_json::Value)>> {
    let bus = NatsBus::connect(backend.nats_config()).await.expect("nats");
    let name = format!("public-check-{}", encoding.token());
    let config = ConsumerConfig { name, filter: filter(encoding, None), ack_wait: Duration::from_secs(30) };
    let mut deliveries = bus.consume_durable(config).await.expect("a consumer");
    let mut by_game: BTreeMap<String, Vec<(GameEvent, serde_json::Value)>> = BTreeMap::new();
    while let Ok(Some(delivery)) = tokio::time::timeout(Duration::from_secs(1), deliveries.next()).await {
        let delivery = delivery.expect("a delivery");
        let payload = delivery.message().payload.clone();
        let content_type =
            delivery.message().headers.iter().find(|(name, _)| name == "Content-Type").map(|h| h.1.clone());
        let (event, json) = match encoding {
            Encoding::Protobuf => {
                assert_eq!(content_type.as_deref(), Some("application/protobuf"));
                (GameEvent::decode(payload.as_ref()).expect("a GameEvent"), serde_json::Value::Null)
            }
            Encoding::Json => {
                assert_eq!(content_type.as_deref(), Some("application/json"));
                let json: serde_json::Value = serde_json::from_slice(&payload).expect("JSON");
                let event = GameEvent {
                    event_id: json["event_id"].as_str().unwrap().to_owned(),
                    game_id: json["game_id"].as_str().unwrap().to_owned(),
                    version: json["version"].as_u64().unwrap(),
                    ..Default::default()
                };
                (event, json)
            }
        };
        by_game.entry(event.game_id.clone()).or_default().push((event, json));
        delivery.ack().await.expect("ack");
    }
    by_game
}

/// Plays random legal moves in `game` (white `w`, black `b`) until it ends
/// or `plies` were played, then black resigns if it is still on. Returns
/// the moves played.
async fn play_randomly(router: &Router, game: &str, plies: u32, rng: &mut rand::rngs::StdRng) -> Vec<String> {
    let mut played = Vec::new();
    for ply in 0..plies {
        let mover = if ply % 2 == 0 { "w" } else { "b" };
        let state = router.state(game, mover).await;
        if state.status() == Status::Ended {
            return played;
        }
        let uci = state.legal.choose(rng).expect("a legal move").clone();
        router.make_move(game, mover, &uci, ply).await.expect("a legal move is played");
        played.push(uci);
    }
    if router.state(game, "b").await.status() != Status::Ended {
        let resign = Command::new(game, "b", Action::Resign(Resign {}));
        router.execute(resign).await.expect("black resigns");
    }
    played
}

fn kind(event: &GameEvent) -> &'static str {
    event.kind.as_ref().map_or("none", fogblast_proto::public_events::kind_token)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_reaches_the_public_stream_in_order_and_the_fog_names_no_square() {
    let backend = Backend::distributed("public-stream");
    let shard = ShardProcess::start(&backend, "a", test_config()).await;
    let router = Router::new(&backend).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(25);
    let mut games = Vec::new();
    for (i, variant) in
        [Variant::Fog, Variant::Fog, Variant::Fog, Variant::Atomic, Variant::Standard].iter().enumerate()
    {
        let (game, _) = router.start_game(*variant, "w", "b", None).await;
        let played = play_randomly(&router, &game, 30 + 4 * i as u32, &mut rng).await;
        games.push((game, *variant, played));
    }
    let protobuf = public_events(&backend, Encoding::Protobuf).await;
    let json = public_events(&backend, Encoding::Json).await;
    assert_eq!(protobuf.len(), games.len(), "one history per game: {:?}", protobuf.keys());

    for (game, variant, played) in &games {
        let events: Vec<&GameEvent> = protobuf[game].iter().map(|(event, _)| event).collect();
        let kinds: Vec<&str> = events.iter().map(|e| kind(e)).collect();
        // created, started, one event per move, finished; each once.
        let mut expected = vec!["created", "started"];
        expected.extend(std::iter::repeat_n("move", played.len()));
        expected.push("finished");
        assert_eq!(kinds, expected, "{game}");
        assert!(events.windows(2).all(|w| w[0].version <= w[1].version), "in the game's order: {game}");
        let ids: std::collections::BTreeSet<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(ids.len(), events.len(), "no event twice");
        assert!(events.iter().all(|e| e.variant() == *variant));
        let Some(Kind::Finished(finished)) = &events.last().unwrap().kind else { unreachable!() };
        assert_eq!(&finished.moves, played, "the finished event holds every move");
        for (ply, event) in events.iter().filter(|e| kind(e) == "move").enumerate() {
            let Some(Kind::Moved(moved)) = &event.kind else { unreachable!() };
            assert_eq!(moved.ply as usize, ply);
            if *variant == Variant::Fog {
                assert!(
                    moved.uci.is_none() && moved.san.is_none() && moved.fen.is_empty() && moved.exploded.is_empty(),
                    "a fog move before the end names no square: {moved:?}"
                );
            } else {
                assert_eq!(moved.uci.as_deref(), Some(played[ply].as_str()));
                assert!(!moved.fen.is_empty());
            }
        }
        // The JSON subject carries the same events, and a fog move's JSON
        // has no square either.
        let json_ids: Vec<&str> = json[game].iter().map(|(event, _)| event.event_id.as_str()).collect();
        let ids: Vec<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(json_ids, ids);
        for (_, value) in &json[game] {
            if *variant == Variant::Fog && value["kind"] == "move" {
                let moved = value["moved"].as_object().unwrap();
                assert!(
                    ["uci", "san", "exploded"]
                        .iter()
                        .all(|f| moved.get(*f).is_none_or(|v| v.as_array().is_some_and(|a| a.is_empty()))),
                    "{value}"
                );
                assert_eq!(moved.get("fen").and_then(|f| f.as_str()), Some(""), "{value}");
            }
        }
    }
    shard.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_taking_a_game_over_publishes_what_the_previous_owner_did_not() {
    let backend = Backend::distributed("public-takeover");
    // The first owner commits moves but publishes nothing, as if it had
    // died after each commit before publishing.
    let mut silent = test_config();
    silent.settings.public_events = false;
    let first = ShardProcess::start(&backend, "silent", silent).await;
    let router = Router::new(&backend).await;
    let (game, _) = router.start_game(Variant::Atomic, "w", "b", None).await;
    for (ply, uci) in ["e2e4", "e7e5", "g1f3"].iter().enumerate() {
        router.make_move(&game, if ply % 2 == 0 { "w" } else { "b" }, uci, ply as u32).await.unwrap();
    }
    first.kill();
    let second = ShardProcess::start(&backend, "publishing", test_config()).await;
    let router = Router::new(&backend).await;
    support::eventually(Duration::from_secs(10), || async {
        router.owner_addr(&fogblast_proto::ids::GameId::parse(&game).unwrap()).await == Some(second.addr.clone())
    })
    .await;
    router.make_move(&game, "b", "b8c6", 3).await.unwrap();

    let events = public_events(&backend, Encoding::Protobuf).await;
    let kinds: Vec<&str> = events[&game].iter().map(|(event, _)| kind(event)).collect();
    assert_eq!(kinds, ["created", "started", "move", "move", "move", "move"]);
    second.stop().await;
}

/// A game that goes from a shard to another and back: the shard that gets
/// it back once held its queue of public events, but must still publish
/// what the owner in between committed and did not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_getting_a_game_back_publishes_what_the_owner_in_between_did_not() {
    use fogblast_proto::ids::{GameId, ShardId};
    use fogblast_store::{placement, Member};

    let backend = Backend::distributed("public-back");
    let first = ShardProcess::start(&backend, "publishing", test_config()).await;
    let router = Router::new(&backend).await;
    // A game the second shard will own once it is up.
    let member = |id: &str| Member { shard: ShardId::parse(id).unwrap(), addr: id.to_owned(), epoch: 1 };
    let both = [member("publishing"), member("silent")];
    let game = std::iter::repeat_with(|| GameId::random(&mut rand::rng()))
        .find(|game| placement::owner(game, &both).is_some_and(|owner| owner.addr == "silent"))
        .unwrap();
    let created = router
        .create(fogblast_proto::game::CreateGameRequest {
            game_id: game.to_string(),
            player_id: "w".into(),
            player_name: "w".into(),
            variant: Variant::Atomic as i32,
            color: fogblast_proto::game::ColorChoice::ChooseWhite as i32,
            ..Default::default()
        })
        .await
        .unwrap();
    router.join(&created.code, "b").await.unwrap();
    let game = game.to_string();
    router.make_move(&game, "w", "e2e4", 0).await.unwrap();

    // The owner in between commits moves and publishes none of them.
    let mut silent = test_config();
    silent.settings.public_events = false;
    let second = ShardProcess::start(&backend, "silent", silent).await;
    let id = GameId::parse(&game).unwrap();
    support::eventually(Duration::from_secs(10), || async {
        router.owner_addr(&id).await == Some(second.addr.clone())
    })
    .await;
    router.make_move(&game, "b", "e7e5", 1).await.unwrap();
    router.make_move(&game, "w", "g1f3", 2).await.unwrap();
    let silent_addr = second.addr.clone();
    second.kill();
    support::eventually(Duration::from_secs(10), || async { router.owner_addr(&id).await == Some(first.addr.clone()) })
        .await;
    assert_ne!(first.addr, silent_addr);
    router.make_move(&game, "b", "b8c6", 3).await.unwrap();

    let events = public_events(&backend, Encoding::Protobuf).await;
    let moves: Vec<u64> = events[&game]
        .iter()
        .filter_map(|(event, _)| match &event.kind {
            Some(Kind::Moved(moved)) => Some(u64::from(moved.ply)),
            _ => None,
        })
        .collect();
    assert_eq!(moves, [0, 1, 2, 3], "every move once, in order");
    first.stop().await;
}

/// A shard told to publish only JSON stores each event once, on the JSON
/// subjects, and nothing on the protobuf ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_publishing_one_encoding_stores_each_event_once_in_it() {
    let backend = Backend::distributed("public-json-only");
    let mut json_only = test_config();
    json_only.settings.public_event_encodings = vec![Encoding::Json];
    let shard = ShardProcess::start(&backend, "a", json_only).await;
    let router = Router::new(&backend).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let (game, _) = router.start_game(Variant::Atomic, "w", "b", None).await;
    let played = play_randomly(&router, &game, 6, &mut rng).await;

    let json = public_events(&backend, Encoding::Json).await;
    let kinds: Vec<&str> = json[&game].iter().map(|(_, value)| value["kind"].as_str().unwrap()).collect();
    let mut expected = vec!["created", "started"];
    expected.extend(std::iter::repeat_n("move", played.len()));
    expected.push("finished");
    assert_eq!(kinds, expected);
    let protobuf = public_events(&backend, Encoding::Protobuf).await;
    assert!(protobuf.is_empty(), "nothing on the protobuf subjects: {:?}", protobuf.keys());
    shard.stop().await;
}
