//! What the rating service reports to Prometheus, served by the shared
//! admin server (`fogblast_runtime::serve_admin`); the service is ready once
//! it listens, since it listens only after its database is migrated.

use prometheus::{exponential_buckets, Histogram, HistogramOpts, IntCounter, Registry};

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub archived: IntCounter,
    pub rated: IntCounter,
    pub duplicates: IntCounter,
    pub failures: IntCounter,
    pub unreadable: IntCounter,
    /// From a game's end to its archiving: the rating lag.
    pub lag_seconds: Histogram,
}

impl Metrics {
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let archived = IntCounter::new("fogblast_rating_games_archived_total", "Finished games archived.")?;
        let rated = IntCounter::new("fogblast_rating_games_rated_total", "Games that moved ratings.")?;
        let duplicates = IntCounter::new("fogblast_rating_duplicates_total", "Deliveries of games already archived.")?;
        let failures = IntCounter::new("fogblast_rating_failures_total", "Deliveries left for redelivery.")?;
        let unreadable = IntCounter::new("fogblast_rating_unreadable_total", "Messages that did not decode.")?;
        let lag_seconds = Histogram::with_opts(
            HistogramOpts::new("fogblast_rating_lag_seconds", "Time from a game's end to its archiving.")
                .buckets(exponential_buckets(0.001, 2.0, 18)?),
        )?;
        for metric in [&archived, &rated, &duplicates, &failures, &unreadable] {
            registry.register(Box::new(metric.clone()))?;
        }
        registry.register(Box::new(lag_seconds.clone()))?;
        Ok(Metrics { registry, archived, rated, duplicates, failures, unreadable, lag_seconds })
    }

    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }
}
