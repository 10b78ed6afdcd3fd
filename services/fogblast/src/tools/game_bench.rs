//! `fogblast-tools game-bench`: one game shard on a real Redis, driven over gRPC
//! by many concurrent games of random legal moves. Prints moves applied
//! per second and the MakeMove latency percentiles. It checks the work it
//! timed: every game's move list, read back from the shard, must hold
//! exactly the moves that were acknowledged.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use fogblast_bus::MemoryBus;
use fogblast_game_service::GameConfig;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    ColorChoice, Command, CreateGameRequest, GetStateRequest, JoinGameRequest, Move, Resign, Variant as WireVariant,
};
use fogblast_rules::{CastlingMode, Game, Position, Variant};
use fogblast_store::{Durability, GameStore, RedisStore};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::net::TcpListener;
use tonic::transport::Channel;

#[derive(Debug, clap::Args)]
pub struct GameBenchArgs {
    /// The Redis to measure against.
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    /// Games played at once.
    #[arg(long, default_value_t = 32)]
    games: u32,
    /// Moves to apply in all.
    #[arg(long, default_value_t = 20_000)]
    moves: u64,
    #[arg(long, default_value = "atomic")]
    variant: Variant,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Acknowledge each move only once this many replicas of the Redis confirmed it (0: once applied).
    #[arg(long, default_value_t = 0)]
    wait_replicas: u32,
    /// How often the shard reads Redis's clock, in ms (0: for every command), as `--redis-clock-sync-ms`.
    #[arg(long, default_value_t = 500)]
    clock_sync_ms: u64,
}

pub fn run(args: &GameBenchArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(bench(args))
}

async fn bench(args: &GameBenchArgs) -> anyhow::Result<()> {
    let prefix = format!("fogblast-bench-{:08x}:", rand::random::<u32>());
    let store: Arc<dyn GameStore> = Arc::new(
        RedisStore::connect(&args.redis_url, &prefix)
            .await
            .context("connecting to redis")?
            .with_durability(if args.wait_replicas == 0 {
                Durability::Applied
            } else {
                Durability::Replicated { replicas: args.wait_replicas, timeout: Duration::from_millis(300) }
            })
            .with_clock_sync(Duration::from_millis(args.clock_sync_ms)),
    );
    let grpc = TcpListener::bind("127.0.0.1:0").await?;
    let http = TcpListener::bind("127.0.0.1:0").await?;
    let addr = format!("http://{}", grpc.local_addr()?);
    // Finished games leave Redis soon after, so a run leaves little behind.
    let mut config = GameConfig::default();
    config.settings.finished_ttl_ms = 10_000;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shard = tokio::spawn(fogblast_game_service::run(
        config,
        store.clone(),
        Arc::new(MemoryBus::new()),
        grpc,
        http,
        async {
            let _ = stopped.await;
        },
    ));
    while store.members().await?.is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let client = GameClient::connect(addr).await.context("connecting to the shard")?;

    let applied = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..args.games)
        .map(|worker| {
            let client = client.clone();
            let applied = applied.clone();
            let (total, variant, seed) = (args.moves, args.variant, args.seed ^ u64::from(worker) << 32);
            tokio::spawn(async move { play_games(client, worker, variant, seed, total, applied).await })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut games = 0;
    for worker in workers {
        let (worker_latencies, worker_games) = worker.await??;
        latencies.extend(worker_latencies);
        games += worker_games;
    }
    let elapsed = started.elapsed();
    let _ = stop.send(());
    shard.await??;

    ensure!(latencies.len() as u64 >= args.moves, "only {} moves were applied", latencies.len());
    latencies.sort_unstable();
    let percentile = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize];
    println!("variant {}  games {games}  concurrent {}", args.variant.name(), args.games);
    println!(
        "moves {}  in {:.2} s  = {:.0} moves/s on one shard",
        latencies.len(),
        elapsed.as_secs_f64(),
        latencies.len() as f64 / elapsed.as_secs_f64()
    );
    println!(
        "MakeMove latency  p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
        percentile(0.50).as_secs_f64() * 1e3,
        percentile(0.99).as_secs_f64() * 1e3,
        latencies[latencies.len() - 1].as_secs_f64() * 1e3
    );
    Ok(())
}

/// Plays games one after another until the shared count reaches `total`;
/// returns each move's latency and the number of games played.
async fn play_games(
    mut client: GameClient<Channel>,
    worker: u32,
    variant: Variant,
    seed: u64,
    total: u64,
    applied: Arc<AtomicU64>,
) -> anyhow::Result<(Vec<Duration>, u32)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut latencies = Vec::new();
    let mut games = 0;
    while applied.load(Ordering::Relaxed) < total {
        let (white, black) = (format!("bench{worker}w"), format!("bench{worker}b"));
        let created = client
            .create_game(CreateGameRequest {
                player_id: white.clone(),
                variant: WireVariant::from(variant) as i32,
                color: ColorChoice::ChooseWhite as i32,
                ..Default::default()
            })
            .await?
            .into_inner();
        let game_id = created.game_id;
        client
            .join_game(JoinGameRequest { player_id: black.clone(), code: created.code, ..Default::default() })
            .await?;
        let mut game = Game::new(Position::new(variant));
        while game.outcome().is_none() && game.ply() < 200 && applied.load(Ordering::Relaxed) < total {
            let moves = game.position().legal_moves();
            let m = moves[rng.random_range(0..moves.len())];
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let player = if game.ply().is_multiple_of(2) { &white } else { &black };
            let action = Action::Move(Move { uci, ply: game.ply() as u32, lag_ms: 0, waited_ms: 0 });
            let request = Command::new(game_id.as_str(), player.as_str(), action);
            let sent = Instant::now();
            client.execute(request).await?;
            latencies.push(sent.elapsed());
            applied.fetch_add(1, Ordering::Relaxed);
            game.play(m)?;
        }
        let state = client
            .get_state(GetStateRequest { game_id: game_id.clone(), player_id: white.clone() })
            .await?
            .into_inner();
        ensure!(
            state.moves.len() == game.ply(),
            "game {game_id}: {} moves stored, {} acknowledged",
            state.moves.len(),
            game.ply()
        );
        if game.outcome().is_none() {
            client.execute(Command::new(game_id, white, Action::Resign(Resign {}))).await?;
        }
        games += 1;
    }
    Ok((latencies, games))
}
