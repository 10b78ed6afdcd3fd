//! `fogblast rating`: runs the rating service until SIGINT or SIGTERM.

use anyhow::Context;
use fogblast_rating::RatingConfig;
use tokio::net::TcpListener;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct RatingArgs {
    #[command(flatten)]
    pub config: RatingConfig,
    #[command(flatten)]
    pub backends: BackendArgs,
}

pub fn run(args: RatingArgs) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let config = args.config;
        let bus = backends::bus(&args.backends).await?;
        let grpc = TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let http = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| format!("listening on {}", config.metrics_listen))?;
        let shutdown = crate::signals::shutdown_signal().context("installing signal handlers")?;
        fogblast_rating::run(config, bus, grpc, http, shutdown).await?;
        Ok(())
    })
}
