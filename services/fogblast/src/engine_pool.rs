//! `fogblast engine`: runs the engine pool service on its own until SIGINT
//! or SIGTERM, then drains it. With NATS_URL it also takes analyses from
//! the durable analysis queue.

use anyhow::Context;
use fogblast_engine_service::EngineConfig;
use tokio::net::TcpListener;

use crate::backends::{self, BackendArgs};

#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    #[command(flatten)]
    pub config: EngineConfig,
    /// Only NATS_URL and its settings apply: the analysis queue [default: none, computer moves only].
    #[command(flatten)]
    pub backends: BackendArgs,
}

pub fn run(args: EngineArgs) -> anyhow::Result<()> {
    let config = args.config;
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let grpc = TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let metrics = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| format!("listening on {}", config.metrics_listen))?;
        let shutdown = crate::signals::shutdown_signal().context("installing signal handlers")?;
        if args.backends.nats_url.is_some() {
            let bus = backends::bus(&args.backends).await?;
            fogblast_engine_service::run_with_analysis_queue(config, bus, grpc, metrics, shutdown).await?;
        } else {
            fogblast_engine_service::run(config, grpc, metrics, shutdown).await?;
        }
        Ok(())
    })
}
