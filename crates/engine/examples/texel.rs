//! Texel tuning of the atomic evaluation, from the engine's own games.
//!
//! `generate` plays games against itself at a fixed node budget a move, from
//! random openings, and writes one line per quiet position: its FEN, the
//! game's result for White (1, 0.5 or 0) and the search's score for White in
//! centipawns. `--skip N` leaves out the first N plies after the opening,
//! whose positions come from random moves rather than the engine's play.
//!
//!     cargo run --release -p fogblast-engine --example texel -- generate \
//!         --games 2000 --nodes 3000 --seed 1 --skip 0 --out /tmp/atomic.data
//!
//! `tune` fits the evaluation's atomic weights to those results: it scales
//! evaluations into expected scores with a logistic curve (its constant
//! fitted first), then moves one weight at a time while the mean squared
//! error falls, with steps shrinking to one centipawn. The target is the
//! result, or with `--lambda L` below 1 the blend `L × result + (1 − L) ×
//! expected score of the search's score` (a line without a score counts its
//! result only). The pawn anchors the scale and stays at 100; the terms in
//! [`HELD`] stay where they are.
//!
//!     cargo run --release -p fogblast-engine --example texel -- tune \
//!         --data /tmp/atomic.data --passes 12 --lambda 1
//!
//! It prints the tuned weights as a Rust array for `ATOMIC_WEIGHTS`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::sync::atomic::AtomicBool;

use fogblast_engine::{evaluate_with, term, Limits, Searcher, Weights, ATOMIC_WEIGHTS};
use fogblast_rules::{Color, Position, Variant};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// Terms the tuner leaves alone: the pawn-structure terms, at zero since
/// tuning them (round 2 in docs/engine.md) did not play better, and the
/// hand-set piece advance, measured in matches instead.
const HELD: [usize; 5] =
    [term::PASSED_PAWN, term::DOUBLED_PAWN, term::ROOK_OPEN_FILE, term::KINGS_CLOSE, term::PIECE_ADVANCE];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str, default: u64| flag(name).map_or(default, |v| v.parse().expect("a number"));
    match args.first().map(String::as_str) {
        Some("generate") => generate(
            number("--games", 1000),
            number("--nodes", 3000),
            number("--seed", 1),
            number("--skip", 0),
            &flag("--out").unwrap_or_else(|| "atomic.data".to_owned()),
        ),
        Some("tune") => tune(
            &flag("--data").unwrap_or_else(|| "atomic.data".to_owned()),
            number("--passes", 12),
            flag("--lambda").map_or(1.0, |v| v.parse().expect("a number from 0 to 1")),
        ),
        _ => eprintln!(
            "usage: texel generate [--games N] [--nodes N] [--seed N] [--skip N] [--out FILE] \
             | tune [--data FILE] [--passes N] [--lambda L]"
        ),
    }
}

fn generate(games: u64, nodes: u64, seed: u64, skip: u64, out: &str) {
    let mut file = BufWriter::new(std::fs::File::create(out).expect("output file"));
    let mut rng = Rng(seed);
    let stop = AtomicBool::new(false);
    let mut searcher = Searcher::new(16);
    let mut written = 0usize;
    for game in 0..games {
        searcher.clear();
        let mut pos = Position::new(Variant::Atomic);
        // Eight random plies, redrawn if they end the game.
        let mut opened = true;
        for _ in 0..8 {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome().is_some() {
                opened = false;
                break;
            }
            pos.play_unchecked(moves[(rng.next() % moves.len() as u64) as usize]);
        }
        if !opened || pos.outcome().is_some() {
            continue;
        }
        let mut history: Vec<u64> = Vec::new();
        let mut seen: HashMap<u64, u32> = HashMap::new();
        let mut quiet: Vec<(String, i32)> = Vec::new();
        let result = loop {
            if let Some(outcome) = pos.outcome() {
                break match outcome.winner() {
                    Some(Color::White) => 1.0,
                    Some(Color::Black) => 0.0,
                    None => 0.5,
                };
            }
            let key = pos.zobrist_hash();
            let count = seen.entry(key).or_insert(0);
            *count += 1;
            if *count >= 3 || history.len() >= 300 {
                break 0.5;
            }
            let limits = Limits { nodes: Some(nodes), seed: game, ..Limits::default() };
            let report = searcher.search(&pos, &history, &limits, &stop, &mut |_| {});
            let Some(best) = report.best else { break 0.5 };
            // Positions whose best move is quiet, out of check and short of a
            // forced result: the static evaluation should explain them.
            if history.len() as u64 >= skip
                && !pos.is_check()
                && !best.is_capture()
                && best.promotion().is_none()
                && report.score.abs() < 2_000
            {
                let white = if pos.turn() == Color::White { report.score } else { -report.score };
                quiet.push((pos.fen(), white));
            }
            history.push(key);
            pos.play_unchecked(best);
        };
        for (fen, score) in quiet {
            writeln!(file, "{fen};{result};{score}").expect("write");
            written += 1;
        }
        if (game + 1) % 100 == 0 {
            eprintln!("{} games, {written} positions", game + 1);
        }
    }
    file.flush().expect("flush");
    eprintln!("{written} positions");
}

