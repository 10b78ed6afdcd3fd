//! `fogblast engine-bench`: search speed (nodes per second) on a fixed set
//! of positions at a fixed depth, and the time each level takes to move.

use std::io::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::ensure;
use clap::Args;
use fogblast_engine::{Level, Limits, Searcher};
use fogblast_rules::{Position, Variant};

#[derive(Debug, Args)]
pub struct EngineBenchArgs {
    /// Depth of the fixed-depth searches.
    #[arg(long, default_value_t = 7)]
    depth: u32,
    /// Moves timed per level on each position.
    #[arg(long, default_value_t = 1)]
    level_runs: u32,
}

/// Opening, middlegame and endgame positions of both variants.
const POSITIONS: [(Variant, &str); 8] = [
    (Variant::Atomic, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    (Variant::Atomic, "rn1qkb1r/p5pp/2p5/3p4/N3P3/5P2/PPP4P/R1BQK3 w Qkq - 0 1"),
    (Variant::Atomic, "rnbqkbnr/pppp1ppp/4p3/8/8/4P3/PPPP1PPP/RNBQKBNR w KQkq - 0 2"),
    (Variant::Atomic, "r1bqkbnr/pppp1ppp/2n1p3/8/8/2N1P3/PPPP1PPP/R1BQKBNR w KQkq - 0 3"),
    (Variant::Atomic, "8/5k2/3p4/1p1Pp2p/pP2Pp1P/P4P1K/8/8 b - - 0 1"),
    (Variant::Standard, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    (Variant::Standard, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
    (Variant::Standard, "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 w - - 0 10"),
];

pub fn run(args: &EngineBenchArgs) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let stop = AtomicBool::new(false);
    let mut total_nodes = 0;
    let mut total_time = Duration::ZERO;
    for (variant, fen) in POSITIONS {
        let pos = Position::from_fen(fen, variant)?;
        let mut searcher = Searcher::new(16);
        let limits = Limits { depth: Some(args.depth), ..Limits::default() };
        let report = searcher.search(&pos, &[], &limits, &stop, &mut |_| {});
        ensure!(report.best.is_some_and(|m| pos.is_legal(m)), "{fen}: no legal best move");
        ensure!(
            report.depth == args.depth || report.mate_in_plies().is_some(),
            "{fen}: stopped at depth {}",
            report.depth
        );
        total_nodes += report.nodes;
        total_time += report.elapsed;
        writeln!(
            out,
            "{variant:<8} depth {:>2} {:>9} nodes {:>7.1} ms {:>6.2} Mnps  score {:>6}  {fen}",
            report.depth,
            report.nodes,
            report.elapsed.as_secs_f64() * 1e3,
            report.nodes as f64 / report.elapsed.as_secs_f64() / 1e6,
            report.score,
        )?;
    }
    writeln!(out, "search total {total_nodes} nodes {:.2} Mnps", total_nodes as f64 / total_time.as_secs_f64() / 1e6)?;

    for level in Level::ALL {
        let mut times = Vec::new();
        for (variant, fen) in POSITIONS {
            let pos = Position::from_fen(fen, variant)?;
            for run in 0..args.level_runs.max(1) {
                let mut searcher = Searcher::new(16);
                let start = Instant::now();
                let report = searcher.search(&pos, &[], &level.limits(None, None, u64::from(run)), &stop, &mut |_| {});
                times.push(start.elapsed());
                ensure!(report.best.is_some_and(|m| pos.is_legal(m)), "{level} on {fen}: no legal move");
            }
        }
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        writeln!(
            out,
            "level {level:<6} moves {:>3}  mean {:>7.1} ms  median {:>7.1} ms  max {:>7.1} ms",
            times.len(),
            mean.as_secs_f64() * 1e3,
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3,
        )?;
    }
    Ok(())
}
