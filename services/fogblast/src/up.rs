//! `fogblast up`: the whole of Fogblast in one process. The engine pool, a
//! game shard, the rating service, the matchmaker and a gateway run side by
//! side on the embedded adapters (in-process stores and bus, SQLite for the
//! archive), or on Redis, NATS and Postgres when their URLs are set, so one
//! command on a laptop gives a server a browser can reach, with the lobby
//! and quick pairing.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Context;
use fogblast_engine_service::EngineConfig;
use fogblast_game_service::GameConfig;
use fogblast_gateway::GatewayConfig;
use fogblast_matchmaker::{MatchStore, MatchmakerConfig, ShardRouter};
use fogblast_rating::RatingConfig;
use fogblast_store::Membership;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::info;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// Where browsers and bots connect.
    #[arg(long, env = "FOGBLAST_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The archive and ratings: SQLite in a file here by default, or `postgres://…`.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite:fogblast.db?mode=rwc")]
    database_url: String,
    /// Search threads for the computer player [default: the machine's cores].
    #[arg(long, env = "FOGBLAST_ENGINE_WORKERS")]
    engine_workers: Option<u32>,
    /// Secret that signs player tokens; set it to keep players' identities across restarts [default: random].
    #[arg(long, env = "FOGBLAST_TOKEN_SECRET", hide_env_values = true)]
    token_secret: Option<String>,
    #[command(flatten)]
    backends: BackendArgs,
}

type Stopped = Pin<Box<dyn Future<Output = ()> + Send>>;

fn on_stop(stop: &watch::Receiver<bool>) -> Stopped {
    let mut stop = stop.clone();
    Box::pin(async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    })
}

async fn loopback() -> anyhow::Result<TcpListener> {
    TcpListener::bind("127.0.0.1:0").await.context("binding a loopback port")
}

pub fn run(args: UpArgs) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let embedded = args.backends.redis_url.is_none() && args.backends.nats_url.is_none();
    if embedded {
        info!("embedded mode: games and events live in this process (set REDIS_URL and NATS_URL to share them)");
    } else {
        info!(redis = ?args.backends.redis_url, nats = ?args.backends.nats_url, "distributed mode");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(up(args))
}

async fn up(args: UpArgs) -> anyhow::Result<()> {
    let store = backends::store(&args.backends).await?;
    let bus = backends::bus(&args.backends).await?;
    let (stop_tx, stop) = watch::channel(false);
    let signal = crate::signals::shutdown_signal().context("installing signal handlers")?;
    tokio::spawn(async move {
        signal.await;
        let _ = stop_tx.send(true);
    });

    let mut engine = EngineConfig::default();
    if let Some(workers) = args.engine_workers {
        engine.workers = workers;
    }
    let (engine_grpc, engine_http) = (loopback().await?, loopback().await?);
    let engine_addr = format!("http://{}", engine_grpc.local_addr()?);
    let engine = tokio::spawn(fogblast_engine_service::run(engine, engine_grpc, engine_http, on_stop(&stop)));

    let game =
        GameConfig { engine_addrs: vec![engine_addr], shard_id: Some("local".to_owned()), ..GameConfig::default() };
    let (game_grpc, game_http) = (loopback().await?, loopback().await?);
    let game = tokio::spawn(fogblast_game_service::run(
        game,
        store.clone(),
        bus.clone(),
        game_grpc,
        game_http,
        on_stop(&stop),
    ));

    let rating = RatingConfig { database_url: args.database_url.clone(), ..RatingConfig::default() };
    let (rating_grpc, rating_http) = (loopback().await?, loopback().await?);
    let rating_addr = format!("http://{}", rating_grpc.local_addr()?);
    let rating = tokio::spawn(fogblast_rating::run(rating, bus.clone(), rating_grpc, rating_http, on_stop(&stop)));

    // The matchmaker: on Redis with the rest when REDIS_URL is set, else in
    // this process's memory; it finds the shard through the same membership.
    let match_store = match &args.backends.redis_url {
        Some(url) => MatchStore::connect(url, &args.backends.redis_prefix)
            .await
            .with_context(|| format!("connecting the matchmaker to {url}"))?,
        None => MatchStore::in_memory(),
    };
    let matchmaker = MatchmakerConfig { rating_addr: Some(rating_addr.clone()), ..MatchmakerConfig::default() };
    let membership: Arc<dyn Membership> = store.clone();
    let games = ShardRouter::new(membership, matchmaker.route_timeout()).await;
    let (matchmaker_grpc, matchmaker_http) = (loopback().await?, loopback().await?);
    let matchmaker_addr = format!("http://{}", matchmaker_grpc.local_addr()?);
    let matchmaker = tokio::spawn(fogblast_matchmaker::run(
        matchmaker,
        match_store,
        bus.clone(),
        games,
        matchmaker_grpc,
        matchmaker_http,
        on_stop(&stop),
    ));

    let gateway = GatewayConfig {
        listen: args.listen,
        token_secret: args.token_secret,
        rating_addr: Some(rating_addr),
        matchmaker_addr: Some(matchmaker_addr),
        ..GatewayConfig::default()
    };
    let listener = TcpListener::bind(args.listen).await.with_context(|| format!("listening on {}", args.listen))?;
    info!(url = %format!("http://{}", listener.local_addr()?), "fogblast is up: open it in a browser");
    let gateway = tokio::spawn(fogblast_gateway::run(gateway, store, bus, listener, on_stop(&stop)));

    // The gateway drains first; the services behind it stop with it.
    gateway.await.context("the gateway task")??;
    matchmaker.await.context("the matchmaker task")??;
    rating.await.context("the rating task")??;
    game.await.context("the game task")??;
    engine.await.context("the engine task")??;
    info!("fogblast is down");
    Ok(())
}
