//! `fogblast game`: runs one game shard until SIGINT or SIGTERM, then gives
//! up its lease so the other shards take its games at once.

use anyhow::Context;
use fogblast_game_service::GameConfig;
use tokio::net::TcpListener;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct GameArgs {
    #[command(flatten)]
    pub config: GameConfig,
    #[command(flatten)]
    pub backends: BackendArgs,
}

pub fn run(args: GameArgs) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let mut config = args.config;
        // The in-process bus keeps every durable message in memory, and no
        // outside consumer can read it.
        config.settings.public_events &= args.backends.nats_url.is_some();
        let store = backends::store(&args.backends).await?;
        let bus = backends::bus(&args.backends).await?;
        let grpc = TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let http = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| format!("listening on {}", config.metrics_listen))?;
        let shutdown = crate::signals::shutdown_signal().context("installing signal handlers")?;
        fogblast_game_service::run(config, store, bus, grpc, http, shutdown).await?;
        Ok(())
    })
}
