//! What the matchmaker reports to Prometheus, served by the shared admin
//! server (`fogblast_runtime::serve_admin`) with its readiness: ready while
//! Redis answers this replica's heartbeat.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fogblast_runtime::Readiness;
use prometheus::{
    exponential_buckets, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub commands: IntCounterVec,
    pub command_seconds: HistogramVec,
    pub waves: IntCounter,
    pub wave_seconds: Histogram,
    pub pairings: IntCounter,
    /// Pairs a wave chose but could not commit: `busy`, `stale`, `gone`.
    pub pairs_skipped: IntCounterVec,
    pub games_created: IntCounter,
    pub pairings_failed: IntCounter,
    pub wait_seconds: Histogram,
    pub rating_gap: Histogram,
    pub pools_held: IntGauge,
    /// Seekers left unpaired by the last wave of each pool this replica
    /// ran, summed over them into `seekers_waiting`.
    waiting_by_pool: std::sync::Mutex<std::collections::HashMap<String, i64>>,
    pub seekers_waiting: IntGauge,
    pub lobby_frames: IntCounter,
    pub ready: AtomicBool,
}

impl Metrics {
    /// Records `waiting` seekers left in `pool` after its wave; `None`: the
    /// pool is no longer paired here.
    pub fn pool_waiting(&self, pool: &str, waiting: Option<usize>) {
        let mut by_pool = self.waiting_by_pool.lock().expect("waiting lock");
        match waiting {
            Some(n) => by_pool.insert(pool.to_owned(), n as i64),
            None => by_pool.remove(pool),
        };
        self.seekers_waiting.set(by_pool.values().sum());
    }

    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let commands = IntCounterVec::new(
            Opts::new("fogblast_matchmaker_commands_total", "gRPC calls by method and outcome."),
            &["rpc", "outcome"],
        )?;
        let command_seconds = HistogramVec::new(
            HistogramOpts::new("fogblast_matchmaker_command_seconds", "gRPC call latency.")
                .buckets(exponential_buckets(0.0001, 2.0, 18)?),
            &["rpc"],
        )?;
        let waves = IntCounter::new("fogblast_matchmaker_waves_total", "Pairing waves run by this replica.")?;
        let wave_seconds = Histogram::with_opts(
            HistogramOpts::new("fogblast_matchmaker_wave_seconds", "Time of one wave: read, match, commit.")
                .buckets(exponential_buckets(0.0001, 2.0, 20)?),
        )?;
        let pairings = IntCounter::new("fogblast_matchmaker_pairings_total", "Pairs committed.")?;
        let pairs_skipped = IntCounterVec::new(
            Opts::new("fogblast_matchmaker_pairs_skipped_total", "Pairs chosen but not committed, by reason."),
            &["reason"],
        )?;
        let games_created = IntCounter::new("fogblast_matchmaker_games_total", "Paired games with both seated.")?;
        let pairings_failed =
            IntCounter::new("fogblast_matchmaker_pairings_failed_total", "Pairings given up without a game.")?;
        let wait_seconds = Histogram::with_opts(
            HistogramOpts::new("fogblast_matchmaker_wait_seconds", "Time from seek to pairing.")
                .buckets(exponential_buckets(0.05, 2.0, 14)?),
        )?;
        let rating_gap = Histogram::with_opts(
            HistogramOpts::new("fogblast_matchmaker_rating_gap", "Rating difference of paired players.")
                .buckets(vec![10.0, 25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0, 800.0, 1000.0]),
        )?;
        let pools_held = IntGauge::new("fogblast_matchmaker_pools_held", "Pools whose lease this replica holds.")?;
        let lobby_frames = IntCounter::new("fogblast_matchmaker_lobby_frames_total", "Lobby frames published.")?;
        let seekers_waiting = IntGauge::new(
            "fogblast_matchmaker_seekers_waiting",
            "Seekers left unpaired by the last wave of the pools this replica pairs.",
        )?;
        registry.register(Box::new(seekers_waiting.clone()))?;
        registry.register(Box::new(commands.clone()))?;
        registry.register(Box::new(command_seconds.clone()))?;
        registry.register(Box::new(waves.clone()))?;
        registry.register(Box::new(wave_seconds.clone()))?;
        registry.register(Box::new(pairings.clone()))?;
        registry.register(Box::new(pairs_skipped.clone()))?;
        registry.register(Box::new(games_created.clone()))?;
        registry.register(Box::new(pairings_failed.clone()))?;
        registry.register(Box::new(wait_seconds.clone()))?;
        registry.register(Box::new(rating_gap.clone()))?;
        registry.register(Box::new(pools_held.clone()))?;
        registry.register(Box::new(lobby_frames.clone()))?;
        Ok(Metrics {
            registry,
            commands,
            command_seconds,
            waves,
            wave_seconds,
            pairings,
            pairs_skipped,
            games_created,
            pairings_failed,
            wait_seconds,
            rating_gap,
            pools_held,
            waiting_by_pool: std::sync::Mutex::default(),
            seekers_waiting,
            lobby_frames,
            ready: AtomicBool::new(false),
        })
    }

    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }

    /// Ready while Redis answers this replica's heartbeat.
    pub fn readiness(self: &Arc<Self>) -> Readiness {
        let metrics = self.clone();
        Arc::new(move || {
            metrics.ready.load(Ordering::Relaxed).then_some(()).ok_or_else(|| "redis does not answer".into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seekers_waiting_is_the_sum_over_the_pools_still_paired_here() {
        let metrics = Metrics::new().unwrap();
        metrics.pool_waiting("atomic:3+2", Some(3));
        metrics.pool_waiting("fog:5+0", Some(1));
        assert_eq!(metrics.seekers_waiting.get(), 4);
        metrics.pool_waiting("atomic:3+2", Some(0));
        assert_eq!(metrics.seekers_waiting.get(), 1);
        metrics.pool_waiting("fog:5+0", None);
        assert_eq!(metrics.seekers_waiting.get(), 0);
    }
}
