//! What every long-running `fogblast` command shares: log output, and the
//! signals that start a graceful shutdown.

use std::sync::OnceLock;

static SERVICE: OnceLock<String> = OnceLock::new();

/// Names the service for logs and traces (`fogblast-<command>`).
pub fn set_service(command: &str) {
    let _ = SERVICE.set(format!("fogblast-{command}"));
}

/// Log lines at INFO and above, and OpenTelemetry trace export when
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is set; see docs/observability.md.
pub fn init_logging() {
    fogblast_telemetry::init(SERVICE.get().map_or("fogblast", String::as_str));
}

/// Completes on the first SIGINT or SIGTERM.
pub fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
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
