//! `fogblast-tools loadtest --spawn` at a small size: it starts its own
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
