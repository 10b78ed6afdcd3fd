//! `fogblast gateway`: runs one gateway until SIGINT or SIGTERM, then tells
//! its clients to reconnect elsewhere and exits within the drain time.

use anyhow::Context;
use fogblast_gateway::GatewayConfig;
use tokio::net::TcpListener;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct GatewayArgs {
    #[command(flatten)]
    pub config: GatewayConfig,
    #[command(flatten)]
    pub backends: BackendArgs,
}

pub fn run(args: GatewayArgs) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let config = args.config;
        let store = backends::store(&args.backends).await?;
        let bus = backends::bus(&args.backends).await?;
        let listener =
            TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let shutdown = crate::signals::shutdown_signal().context("installing signal handlers")?;
        fogblast_gateway::run(config, store, bus, listener, shutdown).await?;
        Ok(())
    })
}
