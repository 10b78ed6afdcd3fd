//! `fogblast perft`: leaf counts of the move tree, for checking the move
//! generator against other implementations.

use std::io::Write as _;

use anyhow::Context as _;
use clap::Args;
use fogblast_rules::{perft, CastlingMode, Position, Variant};

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// standard, atomic or fog.
    #[arg(long, default_value = "atomic")]
    variant: Variant,
    /// FEN or EPD; X-FEN and Shredder-FEN castling are accepted.
    #[arg(long, default_value = fogblast_rules::STARTING_FEN)]
    fen: String,
    /// Plies to search.
    #[arg(long)]
    depth: u32,
    /// Print the count below each legal move, sorted by UCI text.
    #[arg(long)]
    divide: bool,
}

pub fn run(args: &PerftArgs) -> anyhow::Result<()> {
    let pos = Position::from_fen(&args.fen, args.variant).with_context(|| format!("position {:?}", args.fen))?;
    let mut out = std::io::stdout().lock();
    let nodes = if args.divide {
        let mut rows: Vec<(String, u64)> = perft::divide(&pos, args.depth)
            .into_iter()
            .map(|(m, n)| (m.to_uci(CastlingMode::Standard).to_string(), n))
            .collect();
        rows.sort();
        for (uci, n) in &rows {
            writeln!(out, "{uci}: {n}")?;
        }
        rows.iter().map(|(_, n)| n).sum()
    } else {
        perft::perft(&pos, args.depth)
    };
    writeln!(out, "{nodes}")?;
    Ok(())
}
