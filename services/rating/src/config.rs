//! The rating service's settings, read once from flags and the environment
//! by the `fogblast` binary and passed down; tests build the struct directly.
//!
//! [`RatingSettings`] (the database, the consumer) means the same whether
//! the service runs on its own or inside `fogblast up`, so both commands
//! flatten it and take the same flags and variables.

use std::net::SocketAddr;
use std::time::Duration;

#[derive(Clone, Debug, clap::Args)]
pub struct RatingConfig {
    /// Address the gRPC service listens on.
    #[arg(long = "rating-listen", env = "FOGBLAST_RATING_LISTEN", default_value = "0.0.0.0:50054")]
    pub listen: SocketAddr,
    /// Address of `/metrics`, `/healthz` and `/readyz`.
    #[arg(long = "rating-metrics-listen", env = "FOGBLAST_RATING_METRICS_LISTEN", default_value = "0.0.0.0:9104")]
    pub metrics_listen: SocketAddr,
    /// On SIGTERM, how long calls already open may take before the service closes them, in ms.
    #[arg(long = "rating-drain-ms", env = "FOGBLAST_RATING_DRAIN_MS", default_value_t = 10_000)]
    pub drain_ms: u64,
    #[command(flatten)]
    pub settings: RatingSettings,
}

/// Where the archive lives and how the stream is consumed.
#[derive(Clone, Debug, clap::Args)]
pub struct RatingSettings {
    /// Postgres (`postgres://…`) or SQLite (`sqlite:fogblast.db`, `sqlite::memory:`) for ratings and the archive.
    #[arg(long = "database-url", env = "DATABASE_URL", default_value = "sqlite:fogblast.db?mode=rwc")]
    pub database_url: String,
    /// The durable consumer's name: replicas with the same name share the stream's work.
    #[arg(long = "rating-consumer", env = "FOGBLAST_RATING_CONSUMER", default_value = "rating")]
    pub consumer: String,
    /// A finished game not acknowledged within this many ms is delivered again.
    #[arg(long = "rating-ack-wait-ms", env = "FOGBLAST_RATING_ACK_WAIT_MS", default_value_t = 30_000)]
    pub ack_wait_ms: u64,
}

impl RatingConfig {
    pub fn drain(&self) -> Duration {
        Duration::from_millis(self.drain_ms)
    }
}

impl RatingSettings {
    pub fn ack_wait(&self) -> Duration {
        Duration::from_millis(self.ack_wait_ms)
    }
}

impl Default for RatingConfig {
    /// The defaults of the flags, without reading the environment.
    fn default() -> RatingConfig {
        fogblast_runtime::defaults()
    }
}

impl Default for RatingSettings {
    /// The defaults of the flags, without reading the environment.
    fn default() -> RatingSettings {
        fogblast_runtime::defaults()
    }
}
