//! Junk against real gateways while a real game is being played through
//! them: random text, truncated JSON, fields of the wrong type, numbers out
//! of every range, unknown types, commands for games the sender has no seat
//! in, binary frames, frames before `hello`, and to finish each connection
//! a frame over the size limit or one that is not UTF-8. Every frame a
//! client may send gets exactly one `error` with a code and leaves the
//! connection usable; the frames only abuse sends close it. Afterwards
//! every process still runs and answers `/healthz`, and the game finishes
//! with every move in its record.
//!
//! The junk is random: a failure prints its seed, and `FOGBLAST_E2E_SEED`
//! replays it.

use std::net::SocketAddr;
use std::time::Duration;

use crate::support::{find_line, move_frame, play, start_game, strings, t, Client, Cluster};
use fogblast_client::tungstenite::protocol::frame::coding::{Data, OpCode};
use fogblast_client::tungstenite::protocol::frame::Frame;
use fogblast_client::tungstenite::Message;
use fogblast_rules::{Variant, WinReason};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// One junk frame and the error codes it may get.
#[derive(Clone, Debug)]
struct Junk {
    message: Message,
    codes: &'static [&'static str],
}

const BAD: &[&str] = &["bad_request"];

/// Every type a client may send.
const KNOWN: &[&str] = &[
    "hello",
    "create",
    "join",
    "watch",
    "resume",
    "move",
    "resign",
    "abort",
    "draw",
    "takeback",
    "claim_victory",
    "rematch",
    "seek",
    "cancel_seek",
    "lobby",
    "ping",
];

fn text(text: impl Into<String>, codes: &'static [&'static str]) -> Junk {
    Junk { message: Message::Text(text.into().into()), codes }
}

fn random_string(rng: &mut StdRng, len: usize) -> String {
    (0..len)
        .map(|_| match rng.random_range(0..4) {
            0 => char::from(rng.random_range(0u8..0x80)),
            1 => ['{', '}', '"', ':', ',', '[', ']', '\\', 't'][rng.random_range(0..9)],
            2 => char::from_u32(rng.random_range(0x80..0x2_0000)).unwrap_or('\u{fffd}'),
            _ => char::from(rng.random_range(b'a'..=b'z')),
        })
        .collect()
}

/// Well-formed frames to cut short.
fn templates(game: &str) -> Vec<Value> {
    vec![
        json!({ "t": "move", "game": game, "uci": "e2e4", "ply": 0, "id": 1 }),
        json!({ "t": "create", "variant": "fog", "color": "random", "clock": { "initial_ms": 60000, "increment_ms": 0 }, "opponent": "human" }),
        json!({ "t": "resume", "game": game, "v": 3 }),
        json!({ "t": "hello", "token": "v1.abc.def", "name": "x" }),
        json!({ "t": "draw", "game": game, "action": "offer" }),
    ]
}

