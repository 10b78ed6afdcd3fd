//! `fogblast-tools chaos` at a reduced size: the whole cluster (2 gateways, 3
//! game shards, 2 engine replicas, 2 matchmakers, the rating service) on
//! the real Redis, NATS and Postgres, bots of every kind playing while a
//! shard, a gateway, the rating service and an engine replica are killed
//! and started again, a shard is paused past its lease, a gateway is
//! drained with SIGTERM, Redis replies to commits are lost (a proxy cuts
//! the connections) and NATS is killed for ten seconds; then once more on a
//! Redis Cluster of six local nodes, with a primary killed instead. The command
//! judges every game itself; this test runs it, checks that it passed,
//! that every verdict line is there and passed, and that the run did real
//! work under every fault.

use std::process::Command;
use std::time::Duration;

use fogblast_testkit::run::{run_with_limit, Finished};

/// The tools binary; the chaos run finds the server binary beside it.
const BIN: &str = env!("CARGO_BIN_EXE_fogblast-tools");
/// The run takes about a minute; this is the limit before it counts as hung.
const LIMIT: Duration = Duration::from_secs(300);

const PROMISES: [&str; 9] = [
    "every game ended with a valid result",
    "every acknowledged move is in the final record (0 lost)",
    "no move applied twice",
    "each rated game rated exactly once",
    "clocks never wrong by more than the tolerance",
    "no fog payload leaked a hidden square",
    "the bots saw nothing else wrong",
    "the paused shard was fenced",
    "no process panicked or ended badly",
];

/// One chaos run at a time: each starts a whole cluster of its own.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `fogblast-tools chaos` at the reduced size with `extra` arguments,
/// checks that it passed and that every verdict line is there and passed,
/// and returns what it printed.
fn run_chaos(extra: &[&str]) -> String {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut command = Command::new(BIN);
    command
        .args([
            "chaos",
            "--seekers=4",
            "--creators=2",
            "--fog-creators=2",
            "--computer=2",
            "--spectators=3",
            "--fault-gap-s=5",
            "--down-s=3",
            "--nats-down-s=10",
        ])
        .args(extra);
    let Finished { status, stdout, stderr } = run_with_limit(command, LIMIT);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(status.success(), "fogblast-tools chaos failed ({status}):\n{stdout}\n{stderr}");

    for promise in PROMISES {
        let line =
            stdout.lines().find(|l| l.contains(promise)).unwrap_or_else(|| panic!("no verdict line {promise:?}"));
        assert!(line.trim_start().starts_with("PASS"), "{line}");
    }
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert!(stdout.contains("chaos: every promise held"));
    stdout
}

