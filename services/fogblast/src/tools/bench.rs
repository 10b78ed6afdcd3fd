//! `fogblast-tools bench`: leaf nodes per second of the move generator on fixed
//! positions, each count checked against its known value.

use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::ensure;
use clap::Args;
use fogblast_rules::{perft, Position, Variant};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Repetitions of each position; the fastest run is reported.
    #[arg(long, default_value_t = 3)]
    runs: u32,
}

struct Case {
    name: &'static str,
    variant: Variant,
    fen: &'static str,
    depth: u32,
    nodes: u64,
}

const CASES: [Case; 4] = [
    Case {
        name: "atomic start",
        variant: Variant::Atomic,
        fen: fogblast_rules::STARTING_FEN,
        depth: 5,
        nodes: 4_864_979,
    },
    Case {
        name: "atomic kiwipete",
        variant: Variant::Atomic,
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -",
        depth: 4,
        nodes: 3_492_097,
    },
    Case {
        name: "standard kiwipete",
        variant: Variant::Standard,
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -",
        depth: 4,
        nodes: 4_085_603,
    },
    Case { name: "fog start", variant: Variant::Fog, fen: fogblast_rules::STARTING_FEN, depth: 5, nodes: 4_897_256 },
];

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let mut total_nodes = 0;
    let mut total_time = Duration::ZERO;
    for case in &CASES {
        let pos = Position::from_fen(case.fen, case.variant)?;
        let mut best = Duration::MAX;
        for _ in 0..args.runs.max(1) {
            let start = Instant::now();
            let nodes = perft::perft(&pos, case.depth);
            let elapsed = start.elapsed();
            ensure!(
                nodes == case.nodes,
                "{}: perft {} gave {nodes} nodes, expected {}",
                case.name,
                case.depth,
                case.nodes
            );
            best = best.min(elapsed);
        }
        total_nodes += case.nodes;
        total_time += best;
        writeln!(
            out,
            "{:<18} depth {} {:>10} nodes {:>8.1} ms {:>7.1} Mnps",
            case.name,
            case.depth,
            case.nodes,
            best.as_secs_f64() * 1e3,
            case.nodes as f64 / best.as_secs_f64() / 1e6
        )?;
    }
    writeln!(out, "total {total_nodes} nodes {:.1} Mnps", total_nodes as f64 / total_time.as_secs_f64() / 1e6)?;
    Ok(())
}
