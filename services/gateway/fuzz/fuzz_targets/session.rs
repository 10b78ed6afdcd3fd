//! Any sequence of frames on one socket of a real gateway (an in-process
//! sandbox: a game shard and a gateway on loopback): text that is not a
//! frame, frames of every type with fields chosen by the fuzzer (game ids
//! the socket made and random ones, moves, offers, tokens), binary frames,
//! pings and pongs. The gateway never panics or stops, every close it sends
//! has a documented code, and its memory is reported as the run goes, to
//! see it does not grow with the number of sockets served.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use fogblast_client::tungstenite::Message;
use fogblast_client::{Closed, Connection, Error};
use fogblast_protocol::ClientFrame;
use fogblast_sandbox::Sandbox;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

struct World {
    runtime: tokio::runtime::Runtime,
    sandbox: Sandbox,
}

static WORLD: LazyLock<World> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let sandbox = runtime.block_on(Sandbox::builder().shards(1).gateways(1).embedded().start()).unwrap();
    World { runtime, sandbox }
});

static RUNS: AtomicU64 = AtomicU64::new(0);

#[derive(Arbitrary, Debug)]
enum Frame {
    Text(String),
    Known { kind: u8, game: u8, text: String, number: u32, choice: u8 },
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
}

fn known(kind: u8, game: u8, text: &str, number: u32, choice: u8, games: &[String]) -> String {
    let pick = |options: &[&str]| options[choice as usize % options.len()].to_owned();
    let game = match games.get(game as usize % (games.len() + 1)) {
        Some(game) => game.clone(),
        None => text.chars().take(16).collect(),
    };
    let frame = json!({
        "t": ClientFrame::KINDS[kind as usize % ClientFrame::KINDS.len()],
        "id": number,
        "game": game,
        "uci": text.chars().take(6).collect::<String>(),
        "ply": number % 8,
        "v": number % 16,
        "action": pick(&["offer", "accept", "decline", "request", "x"]),
        "variant": pick(&["atomic", "standard", "fog", "chess"]),
        "color": pick(&["white", "black", "random"]),
        "opponent": pick(&["human", "computer"]),
        "level": pick(&["easy", "medium", "hard"]),
        "clock": if choice % 2 == 0 { Value::Null } else { json!({ "initial_ms": number % 4_000_000, "increment_ms": 0 }) },
        "code": text.to_uppercase(),
        "token": text,
        "name": text.chars().take(40).collect::<String>(),
    });
    frame.to_string()
}

/// Reads until the socket is quiet for a moment or closed; the games the
/// gateway said the socket created, and the close if there was one.
async fn read_all(conn: &mut Connection, games: &mut Vec<String>) -> Option<Closed> {
    loop {
        match tokio::time::timeout(Duration::from_millis(15), conn.recv()).await {
            Err(_) => return None,
            Ok(Ok(text)) => {
                let frame: Value = serde_json::from_str(text.as_str()).expect("the gateway sends JSON");
                if frame["t"] == "created" {
                    games.extend(frame["game"].as_str().map(str::to_owned));
                }
            }
            Ok(Err(Error::Closed(closed))) => return Some(closed),
            Ok(Err(_)) => return None,
        }
    }
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fuzz_target!(|frames: Vec<Frame>| {
    let world = &*WORLD;
    world.runtime.block_on(async {
        let Ok(mut conn) = Connection::connect(&world.sandbox.ws_url(0)).await else { return };
        let mut games = Vec::new();
        for frame in frames.iter().take(64) {
            let message = match frame {
                Frame::Text(text) => Message::Text(text.clone().into()),
                Frame::Known { kind, game, text, number, choice } => {
                    Message::Text(known(*kind, *game, text, *number, *choice, &games).into())
                }
                Frame::Binary(bytes) => Message::Binary(bytes.clone().into()),
                Frame::Ping(bytes) => Message::Ping(bytes.iter().copied().take(125).collect::<Vec<u8>>().into()),
                Frame::Pong(bytes) => Message::Pong(bytes.iter().copied().take(125).collect::<Vec<u8>>().into()),
            };
            if conn.send_message(message).await.is_err() {
                break;
            }
            if let Some(closed) = read_all(&mut conn, &mut games).await {
                assert!(matches!(closed.code(), None | Some(1000 | 1001 | 1008 | 1009 | 1012)), "{closed:?}");
                break;
            }
        }
        conn.close(Duration::from_millis(100)).await;
        let runs = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
        if runs % 500 == 0 {
            world.sandbox.check().await.expect("every service of the sandbox runs and answers");
            eprintln!("session fuzz: {runs} sockets served, resident {} KiB", resident_kib());
        }
    });
});
