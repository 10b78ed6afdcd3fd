//! The public event stream as an outside consumer reads it, on real
//! processes over Redis and NATS: an atomic game played to an explosion
//! and a fog-of-war game played to a king capture, read back with
//! `fogblast events tail` (text and JSON, by variant, from a time) and
//! with the Python example consumer in `examples/`, which counts
//! explosions per hour with nats-py. In fog of war no move event names a
//! square until the end.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fogblast_rules::{Variant, WinReason};
use serde_json::Value;

use crate::support::{find_line, play, start_game, strings, Client, Cluster};

/// Runs `command` to its end, killing it after `limit`.
pub(crate) fn run_for(command: &mut Command, limit: Duration) -> Output {
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the command starts");
    let output = wait_for(child, limit);
    assert!(output.is_some(), "{command:?} ran past {limit:?}");
    output.unwrap()
}

/// Waits for `child` (its output piped) for at most `limit`, reading its
/// output as it comes: a child that writes more than a pipe holds must
/// not stall on a full pipe. Kills it past the limit and answers `None`.
pub(crate) fn wait_for(mut child: std::process::Child, limit: Duration) -> Option<Output> {
    use std::io::Read;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting") {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    if status.is_none() {
        eprintln!("killed past {limit:?}; it wrote:\n{}", String::from_utf8_lossy(&stderr));
    }
    status.map(|status| Output { status, stdout, stderr })
}

fn tail(cluster: &Cluster, args: &[&str]) -> Vec<String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fogblast"));
    command
        .args(["events", "tail", "--from", "10m"])
        .args(args)
        .env("NATS_URL", crate::support::nats_url())
        .env("FOGBLAST_NATS_STREAM", &cluster.names.stream)
        .env("FOGBLAST_NATS_SUBJECT_PREFIX", &cluster.names.subject_prefix);
    let output = run_for(&mut command, Duration::from_secs(20));
    assert!(output.status.success(), "events tail failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8").lines().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_consumers_read_the_public_stream_and_fog_stays_hidden() {
    let cluster = Cluster::start("events", 1, 1);
    let gateway = cluster.gateway(0);

    let atomic = find_line(Variant::Atomic, WinReason::KingExploded, 6, 40);
    let mut white = Client::join("white", gateway, None).await;
    let mut black = Client::join("black", gateway, None).await;
    let atomic_game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &atomic_game, &atomic.moves, 0, atomic.moves.len()).await;
    white.expect("end").await;
    // What the players saw explode, over their sockets.
    let explosions = white.moves().iter().filter(|m| m["exploded"].as_array().is_some_and(|e| !e.is_empty())).count();
    assert!(explosions >= 1, "the line ends in an explosion");

    let fog = find_line(Variant::Fog, WinReason::KingCaptured, 10, 60);
    let fog_game = start_game(&mut white, &mut black, "fog").await;
    play(&mut white, &mut black, &fog_game, &fog.moves, 0, fog.moves.len()).await;
    white.expect("end").await;

    // JSON, atomic only: created, started, every move, finished.
    let count = atomic.moves.len() + 3;
    let lines = tail(&cluster, &["--variant", "atomic", "--json", "--count", &count.to_string()]);
    let events: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).expect("one JSON event per line")).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"created"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"finished"), "{kinds:?}");
    assert!(events.iter().all(|e| e["game_id"] == atomic_game.as_str() && e["variant"] == "atomic"));
    let moved: Vec<String> =
        events.iter().filter(|e| e["kind"] == "move").map(|e| e["moved"]["uci"].as_str().unwrap().to_owned()).collect();
    assert_eq!(moved, atomic.moves);
    assert_eq!(events.last().unwrap()["finished"]["reason"], "explosion");

    // Text, fog only: every move hidden until the finished event lists them.
    let count = fog.moves.len() + 3;
    let lines = tail(&cluster, &["--variant", "fog", "--count", &count.to_string()]);
    assert_eq!(lines.len(), count);
    let moves: Vec<&String> = lines.iter().filter(|l| l.contains(" fog move ")).collect();
    assert_eq!(moves.len(), fog.moves.len(), "{lines:#?}");
    assert!(moves.iter().all(|l| l.ends_with("(hidden)")), "{moves:#?}");
    for uci in &fog.moves {
        assert!(moves.iter().all(|l| !l.contains(uci.as_str())), "{uci} shown before the end");
    }
    assert!(lines.last().unwrap().contains(&format!("after {} moves", fog.moves.len())), "{lines:#?}");
    let json = tail(&cluster, &["--variant", "fog", "--json", "--count", &count.to_string()]);
    let finished: Value = serde_json::from_str(json.last().unwrap()).unwrap();
    assert_eq!(strings(&finished["finished"]["moves"]), fog.moves);

    // The outside consumer: explosions per hour, with nats-py.
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/explosions_per_hour.py");
    let mut command = Command::new(python);
    command.arg(script).args([
        "--nats",
        &crate::support::nats_url(),
        "--stream",
        &fogblast_bus::public_stream(&cluster.names.stream),
        "--subject-prefix",
        &cluster.names.subject_prefix,
        "--since-hours",
        "1",
        "--idle-exit-s",
        "2",
    ]);
    let output = run_for(&mut command, Duration::from_secs(30));
    assert!(output.status.success(), "the example failed: {}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8(output.stdout).unwrap();
    let counted: usize =
        printed.lines().map(|l| l.split_whitespace().nth(1).and_then(|n| n.parse::<usize>().ok()).expect(l)).sum();
    assert_eq!(counted, explosions, "explosions per hour as the example counted them: {printed}");
}
