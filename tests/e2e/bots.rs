//! The Bot and Board API driven by a client nobody here wrote: berserk,
//! lichess's Python client library, against `fogblast up`. Two bots
//! challenge each other (one declines, one accepts) and play an atomic
//! game to its end, then seek and are paired; a bot plays the computer in fog of war and never sees
//! a square it may not. The bots are `tests/python/bots/play.py`.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::events::run_for;
use crate::support::{Cluster, Proc};

fn bots(logs: &Proc, mode: &str, args: &[String]) -> Value {
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/bots/play.py");
    let mut command = Command::new(python);
    command.arg(script).arg(mode).args(args);
    let output = run_for(&mut command, Duration::from_secs(300));
    assert!(output.status.success(), "the bots failed: {}\n{}", String::from_utf8_lossy(&output.stderr), logs.logs());
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    serde_json::from_str(printed.lines().last().expect("a summary")).expect(&printed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn berserk_bots_challenge_each_other_and_play_atomic_to_the_end() {
    // Bots play through requests, one a move: the address's API budget
    // (set low here) is not theirs, so three bots on one address play on.
    let up = Proc::up_with("bots-duel", &["--http-requests-per-ip-minute", "20"]);
    let seen = bots(&up, "duel", &[format!("http://{}", up.http)]);
    assert_eq!(seen["game"], seen["carol_game"], "both bots were told of one game: {seen}");
    assert_eq!(seen["colors"], serde_json::json!(["black", "white"]), "{seen}");
    assert_eq!(seen["challenge_variant"], "atomic");
    assert_eq!((seen["out_direction"].as_str(), seen["in_direction"].as_str()), (Some("out"), Some("in")), "{seen}");
    assert_eq!(seen["full_variant"], "atomic");
    assert_eq!(seen["full_clock"], serde_json::json!({ "initial": 300_000, "increment": 2000 }));
    let status = seen["final_status"].as_str().unwrap();
    assert_ne!(status, "started", "the game's stream ended at its end: {seen}");
    assert_eq!(seen["finish_status"].as_str(), Some(status), "gameFinish says how it ended: {seen}");
    assert!(seen["plies"].as_u64().unwrap() > 0, "{seen}");
    assert_eq!(seen["illegal_status"], 400, "a move in a finished game: {seen}");
    assert!(seen["illegal_error"].as_str().is_some_and(|e| !e.is_empty()), "with lichess's error JSON: {seen}");
    assert_eq!(seen["forged_status"], 401, "{seen}");
    let paired = seen["paired_games"].as_array().unwrap();
    assert!(paired.len() == 2 && paired[0] == paired[1] && paired[0] != seen["game"], "one paired game: {seen}");
    assert_eq!(seen["seeks_open"], serde_json::json!([false, false]), "a paired seek's answer ends: {seen}");
    up.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_berserk_bot_plays_the_computer_in_fog_and_sees_only_its_view() {
    let up = Proc::up("bots-fog");
    let seen = bots(&up, "fog", &[format!("http://{}", up.http)]);
    assert_eq!(seen["variant"], "fogOfWar");
    assert_eq!(seen["opponent_ai"], 1);
    assert!(seen["states"].as_u64().unwrap() > 2, "{seen}");
    assert!(seen["hidden_moves_seen"].as_u64().unwrap() > 0, "the computer's moves were hidden: {seen}");
    assert_eq!(seen["leaks"], serde_json::json!([]), "no hidden piece or move reached the bot: {seen}");
    assert_ne!(seen["final_status"], "started", "{seen}");
    up.terminate();
}

/// What lichess tells a bot as its event stream opens: a challenge made
/// before, and a game in progress when it reconnects. Chat reaches the
/// opponent's game stream; the token test, user status and the playing
/// list answer as lichess-bot reads them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_connects_late_hears_its_challenge_and_its_game_and_chats() {
    let up = Proc::up("bots-late");
    let seen = bots(&up, "late", &[format!("http://{}", up.http)]);
    let dave = seen["dave"].as_str().unwrap();
    assert_eq!(seen["told_direction"], "in", "{seen}");
    assert_eq!(seen["online"][dave], true, "{seen}");
    assert_eq!(seen["online"]["nosuchplayer1"], false, "{seen}");
    assert_eq!(seen["playing"], serde_json::json!([seen["game"]]), "{seen}");
    assert!(seen["resumed_color"].is_string(), "{seen}");
    let chat = seen["chat"].as_array().unwrap();
    let lines: Vec<(&str, &str)> =
        chat.iter().map(|l| (l["room"].as_str().unwrap(), l["text"].as_str().unwrap())).collect();
    assert!(lines.contains(&("player", "good luck")) && lines.contains(&("spectator", "hello watchers")), "{seen}");
    assert_eq!(seen["too_long_status"], 400, "{seen}");
    let tested: Vec<&Value> = seen["token_test"].as_object().unwrap().values().collect();
    assert!(tested.iter().any(|t| t.is_null()), "a forged token is null: {seen}");
    assert!(tested.iter().any(|t| t["userId"] == dave && t["scopes"].as_str().unwrap().contains("bot:play")), "{seen}");
    assert_eq!(seen["finish_status"], "resign", "{seen}");
    up.terminate();
}

/// The fog-of-war bot example (`examples/fog_bot.py`) plays the computer to
/// the end from its observations alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fog_bot_example_plays_the_computer_to_the_end() {
    let up = Proc::up("bots-fog-example");
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/fog_bot.py");
    let mut command = Command::new(python);
    command.arg(script).args(["--url", &format!("http://{}", up.http), "--play-computer", "1"]);
    let output = run_for(&mut command, Duration::from_secs(300));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the example failed: {stderr}\n{}", up.logs());
    assert!(!stderr.contains("move refused"), "every move it chose was legal: {stderr}");
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    let seen: Value = serde_json::from_str(printed.lines().last().expect("a summary")).expect(&printed);
    let status = seen["status"].as_str().unwrap_or_default();
    assert!(!status.is_empty() && status != "started", "the game ended: {seen}");
    assert!(seen["plies"].as_u64().unwrap() > 0, "{seen}");
    up.terminate();
}

/// On the distributed path: the challenger on one gateway, the challenged
/// bots on another, the challenges and their answers over NATS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_crosses_gateways_over_nats() {
    let cluster = Cluster::start("bots-cluster", 1, 2);
    let urls = [0, 1].map(|i| format!("http://{}", cluster.gateway(i)));
    let seen = bots(&cluster.gateways[1], "duel", &[urls[0].clone(), urls[1].clone(), "--no-seek".to_owned()]);
    assert_eq!(seen["game"], seen["carol_game"], "{seen}");
    assert_eq!((seen["out_direction"].as_str(), seen["in_direction"].as_str()), (Some("out"), Some("in")), "{seen}");
    assert_ne!(seen["final_status"], "started", "{seen}");
    assert_eq!(seen["finish_status"], seen["final_status"], "{seen}");
}
