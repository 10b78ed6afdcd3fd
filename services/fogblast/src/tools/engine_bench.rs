//! `fogblast-tools engine-bench`: search speed (nodes per second) on a fixed set
//! of positions at a fixed depth, and the time each level takes to move;
//! for fog of war, each level's time per move and the size of its belief
//! (candidate positions) over whole games against the baseline.

use std::io::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use clap::Args;
use fogblast_engine::fog::{baseline_move, Belief, FogObservation, PRIOR_HARD};
use fogblast_engine::{best_fog_move, Level, Limits, Searcher};
use fogblast_rules::{Color, Game, Position, Variant};

#[derive(Debug, Args)]
pub struct EngineBenchArgs {
    /// Depth of the fixed-depth searches.
    #[arg(long, default_value_t = 7)]
    depth: u32,
    /// Moves timed per level on each position.
    #[arg(long, default_value_t = 1)]
    level_runs: u32,
    /// Fog of war: games each level plays against the baseline, with its
    /// real time limits, to time its moves and follow its belief.
    #[arg(long, default_value_t = 4)]
    fog_games: u32,
    /// Fog of war: a game still running after this many plies is stopped.
    #[arg(long, default_value_t = 160)]
    fog_max_plies: usize,
    /// Skip the atomic and standard searches: fog of war only.
    #[arg(long)]
    fog_only: bool,
}

/// Opening, middlegame and endgame positions of both variants.
pub(crate) const POSITIONS: [(Variant, &str); 8] = [
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
    if !args.fog_only {
        search_and_levels(args)?;
    }
    fog(args)
}

fn search_and_levels(args: &EngineBenchArgs) -> anyhow::Result<()> {
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

/// Per-level fog figures: time per move with the level's own limits, and
/// the belief's size after each ply, over games against the baseline.
fn fog(args: &EngineBenchArgs) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let stop = AtomicBool::new(false);
    for level in Level::ALL {
        let cap = level.fog_settings().belief_cap;
        let mut times = Vec::new();
        // Belief size by ply of the game (after sampling), over every move.
        let mut by_ply: Vec<Vec<usize>> = Vec::new();
        let (mut consistent_max, mut rebuilds, mut samples, mut nodes, mut plies) =
            (0usize, 0usize, 0usize, 0u64, 0usize);
        // Moves at which the level's belief (tracked again as the player
        // tracks it) holds the real position, and the prior Hard's would.
        let (mut held, mut prior_held) = (0usize, 0usize);
        for game_index in 0..args.fog_games.max(1) {
            let engine_side = if game_index.is_multiple_of(2) { Color::White } else { Color::Black };
            let mut game = Game::new(Position::new(Variant::Fog));
            let mut obs = FogObservation::new(engine_side);
            while game.outcome().is_none() && game.ply() < args.fog_max_plies {
                let pos = *game.position();
                let seed = u64::from(game_index) << 32 | game.ply() as u64;
                let m = if pos.turn() == engine_side {
                    let limits = level.fog_limits(None, None, seed);
                    let report = best_fog_move(&obs, &limits, &stop)?;
                    times.push(report.elapsed);
                    ensure!(
                        report.belief_size >= 1 && report.belief_size <= cap,
                        "{level}: belief of {}",
                        report.belief_size
                    );
                    ensure!(report.samples >= 1 || report.nodes == 0, "{level}: no sample searched");
                    let settings = limits.settings;
                    let holds = |belief: Belief| belief.particles().iter().any(|p| p.board() == pos.board());
                    held +=
                        usize::from(holds(Belief::track_with(&obs, settings.belief_cap, seed, settings.keep_threats)?));
                    prior_held += usize::from(holds(Belief::track(&obs, PRIOR_HARD.belief_cap, seed)?));
                    samples += report.samples;
                    nodes += report.nodes;
                    rebuilds = rebuilds.max(report.rebuilds);
                    for (ply, &size) in report.belief_sizes.iter().enumerate() {
                        if by_ply.len() <= ply {
                            by_ply.resize(ply + 1, Vec::new());
                        }
                        by_ply[ply].push(size);
                    }
                    consistent_max = consistent_max.max(report.belief_sizes.iter().copied().max().unwrap_or(0));
                    pos.parse_uci(&report.best).with_context(|| format!("{level} chose {}, not legal", report.best))?
                } else {
                    baseline_move(&pos.legal_moves(), seed).context("no move in a game not over")?
                };
                let mut before = pos;
                obs.observe_move(&mut before, m);
                game.play(m)?;
                plies += 1;
            }
        }
        ensure!(!times.is_empty(), "{level} never moved");
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        writeln!(
            out,
            "fog level {level:<6} games {} plies {plies} moves {:>4}  mean {:>7.1} ms  median {:>7.1} ms  max {:>7.1} ms  samples/move {:.1}  nodes/move {:.0}",
            args.fog_games.max(1),
            times.len(),
            mean.as_secs_f64() * 1e3,
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3,
            samples as f64 / times.len() as f64,
            nodes as f64 / times.len() as f64,
        )?;
        let mut line = format!("fog level {level:<6} belief (cap {cap}) by ply, mean/max:");
        for ply in (0..by_ply.len()).step_by(10) {
            let sizes = &by_ply[ply];
            let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
            line.push_str(&format!(" {ply}:{mean:.0}/{}", sizes.iter().max().unwrap_or(&0)));
        }
        writeln!(out, "{line}  largest {consistent_max}  most rebuilds in one game {rebuilds}")?;
        writeln!(
            out,
            "fog level {level:<6} real position in the belief at {:.1}% of moves (the prior Hard's belief: {:.1}%)",
            100.0 * held as f64 / times.len() as f64,
            100.0 * prior_held as f64 / times.len() as f64,
        )?;
    }
    Ok(())
}