/// A junk frame for a client that said hello; `game` is the game being
/// played, in which the client has no seat.
fn junk(rng: &mut StdRng, game: &str) -> Junk {
    match rng.random_range(0..10) {
        // Random text that is not a JSON object.
        0 => loop {
            let len = rng.random_range(0..300);
            let s = random_string(rng, len);
            if !matches!(serde_json::from_str::<Value>(&s), Ok(Value::Object(_))) {
                return text(s, BAD);
            }
        },
        // Truncated JSON.
        1 => {
            let templates = templates(game);
            let full = templates[rng.random_range(0..templates.len())].to_string();
            let cut = rng.random_range(1..full.len());
            text(&full[..cut], BAD)
        }
        // Fields of the wrong type.
        2 => {
            let cases = [
                json!({ "t": "move", "game": game, "uci": 7, "ply": 0 }),
                json!({ "t": "move", "game": game, "uci": "e2e4", "ply": "0" }),
                json!({ "t": "move", "game": game, "uci": "e2e4", "ply": -1 }),
                json!({ "t": "move", "game": game, "uci": "e2e4", "ply": 1.5 }),
                json!({ "t": "move", "game": [game], "uci": "e2e4", "ply": 0 }),
                json!({ "t": "move", "game": game, "uci": "e2e4" }),
                json!({ "t": "resume", "game": game, "v": "7" }),
                json!({ "t": "watch", "game": { "id": game } }),
                json!({ "t": "hello", "token": 5 }),
                json!({ "t": "join", "code": null }),
                json!({ "t": "create", "variant": 1, "color": "white", "clock": null, "opponent": "human" }),
                json!({ "t": "create", "variant": "atomic", "color": "white", "clock": "fast", "opponent": "human" }),
                json!({ "t": "draw", "game": game, "action": false }),
                json!({ "t": 7 }),
                json!({ "t": null }),
                json!({ "t": ["ping"] }),
                json!({ "type": "ping" }),
                json!({ "t": "ping", "id": { "a": 1 } }),
                json!({ "t": "ping", "id": "x".repeat(100) }),
                json!([{ "t": "ping" }]),
                json!("ping"),
                json!(null),
            ];
            text(cases[rng.random_range(0..cases.len())].to_string(), BAD)
        }
        // Numbers out of every range.
        3 => {
            let cases = [
                format!(r#"{{"t":"move","game":"{game}","uci":"e2e4","ply":1e400}}"#),
                format!(r#"{{"t":"move","game":"{game}","uci":"e2e4","ply":4294967296}}"#),
                format!(r#"{{"t":"move","game":"{game}","uci":"e2e4","ply":18446744073709551616}}"#),
                format!(r#"{{"t":"resume","game":"{game}","v":18446744073709551616}}"#),
                format!(r#"{{"t":"resume","game":"{game}","v":-9223372036854775809}}"#),
                format!(r#"{{"t":"resume","game":"{game}","v":18446744073709551615}}"#),
                r#"{"t":"ping","id":1e400}"#.to_owned(),
                format!(r#"{{"t":"ping","id":{}}}"#, "9".repeat(3000)),
                r#"{"t":"create","variant":"atomic","color":"white","clock":{"initial_ms":99999999999,"increment_ms":0},"opponent":"human"}"#.to_owned(),
                format!("{}{}", "[".repeat(1500), "]".repeat(1500)),
            ];
            if rng.random_bool(0.1) {
                // Well formed, so it reaches the shard, which refuses the
                // clock; unless this address used up its new games.
                let create = r#"{"t":"create","variant":"atomic","color":"white","clock":{"initial_ms":0,"increment_ms":4294967295},"opponent":"human"}"#;
                return text(create, &["bad_request", "rate_limited"]);
            }
            text(cases[rng.random_range(0..cases.len())].clone(), BAD)
        }
        // Unknown types.
        4 => {
            let len = rng.random_range(1..40);
            let kind = random_string(rng, len);
            if KNOWN.contains(&kind.as_str()) {
                return text(json!({ "t": "fly" }).to_string(), &["unknown_type"]);
            }
            text(json!({ "t": kind, "game": game }).to_string(), &["unknown_type"])
        }
        // Moves and commands for a game without a seat in it.
        5 => {
            let file = |rng: &mut StdRng| char::from(rng.random_range(b'a'..=b'h'));
            let rank = |rng: &mut StdRng| char::from(rng.random_range(b'1'..=b'8'));
            let uci = format!("{}{}{}{}", file(rng), rank(rng), file(rng), rank(rng));
            let ply = rng.random_range(0..200);
            let cases = [
                text(move_frame(game, &uci, ply).to_string(), &["not_your_game"]),
                text(json!({ "t": "resign", "game": game }).to_string(), &["not_your_game"]),
                text(json!({ "t": "abort", "game": game }).to_string(), &["not_your_game"]),
                text(json!({ "t": "draw", "game": game, "action": "offer" }).to_string(), &["not_your_game"]),
                text(json!({ "t": "takeback", "game": game, "action": "request" }).to_string(), &["not_your_game"]),
                text(json!({ "t": "claim_victory", "game": game }).to_string(), &["not_your_game"]),
                text(json!({ "t": "rematch", "game": game }).to_string(), &["not_your_game", "conflict"]),
            ];
            cases[rng.random_range(0..cases.len())].clone()
        }
        // Games that do not exist, or ids that cannot be.
        6 => {
            let cases = [
                text(move_frame("nosuchgame0000", "e2e4", 0).to_string(), &["not_found"]),
                text(json!({ "t": "watch", "game": "nosuchgame0000" }).to_string(), &["not_found"]),
                text(json!({ "t": "resume", "game": "nosuchgame0000", "v": 0 }).to_string(), &["not_found"]),
                text(json!({ "t": "join", "code": "ZZZZZZZZ" }).to_string(), &["not_found"]),
                text(move_frame("../../etc/passwd", "e2e4", 0).to_string(), BAD),
                text(move_frame("", "e2e4", 0).to_string(), BAD),
                text(move_frame(&"g".repeat(300), "e2e4", 0).to_string(), BAD),
                text(move_frame(game, "e2e4e5e6", 0).to_string(), BAD),
                text(json!({ "t": "join", "code": "" }).to_string(), BAD),
                text(json!({ "t": "join", "code": "C".repeat(40) }).to_string(), BAD),
            ];
            cases[rng.random_range(0..cases.len())].clone()
        }
        // Binary frames.
        7 => {
            let len = rng.random_range(0..200);
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            Junk { message: Message::Binary(data.into()), codes: BAD }
        }
        // Frames well formed but wrong for this server or this moment.
        8 => {
            let cases = [
                text(json!({ "t": "hello" }).to_string(), BAD),
                text(json!({ "t": "seek", "variant": "atomic", "clock": null }).to_string(), &["unavailable"]),
                text(json!({ "t": "lobby" }).to_string(), &["unavailable"]),
                text(json!({ "t": "cancel_seek" }).to_string(), &["unavailable"]),
                text(json!({ "t": "draw", "game": game, "action": "maybe" }).to_string(), BAD),
                text(json!({ "t": "create", "variant": "crazyhouse", "color": "white", "clock": null, "opponent": "human" }).to_string(), BAD),
                text(json!({ "t": "create", "variant": "fog", "color": "green", "clock": null, "opponent": "human" }).to_string(), BAD),
                text(json!({ "t": "resume", "game": game, "v": 1_000_000 }).to_string(), BAD),
            ];
            cases[rng.random_range(0..cases.len())].clone()
        }
        // Empty and whitespace.
        _ => text([" ", "", "\n\t", "{}", "{\"t\":\"\"}"][rng.random_range(0..5)], &["bad_request", "unknown_type"]),
    }
}

/// Before `hello`: junk is refused as junk, commands as unauthorized.
fn junk_before_hello(rng: &mut StdRng, game: &str) -> Junk {
    if rng.random_bool(0.5) {
        let cases = [
            move_frame(game, "e2e4", 0),
            json!({ "t": "watch", "game": game }),
            json!({ "t": "resign", "game": game }),
            json!({ "t": "create", "variant": "atomic", "color": "white", "clock": null, "opponent": "human" }),
            json!({ "t": "join", "code": "ABCDEFGH" }),
        ];
        return text(cases[rng.random_range(0..cases.len())].to_string(), &["unauthorized"]);
    }
    loop {
        let junk = junk(rng, game);
        // Not a hello, which would make this a player's connection.
        if !matches!(&junk.message, Message::Text(s) if s.contains("hello")) {
            // A frame that parses is refused as unauthorized first.
            return Junk { codes: &["bad_request", "unknown_type", "unauthorized"], ..junk };
        }
    }
}

/// The frame that ends a connection, and the close code it must get: over
/// the size limit (1009, "message too big"), or a text frame that is not
/// UTF-8, which the WebSocket layer refuses (closed, with or without a code).
fn abuse(rng: &mut StdRng) -> (Message, Option<u16>) {
    if rng.random_bool(0.7) {
        let pad = "x".repeat(rng.random_range(4_100..20_000));
        (Message::Text(json!({ "t": "ping", "pad": pad }).to_string().into()), Some(1009))
    } else {
        (Message::Frame(Frame::message(vec![b'{', 0xff, 0xfe, b'}'], OpCode::Data(Data::Text), true)), None)
    }
}

/// One connection's worth of junk, each frame followed by a ping so that
/// its answer is known to be complete; then the frame that closes it.
async fn fuzz_connection(gateway: SocketAddr, game: String, seed: u64, hello: bool) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let name = format!("fuzzer-{seed:x}");
    let mut client =
        if hello { Client::join(&name, gateway, None).await } else { Client::connect(&name, gateway).await };
    let frames = rng.random_range(25..40);
    for i in 0..frames {
        let junk = if hello { junk(&mut rng, &game) } else { junk_before_hello(&mut rng, &game) };
        assert!(client.send_message(junk.message.clone()).await, "seed {seed:x}: could not send {junk:?}");
        let answers = client.sync(&format!("sync-{i}")).await;
        let errors: Vec<&Value> = answers.iter().filter(|f| t(f) == "error").collect();
        assert_eq!(errors.len(), 1, "seed {seed:x}: one error for {junk:?}, got {answers:?}");
        let code = errors[0]["code"].as_str().unwrap_or("");
        assert!(junk.codes.contains(&code), "seed {seed:x}: {junk:?} got {}", errors[0]);
        assert!(errors[0]["message"].as_str().is_some_and(|m| !m.is_empty()), "seed {seed:x}: {}", errors[0]);
    }
    // A burst, answered one error each, and the connection still usable.
    let burst = rng.random_range(5..15);
    let junks: Vec<Junk> =
        (0..burst).map(|_| if hello { junk(&mut rng, &game) } else { junk_before_hello(&mut rng, &game) }).collect();
    for junk in &junks {
        assert!(client.send_message(junk.message.clone()).await);
    }
    let answers = client.sync("after-burst").await;
    assert_eq!(answers.iter().filter(|f| t(f) == "error").count(), burst, "seed {seed:x}: {junks:?} got {answers:?}");
    let (abuse, code) = abuse(&mut rng);
    let _ = client.send_message(abuse).await;
    let closed = client.wait_closed(Duration::from_secs(5)).await;
    match code {
        Some(code) => assert_eq!(closed.code(), Some(code), "seed {seed:x}: {closed:?}"),
        None => assert!(matches!(closed.code(), None | Some(1002 | 1007 | 1008)), "seed {seed:x}: {closed:?}"),
    }
    frames + burst
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_frames_leave_every_process_and_the_game_intact() {
    let seed = std::env::var("FOGBLAST_E2E_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(&s, 16).ok())
        .unwrap_or_else(rand::random);
    eprintln!("fuzz seed {seed:x} (FOGBLAST_E2E_SEED={seed:x} replays it)");
    let cluster = Cluster::start("fuzz", 2, 2);
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 24, 80);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, 4).await;

    // The fuzzers run while the game goes on.
    let mut fuzzers = Vec::new();
    for i in 0..6u64 {
        let gateway = cluster.gateway(i as usize % 2);
        fuzzers.push(tokio::spawn(fuzz_connection(gateway, game.clone(), seed.wrapping_add(i), i != 5)));
    }
    let last = line.moves.len() - 1;
    let game_for_play = game.clone();
    let moves = line.moves.clone();
    let player = tokio::spawn(async move {
        for ply in 4..last {
            play(&mut white, &mut black, &game_for_play, &moves, ply, ply + 1).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (white, black)
    });
    let mut sent = 0;
    for fuzzer in fuzzers {
        sent += fuzzer.await.unwrap_or_else(|e| panic!("seed {seed:x}: a fuzzer failed: {e}"));
    }
    let (mut white, mut black) = player.await.unwrap_or_else(|e| panic!("seed {seed:x}: the game failed: {e}"));
    assert!(sent > 100, "{sent} junk frames");

    cluster.assert_healthy();
    play(&mut white, &mut black, &game, &line.moves, last, line.moves.len()).await;
    for player in [&mut white, &mut black] {
        let end = player.expect("end").await;
        assert_eq!(end["reason"], "explosion", "{end}");
        assert_eq!(strings(&end["moves"]), line.moves, "seed {seed:x}: every move in the record");
        let plies: Vec<u64> = player.moves().iter().map(|f| f["ply"].as_u64().unwrap()).collect();
        assert_eq!(plies, (0..line.moves.len() as u64).collect::<Vec<_>>(), "{}: each move once", player.name);
        let kinds = ["welcome", "created", "state", "joined", "seated", "move", "end"];
        let odd: Vec<&Value> = player.log.iter().filter(|f| !kinds.contains(&t(f))).collect();
        assert!(odd.is_empty(), "seed {seed:x}: {} got frames it should not: {odd:?}", player.name);
    }
    cluster.assert_healthy();
}
