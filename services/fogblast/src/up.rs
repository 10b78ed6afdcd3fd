//! `fogblast up`: the whole of Fogblast in one process. The engine pool, a
//! game shard, the rating service, the matchmaker and a gateway run side by
//! side on the embedded adapters (in-process stores and bus, SQLite for the
//! archive), or on Redis, NATS and Postgres when their URLs are set, so one
//! command on a laptop gives a server a browser can reach, with the lobby
//! and quick pairing.
//!
//! Every service's settings that mean something in one process (limits,
//! timeouts, pool sizes, the archive) are flattened in here with the same
//! flags and environment variables as the service's own command; only the
//! addresses the services use to find each other are wired by `up` itself.
//! Its topology is fixed (one of each service) and its profile is the
//! user's flags: with none given, `fogblast_topology::Profile::production`,
//! the services' own defaults. The clusters the tests and tools start
//! describe themselves with the same types (docs/testing.md, "One topology").

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Context;
use fogblast_bus::{EventBus, MemoryBus};
use fogblast_engine_service::{AnalysisSettings, EngineConfig, EngineSettings};
use fogblast_game_service::{GameConfig, GameSettings};
use fogblast_gateway::{GatewayConfig, GatewaySettings};
use fogblast_matchmaker::{MatchStore, MatchmakerConfig, MatchmakerSettings, ShardRouter};
use fogblast_rating::{RatingConfig, RatingSettings};
use fogblast_store::{FileStore, GameStore, Membership};
use rand::Rng;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::info;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// Where browsers and bots connect.
    #[arg(long, env = "FOGBLAST_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Where the gateway's Prometheus `/metrics` is served [default: nowhere].
    #[arg(long, env = "FOGBLAST_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    backends: BackendArgs,
    /// Without REDIS_URL: the file that keeps live games, clocks, deadlines and join codes, so a restart or a crash
    /// loses no game in progress (`:memory:` keeps them in this process only). Without NATS_URL it also keeps the
    /// in-process bus's log, so a finished game not yet archived and rated survives a crash too.
    #[arg(long, env = "FOGBLAST_LIVE_STORE", default_value = "fogblast-live.db")]
    live_store: String,
    #[command(flatten, next_help_heading = "Gateway")]
    gateway: GatewaySettings,
    #[command(flatten, next_help_heading = "Game shard")]
    game: GameSettings,
    #[command(flatten, next_help_heading = "Engine pool")]
    engine: EngineSettings,
    #[command(flatten, next_help_heading = "Engine pool")]
    analysis: AnalysisSettings,
    #[command(flatten, next_help_heading = "Matchmaker")]
    matchmaker: MatchmakerSettings,
    #[command(flatten, next_help_heading = "Rating service")]
    rating: RatingSettings,
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
        info!(
            "embedded mode: one process; live games in --live-store, finished games in --database-url (set REDIS_URL and NATS_URL to share them)"
        );
    } else {
        info!(redis = ?args.backends.redis_url, nats = ?args.backends.nats_url, "distributed mode");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(up(args))
}

/// The live games' store and the event bus: Redis and NATS when given,
/// else the live-game file (which then also keeps the token secret, so
/// players' tokens outlive a restart as their games do), or memory alone.
async fn live_state(args: &mut UpArgs) -> anyhow::Result<(Arc<dyn GameStore>, Arc<dyn EventBus>)> {
    let store: Arc<dyn GameStore> = if args.backends.redis_url.is_some() || args.live_store == ":memory:" {
        backends::store(&args.backends).await?
    } else {
        let path = std::path::Path::new(&args.live_store);
        let file =
            FileStore::open(path).await.with_context(|| format!("opening the live-game file {}", path.display()))?;
        info!(path = %path.display(), "store: live games kept in a file");
        if args.gateway.token_secret.is_none() {
            let fresh: String = rand::rng().sample_iter(rand::distr::Alphanumeric).take(43).map(char::from).collect();
            args.gateway.token_secret = Some(file.setting_or_insert("token_secret", &fresh).await?);
        }
        Arc::new(file)
    };
    let bus: Arc<dyn EventBus> = if args.backends.nats_url.is_some() || args.live_store == ":memory:" {
        backends::bus(&args.backends).await?
    } else {
        let path = std::path::Path::new(&args.live_store);
        let bus = MemoryBus::open(path).await.with_context(|| format!("opening the bus log in {}", path.display()))?;
        info!(path = %path.display(), "event bus: in-process, its log kept in the live-game file");
        Arc::new(bus)
    };
    Ok((store, bus))
}

async fn up(mut args: UpArgs) -> anyhow::Result<()> {
    let (store, bus) = live_state(&mut args).await?;
    let (stop_tx, stop) = watch::channel(false);
    let signal = crate::signals::shutdown_signal().context("installing signal handlers")?;
    tokio::spawn(async move {
        signal.await;
        let _ = stop_tx.send(true);
    });

    let engine = EngineConfig { settings: args.engine, analysis: args.analysis, ..EngineConfig::default() };
    let (engine_grpc, engine_http) = (loopback().await?, loopback().await?);
    let engine_addr = format!("http://{}", engine_grpc.local_addr()?);
    let engine = tokio::spawn(fogblast_engine_service::run_with_analysis_queue(
        engine,
        bus.clone(),
        engine_grpc,
        engine_http,
        on_stop(&stop),
    ));

    let mut settings = args.game;
    settings.public_events &= args.backends.nats_url.is_some();
    let game = GameConfig {
        engine_addrs: vec![engine_addr],
        shard_id: Some("local".to_owned()),
        settings,
        ..GameConfig::default()
    };
    let (game_grpc, game_http) = (loopback().await?, loopback().await?);
    let game = tokio::spawn(fogblast_game_service::run(
        game,
        store.clone(),
        bus.clone(),
        game_grpc,
        game_http,
        on_stop(&stop),
    ));

    let rating = RatingConfig { settings: args.rating, ..RatingConfig::default() };
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
    let matchmaker = MatchmakerConfig {
        rating_addr: Some(rating_addr.clone()),
        settings: args.matchmaker,
        ..MatchmakerConfig::default()
    };
    let membership: Arc<dyn Membership> = store.clone();
    let games = ShardRouter::new(membership, matchmaker.settings.route_timeout()).await;
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
        metrics_listen: args.metrics_listen,
        settings: args.gateway,
        rating_addr: Some(rating_addr),
        matchmaker_addr: Some(matchmaker_addr),
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
