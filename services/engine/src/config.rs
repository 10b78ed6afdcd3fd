//! The engine pool's settings, read once from flags and the environment by
//! the `fogblast` binary and passed down; tests build the struct directly.
//!
//! [`EngineSettings`] (threads, queue, hash) means the same whether the pool
//! runs on its own or inside `fogblast up`, so both commands flatten it and
//! take the same flags and variables.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::time::Duration;

/// How the engine pool runs.
#[derive(Clone, Debug, clap::Args)]
pub struct EngineConfig {
    /// Address the gRPC service listens on.
    #[arg(long, env = "FOGBLAST_ENGINE_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,

    /// Address the Prometheus `/metrics` endpoint listens on.
    #[arg(long, env = "FOGBLAST_ENGINE_METRICS_LISTEN", default_value = DEFAULT_METRICS_LISTEN)]
    pub metrics_listen: SocketAddr,

    #[command(flatten)]
    pub settings: EngineSettings,

    #[command(flatten)]
    pub analysis: AnalysisSettings,

    /// On shutdown, how long requests already accepted may take to finish, in milliseconds.
    #[arg(long, env = "FOGBLAST_ENGINE_DRAIN_MS", default_value_t = DEFAULT_DRAIN_MS)]
    pub drain_ms: u64,
}

/// The pool's size: threads, queue and hash.
#[derive(Clone, Debug, clap::Args)]
pub struct EngineSettings {
    /// Search threads, each searching one request at a time [default: the machine's cores].
    #[arg(long, alias = "engine-workers", env = "FOGBLAST_ENGINE_WORKERS", default_value_t = default_workers(), hide_default_value = true,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: u32,

    /// Requests that may wait for a free thread; past that, calls fail at once with RESOURCE_EXHAUSTED.
    #[arg(long, env = "FOGBLAST_ENGINE_QUEUE", default_value_t = DEFAULT_QUEUE,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub queue: u32,

    /// Transposition table size of each search thread, in MiB.
    #[arg(long, env = "FOGBLAST_ENGINE_HASH_MB", default_value_t = DEFAULT_HASH_MB,
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub hash_mb: u32,
}

/// The analysis lane: how many threads it may hold, how much may wait, how
/// deep it searches.
#[derive(Clone, Debug, clap::Args)]
pub struct AnalysisSettings {
    /// Threads that may analyse at once [default: all but one of the search threads, at least one].
    /// Computer moves preempt analysis on any thread.
    #[arg(long, env = "FOGBLAST_ENGINE_ANALYSIS_WORKERS", default_value_t = 0, hide_default_value = true,
          value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub analysis_workers: u32,

    /// Analyses that may wait for a thread; past that, Analyse fails at once with RESOURCE_EXHAUSTED.
    #[arg(long, env = "FOGBLAST_ENGINE_ANALYSIS_QUEUE", default_value_t = DEFAULT_ANALYSIS_QUEUE,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub analysis_queue: u32,

    /// Search depth of each analysed position.
    #[arg(long, env = "FOGBLAST_ENGINE_ANALYSIS_DEPTH", default_value_t = DEFAULT_ANALYSIS_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=30))]
    pub analysis_depth: u32,

    /// Durable consumer name of the analysis queue (`analysis.requested.>`); replicas with one name share it.
    #[arg(long, env = "FOGBLAST_ENGINE_ANALYSIS_CONSUMER", default_value = "analysis")]
    pub analysis_consumer: String,

    /// How long an analysis taken from the queue may go without word from its replica (progress
    /// is reported every third of this) before it goes to another, in milliseconds.
    #[arg(long, env = "FOGBLAST_ENGINE_ANALYSIS_ACK_WAIT_MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(300..=3_600_000))]
    pub analysis_ack_wait_ms: u64,
}

impl AnalysisSettings {
    pub fn ack_wait(&self) -> Duration {
        Duration::from_millis(self.analysis_ack_wait_ms)
    }

    /// The threads analysis may hold out of `workers`: as set, or all but
    /// one, and never more than there are or fewer than one.
    pub fn threads(&self, workers: u32) -> u32 {
        let wanted = if self.analysis_workers == 0 { workers.saturating_sub(1) } else { self.analysis_workers };
        wanted.clamp(1, workers.max(1))
    }
}

impl Default for AnalysisSettings {
    /// The defaults of the flags, without reading the environment.
    fn default() -> AnalysisSettings {
        fogblast_runtime::defaults()
    }
}

const DEFAULT_ANALYSIS_QUEUE: u32 = 16;
const DEFAULT_ANALYSIS_DEPTH: u32 = 8;
const DEFAULT_LISTEN: &str = "0.0.0.0:50053";
const DEFAULT_METRICS_LISTEN: &str = "0.0.0.0:9103";
const DEFAULT_QUEUE: u32 = 64;
const DEFAULT_HASH_MB: u32 = 16;
const DEFAULT_DRAIN_MS: u64 = 10_000;

fn default_workers() -> u32 {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get).try_into().unwrap_or(1)
}

impl EngineConfig {
    pub fn drain_timeout(&self) -> Duration {
        Duration::from_millis(self.drain_ms)
    }
}

impl Default for EngineConfig {
    /// The defaults of the flags, without reading the environment.
    fn default() -> EngineConfig {
        fogblast_runtime::defaults()
    }
}

impl Default for EngineSettings {
    /// The defaults of the flags, without reading the environment.
    fn default() -> EngineSettings {
        fogblast_runtime::defaults()
    }
}
