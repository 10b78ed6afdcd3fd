//! `fogblast matchmaker`: runs one matchmaker replica until SIGINT or
//! SIGTERM, then lets go of its pools so other replicas take them at once.
//! The matchmaker keeps its state in Redis (it has no in-process store),
//! and finds the game shards through the same Redis's membership.

use std::sync::Arc;

use anyhow::Context;
use fogblast_matchmaker::{MatchStore, MatchmakerConfig, ShardRouter};
use fogblast_store::Membership;
use tokio::net::TcpListener;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct MatchmakerArgs {
    #[command(flatten)]
    pub config: MatchmakerConfig,
    #[command(flatten)]
    pub backends: BackendArgs,
}

pub fn run(args: MatchmakerArgs) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let config = args.config;
        let url = args.backends.redis_url.clone().context("the matchmaker keeps its state in Redis: set REDIS_URL")?;
        let store = MatchStore::connect(&url, &args.backends.redis_prefix)
            .await
            .with_context(|| format!("connecting to {url}"))?;
        let membership: Arc<dyn Membership> = backends::store(&args.backends).await?;
        let games = ShardRouter::new(membership, config.settings.route_timeout()).await;
        let bus = backends::bus(&args.backends).await?;
        let grpc = TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let http = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| format!("listening on {}", config.metrics_listen))?;
        let shutdown = crate::signals::shutdown_signal().context("installing signal handlers")?;
        fogblast_matchmaker::run(config, store, bus, games, grpc, http, shutdown).await?;
        Ok(())
    })
}
