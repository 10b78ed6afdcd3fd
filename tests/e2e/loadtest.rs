//! The load tests at a small size. `fogblast-tools loadtest --spawn`: it starts its own
//! shard and gateway, plays, holds idle sockets, and verifies every game
//! it played by reading it back over HTTP from one address, so the
//! gateways it starts must allow that many reads.

use std::process::Command;

const TOOLS: &str = env!("CARGO_BIN_EXE_fogblast-tools");

#[test]
fn a_small_spawned_load_test_verifies_every_game_and_reports_memory_per_socket() {
    let output = Command::new(TOOLS)
        .args([
            "loadtest",
            "--spawn",
            "--spawn-shards=1",
            "--spawn-gateways=1",
            "--pairs=40",
            // Short games, so far more are read back than a player's budget of API reads.
            "--moves-per-game=2",
            "--think-ms=0",
            "--idle=50",
            "--duration-s=12",
            "--report-every-s=0",
        ])
        .output()
        .expect("fogblast-tools loadtest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "loadtest failed:\n{stdout}\n{stderr}");
    let verified = stdout.lines().find(|l| l.starts_with("verified:")).expect("a verified line");
    let games: u64 = verified.split_whitespace().nth(3).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(games > 260, "enough games to pass the per-address budget of reads: {verified}");
    assert!(verified.contains("0 mismatched, 0 unreadable"), "{verified}");
    let idle = stdout.lines().find(|l| l.starts_with("idle connections:")).expect("an idle line");
    assert!(idle.starts_with("idle connections: 50 of 50 held"), "{idle}");
    let memory = stdout.lines().find(|l| l.starts_with("gateway memory: gateway-0")).expect("a memory line");
    assert!(memory.contains("over 130 sockets"), "{memory}");
}

/// `fogblast-tools arena-loadtest` at a small size: more players than one
/// page of results (200), so the results must list every player for their
/// scores to be checked against the archive, and an arena made with a
/// lichess `startDate` in ms.
#[test]
fn a_small_arena_load_test_checks_every_game_and_score_against_the_archive() {
    let output = Command::new(TOOLS)
        .args([
            "arena-loadtest",
            "--players=210",
            "--minutes=1",
            "--join-window-s=30",
            "--think-ms=200-600",
            "--max-plies=60",
            "--berserk-share=0.2",
            "--shards=2",
            "--gateways=2",
            "--matchmakers=2",
        ])
        .output()
        .expect("fogblast-tools arena-loadtest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "arena-loadtest failed:\n{stdout}\n{stderr}");
    let line = |prefix: &str| stdout.lines().find(|l| l.starts_with(prefix)).unwrap_or_default().to_owned();
    assert_eq!(line("players:"), "players: 210 of 210 entered", "{stdout}");
    let verified = line("verified:");
    let games: u64 = verified.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(games >= 105, "every player was paired at least once: {stdout}");
    assert!(verified.ends_with("0 missing from the archive, 0 mismatched, 0 untold"), "{stdout}");
    assert_eq!(
        line("scores:"),
        "scores: 210 players recomputed from the archive: 0 differ, 0 missing from the results, 0 in two games at once",
        "{stdout}"
    );
    assert!(stdout.contains("the arena checks out"), "{stdout}");
}

/// `fogblast-tools relay-server`, the yardstick the load test is measured
/// against: the same bots play through it with no error, every move
/// acknowledged to its mover and relayed to the opponent once.
#[test]
fn the_bare_relay_serves_the_load_tests_bots_without_an_error() {
    use std::io::{BufRead, BufReader};

    let mut relay = Command::new(TOOLS)
        .args(["relay-server", "--listen=127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the relay starts");
    let mut first = String::new();
    BufReader::new(relay.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let url = first.trim().strip_prefix("relay listening on ").expect("the relay names its address").to_owned();
    let output = Command::new(TOOLS)
        .args(["loadtest", "--gateways", &url, "--pairs=10", "--think-ms=0", "--duration-s=2", "--no-verify"])
        .args(["--report-every-s=0", "--moves-per-game=30"])
        .output()
        .expect("fogblast-tools loadtest runs");
    let _ = relay.kill();
    let _ = relay.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "loadtest failed:\n{stdout}\n{stderr}");
    assert!(stdout.lines().any(|l| l == "errors: none"), "{stdout}");
    let played = stdout.lines().find(|l| l.starts_with("not verified against the server")).expect("a games line");
    let games: u64 = played.rsplit(": ").next().and_then(|t| t.split_whitespace().next()?.parse().ok()).unwrap_or(0);
    assert!(games >= 10, "{played}");
}
