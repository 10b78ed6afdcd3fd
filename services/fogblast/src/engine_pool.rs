//! `fogblast engine`: runs the engine pool service on its own until SIGINT
//! or SIGTERM, then drains it.

use std::io::IsTerminal;

use anyhow::Context;
use fogblast_engine_service::EngineConfig;
use tokio::net::TcpListener;

pub fn run(config: EngineConfig) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let grpc = TcpListener::bind(config.listen).await.with_context(|| format!("listening on {}", config.listen))?;
        let metrics = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| format!("listening on {}", config.metrics_listen))?;
        let shutdown = shutdown_signal().context("installing signal handlers")?;
        fogblast_engine_service::run(config, grpc, metrics, shutdown).await?;
        Ok(())
    })
}

/// Completes on the first SIGINT or SIGTERM.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => tracing::info!(signal = "sigint", "signal received"),
                _ = terminate.recv() => tracing::info!(signal = "sigterm", "signal received"),
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
