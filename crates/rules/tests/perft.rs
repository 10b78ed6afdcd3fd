//! Perft suites from `data/`: every listed depth whose node count is at most
//! `FOGBLAST_PERFT_MAX_NODES` (default 5,000,000) must match exactly. Set
//! `FOGBLAST_PERFT_MAX_NODES=0` for no limit.

use fogblast_rules::{perft::perft, Position, Variant};

const DEFAULT_MAX_NODES: u64 = 5_000_000;

fn max_nodes() -> u64 {
    match std::env::var("FOGBLAST_PERFT_MAX_NODES") {
        Ok(text) => match text.parse::<u64>().expect("FOGBLAST_PERFT_MAX_NODES must be a number") {
            0 => u64::MAX,
            n => n,
        },
        Err(_) => DEFAULT_MAX_NODES,
    }
}

/// Runs every case of a suite file; returns how many depths were checked.
fn run_suite(text: &str, variant: Variant) -> usize {
    let limit = max_nodes();
    let mut id = String::new();
    let mut pos = None;
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (command, rest) = line.split_once(' ').expect("suite lines are 'command argument'");
        match command {
            "id" => id = rest.to_owned(),
            "epd" => {
                pos = Some(Position::from_fen(rest, variant).unwrap_or_else(|e| panic!("{id}: {rest}: {e}")));
            }
            "perft" => {
                let (depth, nodes) = rest.split_once(' ').expect("perft DEPTH NODES");
                let (depth, nodes): (u32, u64) = (depth.parse().unwrap(), nodes.parse().unwrap());
                if nodes > limit {
                    continue;
                }
                let got = perft(pos.as_ref().expect("epd before perft"), depth);
                checked += 1;
                if got != nodes {
                    failures.push(format!("{id} depth {depth}: expected {nodes}, got {got}"));
                }
            }
            other => panic!("unknown suite command {other:?}"),
        }
    }
    assert!(failures.is_empty(), "perft mismatches:\n{}", failures.join("\n"));
    checked
}

#[test]
fn atomic_suite() {
    let checked = run_suite(include_str!("data/atomic.perft"), Variant::Atomic);
    assert!(checked >= 25, "only {checked} depths checked");
}

#[test]
fn standard_suite() {
    let checked = run_suite(include_str!("data/tricky.perft"), Variant::Standard);
    assert!(checked >= 70, "only {checked} depths checked");
}

#[test]
fn atomic_random_positions() {
    let checked = run_suite(include_str!("data/random-atomic.perft"), Variant::Atomic);
    assert_eq!(checked, 360);
}

#[test]
fn standard_random_positions() {
    let checked = run_suite(include_str!("data/random-standard.perft"), Variant::Standard);
    assert_eq!(checked, 360);
}

#[test]
fn fog_suite() {
    let checked = run_suite(include_str!("data/fow.perft"), Variant::Fog);
    assert!(checked >= 25, "only {checked} depths checked");
}
