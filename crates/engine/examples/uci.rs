//! The engine's UCI loop on stdin and stdout, as a small binary for match
//! tools: `cargo build --release -p fogblast-engine --example uci` builds it
//! without the rest of the service (the same loop as `fogblast uci`).
//!
//! `uci bench` instead searches a fixed set of atomic positions to fixed
//! depths, each in a fresh session, and prints each one's nodes, score and
//! best move, then the total nodes and the speed (docs/engine.md,
//! "Benchmarks"). The search is deterministic, so the total is the
//! search's signature: a change that should not alter the search must
//! leave every line the same.

use std::time::Instant;

/// Atomic positions (moves from the start) and the depth each is searched
/// to: the start, openings, middlegames and endgames from the engine's own
/// games.
const BENCH: [(&str, u32); 13] = [
    ("", 13),
    ("e2e4 e7e6 g1f3 f7f6 d2d4 d7d5 f3h4 g8h6 g2g4 h6g4 e4e5 b8a6", 14),
    ("e2e4 e7e6 g1f3 f7f6 d2d4 d7d5 f3h4 g8h6 g2g4 h6g4 e4e5 b8a6 b2b4 g7g6 h1g1 c8d7 b1c3 a6b4 f1b5 c7c6 b5c6 a8c8 c2c3 b7b5", 14),
    ("e2e4 e7e6 g1f3 f7f6 d2d4 d7d5 f3h4 g8h6 g2g4 h6g4 e4e5 b8a6 b2b4 g7g6 h1g1 c8d7 b1c3 a6b4 f1b5 c7c6 b5c6 a8c8 c2c3 b7b5 a2a4 f8a3 c1h6 f6e5 h2h4 a3c1 f2f4 c1d2 e1f1 b5b4 d1e2 d8b6 h6f8 h7h5 e2b5 b6b5", 14),
    ("g1f3 f7f6 d2d4 d7d5 b1a3 g8h6 g2g4 c7c6 a3c4 e7e5 c4a5 f8b4 c2c3 b4a5 h1g1 e5e4", 13),
    ("g1f3 f7f6 d2d4 d7d5 b1a3 g8h6 g2g4 c7c6 a3c4 e7e5 c4a5 f8b4 c2c3 b4a5 h1g1 e5e4 f3h4 h6g4 f1h3 c8g4 h3g4 d8c8 h2h3 c8f5 f2f3 e4e3 d1d3 b8d7 g1g5 f5d3", 15),
    ("d2d4 d7d5 g1h3 h7h6 e2e4 e7e5 e4d5 f7f5 f1b5 b8c6 e1g1 f8b4 c2c3 g8f6", 15),
    ("d2d4 d7d5 g1h3 h7h6 e2e4 e7e5 e4d5 f7f5 f1b5 b8c6 e1g1 f8b4 c2c3 g8f6 d4e5 d8d2 g1h1 d2c1 f1e1 c8e6 a1d1 e8g8 d1d7 e6d7 e1e7 b4e7 h3f4 g7g6", 15),
    ("e2e3 e7e5 d1f3 d8f6 f3f5 f6f5 g1f3 h7h6 b1c3 c7c6", 13),
    ("e2e3 e7e5 d1f3 d8f6 f3f5 f6f5 g1f3 h7h6 b1c3 c7c6 c3e4 d7d5 e4d6 f8d6 b2b4 a7a5 c1b2 g8e7 e1c1 e8g8 f1d3 g8h8 d3h7 c8g4 a2a3 a5b4", 13),
    ("e2e3 e7e5 d1f3 d8f6 f3f5 f6f5 g1f3 h7h6 b1c3 c7c6 c3e4 d7d5 e4d6 f8d6 b2b4 a7a5 c1b2 g8e7 e1c1 e8g8 f1d3 g8h8 d3h7 c8g4 a2a3 a5b4 c1b1 d5d4 f3g5 a8a5 a3a4 f8c8 g5f7 b8a6 h7g6 c8d8 h2h4 g4d1 f2f4 a6b4 c2c3 d4c3 g6e8 g7g6", 16),
    ("c2c3 b8c6 g1h3 h7h6 d2d4 d7d5 e2e4 c6a5 f1a6 c8d7 e1g1 g8f6 a6b5 c7c6 h3g5 h6g5 h2h3 d7g4 f2f3 g4c8", 12),
    ("c2c3 b8c6 g1h3 h7h6 d2d4 d7d5 e2e4 c6a5 f1a6 c8d7 e1g1 g8f6 a6b5 c7c6 h3g5 h6g5 h2h3 d7g4 f2f3 g4c8 f1f2 g7g5 g2g3 f8g7 b2b4 f7f5 f3f4 a7a6 f4g5 f5f4 g3f4 g7f6 d1h5 h8h5 c1h6 e7e6", 15),
];

fn main() -> std::io::Result<()> {
    if std::env::args().nth(1).as_deref() == Some("bench") {
        return bench();
    }
    fogblast_engine::uci::run_uci(std::io::stdin().lock(), std::io::stdout())
}

/// Runs [`BENCH`] through the UCI loop, one session a position.
fn bench() -> std::io::Result<()> {
    let started = Instant::now();
    let mut total = 0u64;
    for (number, (moves, depth)) in BENCH.iter().enumerate() {
        let position = if moves.is_empty() { "startpos".to_owned() } else { format!("startpos moves {moves}") };
        let commands =
            format!("setoption name UCI_Variant value atomic\nucinewgame\nposition {position}\ngo depth {depth}\n");
        let mut replies = Vec::new();
        fogblast_engine::uci::run_uci(commands.as_bytes(), &mut replies)?;
        let replies = String::from_utf8_lossy(&replies);
        let last = replies.lines().rfind(|l| l.starts_with("info depth")).unwrap_or_default();
        let words: Vec<&str> = last.split_whitespace().collect();
        let after =
            |key: &str| words.iter().position(|w| *w == key).map_or("?", |i| words.get(i + 1).copied().unwrap_or("?"));
        let score = words.iter().position(|w| *w == "score").map_or("?".to_owned(), |i| words[i + 1..i + 3].join(" "));
        let best = replies.lines().find_map(|l| l.strip_prefix("bestmove ")).and_then(|l| l.split_whitespace().next());
        let nodes: u64 = after("nodes").parse().unwrap_or(0);
        total += nodes;
        println!("{:2} depth {depth} nodes {nodes} score {score} bestmove {}", number + 1, best.unwrap_or("?"));
    }
    let elapsed = started.elapsed();
    println!("nodes {total} time {} ms nps {}", elapsed.as_millis(), (total as f64 / elapsed.as_secs_f64()) as u64);
    Ok(())
}
