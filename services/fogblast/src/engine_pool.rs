//! `fogblast engine`: runs the engine pool service on its own until SIGINT
//! or SIGTERM, then drains it.

use anyhow::Context;
use fogblast_engine_service::EngineConfig;
use tokio::net::TcpListener;

pub fn run(config: EngineConfig) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let grpc = TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let metrics = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| format!("listening on {}", config.metrics_listen))?;
        let shutdown = crate::signals::shutdown_signal().context("installing signal handlers")?;
        fogblast_engine_service::run(config, grpc, metrics, shutdown).await?;
        Ok(())
    })
}
