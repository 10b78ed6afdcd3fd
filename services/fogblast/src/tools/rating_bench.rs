//! `fogblast-tools rating-bench`: how many finished games per second the rating
//! service archives and rates. It publishes rated games to a stream of its
//! own on NATS JetStream, runs the service on a fresh Postgres database,
//! and times until every game is in. It checks the work it timed: every
//! game archived once and rated once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use bytes::Bytes;
use fogblast_bus::{EventBus, NatsBus, NatsConfig};
use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::game::{EndReason, Variant};
use fogblast_rating::RatingConfig;
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sqlx::Connection;
use tokio::net::TcpListener;

#[derive(Debug, clap::Args)]
pub struct RatingBenchArgs {
    /// A Postgres server; the bench makes a database of its own there and drops it after.
    #[arg(long, env = "FOGBLAST_BENCH_POSTGRES", default_value = "postgres://postgres@127.0.0.1:5432")]
    postgres: String,
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats_url: String,
    /// Finished games to apply.
    #[arg(long, default_value_t = 5_000)]
    games: u32,
    /// Players the games are drawn between.
    #[arg(long, default_value_t = 500)]
    players: u32,
}

pub fn run(args: &RatingBenchArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(bench(args))
}

async fn bench(args: &RatingBenchArgs) -> anyhow::Result<()> {
    let tag = format!("{:08x}", rand::random::<u32>());
    let database = format!("fogblast_bench_{tag}");
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", args.postgres)).await.context("postgres")?;
    sqlx::query(&format!("CREATE DATABASE {database}")).execute(&mut admin).await?;
    let result = measure(args, &tag, &format!("{}/{database}", args.postgres)).await;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).execute(&mut admin).await?;
    let nats = nats_config(args, &tag);
    if let Ok(client) = async_nats::connect(&nats.url).await {
        let jetstream = async_nats::jetstream::new(client);
        let _ = jetstream.delete_stream(&nats.stream).await;
        let _ = jetstream.delete_stream(fogblast_bus::public_stream(&nats.stream)).await;
    }
    result
}

fn nats_config(args: &RatingBenchArgs, tag: &str) -> NatsConfig {
    NatsConfig {
        url: args.nats_url.clone(),
        stream: format!("FOGBLAST_BENCH_{}", tag.to_ascii_uppercase()),
        subject_prefix: format!("bench_{tag}."),
        max_bytes: 256 << 20,
        ..NatsConfig::default()
    }
}

async fn measure(args: &RatingBenchArgs, tag: &str, database_url: &str) -> anyhow::Result<()> {
    let bus: Arc<dyn EventBus> = Arc::new(NatsBus::connect(nats_config(args, tag)).await?);
    let mut rng = StdRng::seed_from_u64(1);
    for i in 0..args.games {
        let white = rng.random_range(0..args.players);
        let black = (white + rng.random_range(1..args.players)) % args.players;
        let result = ["1-0", "0-1", "1/2-1/2"][rng.random_range(0..3)];
        let player = |n: u32| FinishedPlayer { id: format!("p{n}"), name: format!("player {n}"), ..Default::default() };
        let game = GameFinished {
            game_id: format!("bench{i}"),
            variant: Variant::Atomic as i32,
            initial_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            white: Some(player(white)),
            black: Some(player(black)),
            rated: true,
            result: result.into(),
            reason: EndReason::Resign as i32,
            moves: vec!["e2e4".into(), "e7e5".into()],
            ended_at_ms: 1_700_000_000_000 + u64::from(i),
            ..Default::default()
        };
        let id = game.game_id.clone();
        bus.publish_durable("games.finished.atomic", &id, Vec::new(), Bytes::from(game.encode_to_vec())).await?;
    }
    let grpc = TcpListener::bind("127.0.0.1:0").await?;
    let http = TcpListener::bind("127.0.0.1:0").await?;
    let mut config = RatingConfig::default();
    config.settings.database_url = database_url.to_owned();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let started = Instant::now();
    let service = tokio::spawn(fogblast_rating::run(config, bus, grpc, http, async {
        let _ = stopped.await;
    }));
    let mut db = sqlx::PgConnection::connect(database_url).await?;
    let games = loop {
        let counted: Result<(i64,), _> = sqlx::query_as("SELECT COUNT(*) FROM rated_games").fetch_one(&mut db).await;
        let games = counted.map_or(0, |(n,)| n);
        if games >= i64::from(args.games) || started.elapsed() > Duration::from_secs(600) {
            break games;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let elapsed = started.elapsed();
    let _ = stop.send(());
    service.await??;
    let (archived,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM games").fetch_one(&mut db).await?;
    let (ratings,): (i64,) = sqlx::query_as("SELECT SUM(rated_games)::BIGINT FROM ratings").fetch_one(&mut db).await?;
    ensure!(
        games == i64::from(args.games) && archived == games,
        "{archived} archived, {games} rated of {}",
        args.games
    );
    ensure!(ratings == 2 * games, "{ratings} rating updates for {games} games");
    println!("games {games}  players {}  in {:.2} s (schema migration included)", args.players, elapsed.as_secs_f64());
    println!("{:.0} finished games archived and rated per second", games as f64 / elapsed.as_secs_f64());
    Ok(())
}
