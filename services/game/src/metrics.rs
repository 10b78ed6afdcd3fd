//! What a game shard reports to Prometheus, served by the shared admin
//! server (`fogblast_runtime::serve_admin`) with its readiness: the shard
//! holds its lease and may serve. Each shard has its own registry, so
//! several shards in one process keep separate counts.

use std::sync::Arc;

use fogblast_runtime::Readiness;
use prometheus::{Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry};

use crate::ownership::Ownership;

/// Command latency buckets, with bounds at the service-level objectives'
/// thresholds: 50 ms for a move's acknowledgement, 1 s for a stall
/// (docs/operations.md, "Service-level objectives").
const COMMAND_BUCKETS: [f64; 16] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Commands answered, by RPC and outcome code.
    pub commands: IntCounterVec,
    /// Time to answer a command, by RPC: for `make_move` this is the
    /// latency of a move the service promises.
    pub command_seconds: HistogramVec,
    pub moves: IntCounter,
    /// Commits refused because another writer got there first.
    pub commit_conflicts: IntCounter,
    /// Shards this one saw leave the membership (dead or drained): each
    /// such departure is a failover of that shard's games to the others.
    pub shards_departed: IntCounter,
    /// Shards in the membership as this one last read it.
    pub shards_live: IntGauge,
    pub games_finished: IntCounter,
    pub games_published: IntCounter,
    /// Time from a game's end to the stream's acknowledgement of it: how
    /// long it waited in the outbox.
    pub publish_delay_seconds: Histogram,
    /// Public events the stream took (both encodings).
    pub public_events_published: IntCounter,
    /// Public events dropped because a game's queue was full.
    pub public_events_dropped: IntCounter,
    pub games_cached: IntGauge,
    pub watchers: IntGauge,
}

impl Metrics {
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let commands = IntCounterVec::new(
            Opts::new("fogblast_game_commands_total", "Commands answered, by rpc and outcome."),
            &["rpc", "outcome"],
        )?;
        let command_seconds = HistogramVec::new(
            HistogramOpts::new("fogblast_game_command_seconds", "Time to answer a command, by rpc.")
                .buckets(COMMAND_BUCKETS.to_vec()),
            &["rpc"],
        )?;
        let moves = IntCounter::new("fogblast_game_moves_total", "Moves applied (players' and the computer's).")?;
        let commit_conflicts =
            IntCounter::new("fogblast_game_commit_conflicts_total", "Commits refused for a stale version or epoch.")?;
        let games_finished = IntCounter::new("fogblast_game_games_finished_total", "Games this shard ended.")?;
        let games_published =
            IntCounter::new("fogblast_game_games_published_total", "Finished games acknowledged by the stream.")?;
        let publish_delay_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "fogblast_game_publish_delay_seconds",
                "Time from a game's end to the stream's acknowledgement of it (its time in the outbox).",
            )
            .buckets(vec![0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0]),
        )?;
        let public_events_published = IntCounter::new(
            "fogblast_game_public_events_published_total",
            "Public stream events acknowledged by the stream (in every configured encoding).",
        )?;
        let public_events_dropped = IntCounter::new(
            "fogblast_game_public_events_dropped_total",
            "Public stream events dropped because their game's queue was full while NATS was away.",
        )?;
        let games_cached = IntGauge::new("fogblast_game_games_cached", "Games held in memory by this shard.")?;
        let watchers = IntGauge::new("fogblast_game_watch_streams", "Open Watch streams.")?;
        registry.register(Box::new(commands.clone()))?;
        registry.register(Box::new(command_seconds.clone()))?;
        registry.register(Box::new(moves.clone()))?;
        let shards_departed = IntCounter::new(
            "fogblast_game_shards_departed_total",
            "Shards seen leaving the membership (each a failover of its games).",
        )?;
        let shards_live = IntGauge::new("fogblast_game_shards_live", "Shards in the membership as last read.")?;
        registry.register(Box::new(commit_conflicts.clone()))?;
        registry.register(Box::new(shards_departed.clone()))?;
        registry.register(Box::new(shards_live.clone()))?;
        registry.register(Box::new(games_finished.clone()))?;
        registry.register(Box::new(games_published.clone()))?;
        registry.register(Box::new(publish_delay_seconds.clone()))?;
        registry.register(Box::new(public_events_published.clone()))?;
        registry.register(Box::new(public_events_dropped.clone()))?;
        registry.register(Box::new(games_cached.clone()))?;
        registry.register(Box::new(watchers.clone()))?;
        Ok(Metrics {
            registry,
            commands,
            command_seconds,
            moves,
            commit_conflicts,
            shards_departed,
            shards_live,
            games_finished,
            games_published,
            publish_delay_seconds,
            public_events_published,
            public_events_dropped,
            games_cached,
            watchers,
        })
    }

    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }
}

/// Ready while the shard holds its lease.
pub fn readiness(ownership: Arc<Ownership>) -> Readiness {
    Arc::new(move || {
        ownership.serving().then_some(()).ok_or_else(|| "not serving: the shard holds no lease".to_owned())
    })
}