#[test]
fn no_move_lost_no_fog_leaked_and_rated_once_while_processes_die() {
    let stdout = run_chaos(&[]);

    // Real work under every fault: a phase line each, with moves in it.
    for phase in [
        "before the faults",
        "during kill -9 shard-",
        "during kill -9 gateway-0",
        "during kill -9 rating",
        "during kill -9 engine-0",
        "during SIGSTOP shard-",
        "after SIGSTOP shard-",
        "during rolling restart of 3 shards",
        "during frozen matchmaker-0",
        "during SIGTERM gateway-1",
        "during NATS stopped",
    ] {
        let line =
            stdout.lines().find(|l| l.trim_start().starts_with(phase)).unwrap_or_else(|| panic!("no phase {phase:?}"));
        // The columns after the name: secs, moves, moves/s, p50, p99, max.
        let columns: Vec<&str> = line.split_whitespace().collect();
        let moves: u64 = columns[columns.len().saturating_sub(5)].parse().unwrap_or(0);
        assert!(moves > 0, "no move acknowledged in the phase: {line}");
    }
    // Each fault that holds up moves has its row, and games resumed: the
    // rolling restart and the frozen matchmaker hold no move a second.
    for (fault, bounded) in [
        ("kill -9 of a shard", false),
        ("SIGSTOP of a shard", false),
        ("rolling restart of 3 shards", true),
        ("frozen matchmaker-0", true),
    ] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(fault))
            .unwrap_or_else(|| panic!("no held-up row for {fault:?}"));
        // The columns after the name: moves, p50, max, moves over 1 s.
        let columns: Vec<&str> = line.split_whitespace().collect();
        let moves: u64 = columns[columns.len() - 4].parse().unwrap_or(0);
        assert!(moves > 0, "no move held up by the fault to measure: {line}");
        if bounded {
            assert_eq!(columns[columns.len() - 1], "0", "a move waited over a second: {line}");
        }
    }
    // Commit replies were really lost, and play went on through them.
    let lost = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("during ") && l.contains("Redis replies lost"))
        .expect("a phase of lost Redis replies");
    let count: u64 = lost.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(count > 0, "no Redis reply was lost: {lost}");
    let columns: Vec<&str> = lost.split_whitespace().collect();
    let moves: u64 = columns[columns.len().saturating_sub(5)].parse().unwrap_or(0);
    assert!(moves > 0, "no move acknowledged while Redis replies were lost: {lost}");
    // The killed gateway's bots came back through the other one.
    let events = stdout.lines().find(|l| l.starts_with("events:")).expect("an events line");
    assert!(events.contains("reconnected to another gateway"), "{events}");
    // The drained gateway's bots were told to go.
    assert!(events.contains("told to reconnect"), "{events}");
    // Spectators watched fog-of-war games too.
    let fog = stdout.lines().find(|l| l.contains("no fog payload leaked")).expect("the fog line");
    let spectators: u64 = fog.split(", ").nth(1).and_then(|t| t.split_whitespace().next()?.parse().ok()).unwrap_or(0);
    assert!(spectators > 0, "no fog frame reached a spectator: {fog}");
    let acked = stdout.lines().find(|l| l.contains("acknowledged moves)")).expect("the lost-move line");
    let count: u64 = acked.rsplit('(').next().and_then(|t| t.split_whitespace().next()?.parse().ok()).unwrap_or(0);
    assert!(count >= 100, "too little play to judge: {acked}");
    for kind in ["quick pairings", "invites", "against the computer", "fog of war", "rated"] {
        let games = stdout.lines().find(|l| l.starts_with("games:")).expect("a games line");
        let before = games.split(kind).next().unwrap_or("");
        let n: u64 = before.rsplit(['(', ',', ';']).next().and_then(|t| t.trim().parse().ok()).unwrap_or(0);
        assert!(n > 0, "no {kind} game: {games}");
    }
}

/// The same run on a Redis Cluster of its own (six local nodes), where the
/// lost-replies fault is the busiest primary killed with SIGKILL: its
/// replica takes over, and every promise still holds.
#[test]
fn on_a_redis_cluster_no_move_lost_while_a_primary_is_killed() {
    let stdout = run_chaos(&["--redis-cluster"]);
    let phase = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("after SIGKILL of a Redis primary"))
        .expect("a phase after the primary was killed");
    let columns: Vec<&str> = phase.split_whitespace().collect();
    let moves: u64 = columns[columns.len().saturating_sub(5)].parse().unwrap_or(0);
    assert!(moves > 0, "no move acknowledged after the primary was killed: {phase}");
    let held = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("SIGKILL of a Redis primary"))
        .expect("a held-up row for the killed primary");
    let columns: Vec<&str> = held.split_whitespace().collect();
    let moves: u64 = columns[columns.len() - 4].parse().unwrap_or(0);
    assert!(moves > 0, "no move was in flight while the primary died: {held}");
    for phase in ["during kill -9 shard-", "during rolling restart of 3 shards", "during NATS stopped"] {
        assert!(stdout.lines().any(|l| l.trim_start().starts_with(phase)), "no phase {phase:?}");
    }
}