/// Expected score for White of an evaluation for White.
fn expected(white: f64, k: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * white / 400.0))
}

/// Positions with the game's result for White and, when the line has one,
/// the search's score for White.
fn load(path: &str) -> Vec<(Position, f64, Option<f64>)> {
    let file = BufReader::new(std::fs::File::open(path).expect("data file"));
    file.lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let mut fields = line.split(';');
            let pos = Position::from_fen(fields.next()?, Variant::Atomic).ok()?;
            let result = fields.next()?.trim().parse().ok()?;
            let score = fields.next().and_then(|s| s.trim().parse().ok());
            Some((pos, result, score))
        })
        .collect()
}

/// Mean squared error of the predicted scores (White's view) against the
/// targets.
fn error(data: &[(Position, f64)], w: &Weights, k: f64) -> f64 {
    let sum: f64 = data
        .iter()
        .map(|(pos, result)| {
            let eval = evaluate_with(pos, w);
            let white = if pos.turn() == Color::White { eval } else { -eval };
            (result - expected(f64::from(white), k)).powi(2)
        })
        .sum();
    sum / data.len() as f64
}

fn tune(path: &str, passes: u64, lambda: f64) {
    let loaded = load(path);
    eprintln!("{} positions", loaded.len());
    let results: Vec<(Position, f64)> = loaded.iter().map(|(pos, result, _)| (*pos, *result)).collect();
    let mut w = ATOMIC_WEIGHTS;
    // The logistic constant that fits the current weights best.
    let mut k = 1.0;
    let mut best = error(&results, &w, k);
    for step in [0.5, 0.1, 0.02] {
        loop {
            let mut moved = false;
            for candidate in [k - step, k + step] {
                let e = error(&results, &w, candidate);
                if candidate > 0.0 && e < best {
                    best = e;
                    k = candidate;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }
    eprintln!("K {k:.2}, error against the results {best:.6}");
    // The targets: results, blended with the search's scores at the same K.
    let data: Vec<(Position, f64)> = loaded
        .into_iter()
        .map(|(pos, result, score)| {
            let target = score.map_or(result, |s| lambda * result + (1.0 - lambda) * expected(s, k));
            (pos, target)
        })
        .collect();
    best = error(&data, &w, k);
    eprintln!("lambda {lambda}, error against the targets {best:.6}");
    let mut steps: Vec<i32> = w.iter().map(|&v| (v.abs() / 8).max(2)).collect();
    // The pawn anchors the scale.
    let fixed: Vec<usize> = std::iter::once(term::PAWN).chain(HELD).collect();
    for pass in 0..passes {
        let mut improved = false;
        for i in 0..term::COUNT {
            if fixed.contains(&i) {
                continue;
            }
            for direction in [1, -1] {
                loop {
                    let mut trial = w;
                    trial[i] += direction * steps[i];
                    // Material stays positive; other terms may change sign.
                    if i <= term::QUEEN && trial[i] < 0 {
                        break;
                    }
                    let e = error(&data, &trial, k);
                    if e < best {
                        best = e;
                        w = trial;
                        improved = true;
                    } else {
                        break;
                    }
                }
            }
        }
        eprintln!("pass {pass}: error {best:.6}");
        if !improved {
            if steps.iter().all(|&s| s == 1) {
                break;
            }
            steps.iter_mut().for_each(|s| *s = (*s / 2).max(1));
        }
    }
    for (name, (old, new)) in term::NAMES.iter().zip(ATOMIC_WEIGHTS.iter().zip(w.iter())) {
        println!("// {name}: {old} -> {new}");
    }
    println!("{w:?}");
    if lambda < 1.0 {
        eprintln!("error against the results {:.6}", error(&results, &w, k));
    }
}
