//! `fogblast-tools analysis-bench`: the engine pool's two kinds of work
//! measured against each other on one replica over loopback gRPC: games
//! analysed per minute at the analysis depth, the time an analysis waits
//! for a thread under a backlog, and the computer-move latency with and
//! without that backlog, side by side. Every analysis is checked to score
//! every position and every move to be answered, so a fast wrong answer
//! fails.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use fogblast_engine_service::EngineConfig;
use fogblast_proto::engine::engine_client::EngineClient;
use fogblast_proto::engine::{AnalyseRequest, BestMoveRequest, Level, Variant};
use fogblast_rules::{CastlingMode, Game, Position};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tonic::transport::Channel;

#[derive(Debug, clap::Args)]
pub struct AnalysisBenchArgs {
    /// Search threads of the pool [default: the machine's cores].
    #[arg(long)]
    workers: Option<u32>,
    /// Search depth of each analysed position.
    #[arg(long, default_value_t = 8)]
    depth: u32,
    /// Games analysed for the throughput figure; the backlog the computer moves are measured under.
    #[arg(long, default_value_t = 16)]
    games: usize,
    /// Plies of each game.
    #[arg(long, default_value_t = 60)]
    plies: usize,
    /// Computer moves asked for in each latency phase.
    #[arg(long, default_value_t = 200)]
    moves: usize,
}

pub fn run(args: &AnalysisBenchArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(bench(args))
}

async fn bench(args: &AnalysisBenchArgs) -> anyhow::Result<()> {
    let mut config = EngineConfig::default();
    if let Some(workers) = args.workers {
        config.settings.workers = workers;
    }
    config.analysis.analysis_depth = args.depth;
    config.analysis.analysis_queue = 1_000;
    let workers = config.settings.workers;
    let analysis_threads = config.analysis.threads(workers);
    let (grpc, metrics) = (TcpListener::bind("127.0.0.1:0").await?, TcpListener::bind("127.0.0.1:0").await?);
    let addr = format!("http://{}", grpc.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    let pool = tokio::spawn(fogblast_engine_service::run(config, grpc, metrics, async {
        let _ = stopped.await;
    }));
    let client = EngineClient::connect(addr).await.context("connecting to the pool")?;
    let games: Vec<Vec<String>> = (0..args.games).map(|i| fixed_game(args.plies, i as u64)).collect();
    println!(
        "engine pool: {workers} threads, analysis on at most {analysis_threads}, depth {}, {} atomic games of {} plies",
        args.depth, args.games, args.plies
    );

    let quiet = move_latencies(&client, &games, args.moves).await?;
    let started = Instant::now();
    let backlog: Vec<_> = games.iter().map(|moves| tokio::spawn(analyse(client.clone(), moves.clone()))).collect();
    let busy = move_latencies(&client, &games, args.moves).await?;
    let unfinished = backlog.iter().filter(|analysis| !analysis.is_finished()).count();
    ensure!(
        unfinished > 0,
        "the backlog was done before the last computer move: nothing was measured under it (raise --games)"
    );
    let mut waits = Vec::new();
    for (analysis, moves) in backlog.into_iter().zip(&games) {
        let (positions, took) = analysis.await??;
        ensure!(positions == moves.len() + 1, "an analysis scored {positions} positions of {}", moves.len() + 1);
        waits.push(took);
    }
    let elapsed = started.elapsed();
    let per_minute = args.games as f64 / elapsed.as_secs_f64() * 60.0;
    println!(
        "analyses per minute (one replica): {per_minute:.1} ({} games in {:.1} s)",
        args.games,
        elapsed.as_secs_f64()
    );
    println!(
        "analyses still waiting or running when the last computer move was answered: {unfinished} of {}",
        args.games
    );
    println!(
        "time from request to analysis, under the backlog: median {}, slowest {}",
        ms(percentile(&mut waits, 50.0)),
        ms(percentile(&mut waits, 100.0))
    );
    println!("computer moves (level medium)      without backlog   with backlog");
    for (name, p) in [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("max", 100.0)] {
        let (mut a, mut b) = (quiet.clone(), busy.clone());
        println!("  {name:<33}{:>15}{:>15}", ms(percentile(&mut a, p)), ms(percentile(&mut b, p)));
    }
    let _ = stop.send(());
    pool.await.context("the pool task")?.context("the pool")?;
    Ok(())
}

/// `moves` computer moves, one at a time, from positions along `games`.
async fn move_latencies(
    client: &EngineClient<Channel>,
    games: &[Vec<String>],
    moves: usize,
) -> anyhow::Result<Vec<Duration>> {
    let mut latencies = Vec::with_capacity(moves);
    for i in 0..moves {
        let game = &games[i % games.len()];
        let ply = (i * 7) % game.len().max(1);
        let request = BestMoveRequest {
            variant: Variant::Atomic.into(),
            level: Level::Medium.into(),
            moves: game[..ply].to_vec(),
            seed: i as u64,
            ..Default::default()
        };
        let sent = Instant::now();
        let answer = client.clone().best_move(request).await.context("a computer move")?.into_inner();
        latencies.push(sent.elapsed());
        ensure!(!answer.uci.is_empty(), "a computer move without a move");
    }
    Ok(latencies)
}

/// One game's analysis: the positions scored and the time from request to answer.
async fn analyse(mut client: EngineClient<Channel>, moves: Vec<String>) -> anyhow::Result<(usize, Duration)> {
    let sent = Instant::now();
    let request = AnalyseRequest { variant: Variant::Atomic.into(), moves, ..Default::default() };
    let answer = client.analyse(request).await.context("an analysis")?.into_inner();
    let scored = answer.positions.iter().filter(|p| p.cp.is_some() || p.mate.is_some() || !p.result.is_empty()).count();
    Ok((scored, sent.elapsed()))
}

/// An atomic game of up to `plies` moves, each chosen from the legal ones
/// by a fixed rule from `seed`, that never ends early: moves that would
/// end it are passed over while others exist.
fn fixed_game(plies: usize, seed: u64) -> Vec<String> {
    let mut game = Game::new(Position::new(fogblast_rules::Variant::Atomic));
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while game.ply() < plies && game.outcome().is_none() {
        let legal = game.position().legal_moves();
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let start = (state >> 33) as usize % legal.len();
        let chosen = (0..legal.len()).map(|k| legal[(start + k) % legal.len()]).find(|&m| {
            let mut next = game.clone();
            next.play(m).is_ok() && next.outcome().is_none()
        });
        match chosen {
            Some(m) => game.play(m).expect("a legal move"),
            None => break,
        };
    }
    game.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect()
}

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
