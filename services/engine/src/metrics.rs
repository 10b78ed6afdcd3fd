//! What the pool reports to Prometheus, served by the shared admin server
//! (`fogblast_runtime::serve_admin`) with its readiness: it takes calls
//! while not draining. Each pool has its own registry, so several pools in
//! one process (tests, `fogblast up`) keep separate counts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fogblast_runtime::Readiness;
use prometheus::{
    exponential_buckets, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
};

/// How a call was answered: the `outcome` label of `fogblast_engine_requests_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    InvalidArgument,
    ResourceExhausted,
    DeadlineExceeded,
    Unavailable,
    Internal,
}

impl Outcome {
    const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::InvalidArgument,
        Outcome::ResourceExhausted,
        Outcome::DeadlineExceeded,
        Outcome::Unavailable,
        Outcome::Internal,
    ];

    fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::InvalidArgument => "invalid_argument",
            Outcome::ResourceExhausted => "resource_exhausted",
            Outcome::DeadlineExceeded => "deadline_exceeded",
            Outcome::Unavailable => "unavailable",
            Outcome::Internal => "internal",
        }
    }

    pub fn of(code: tonic::Code) -> Outcome {
        match code {
            tonic::Code::Ok => Outcome::Ok,
            tonic::Code::InvalidArgument => Outcome::InvalidArgument,
            tonic::Code::ResourceExhausted => Outcome::ResourceExhausted,
            tonic::Code::DeadlineExceeded => Outcome::DeadlineExceeded,
            tonic::Code::Unavailable => Outcome::Unavailable,
            _ => Outcome::Internal,
        }
    }
}

/// Why a worker dropped a queued job unsearched: the `reason` label of
/// `fogblast_engine_jobs_skipped_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SkipReason {
    /// Its deadline had passed.
    Expired,
    /// Its caller had gone.
    Cancelled,
    /// The pool was shutting down past its drain time.
    Shutdown,
}

impl SkipReason {
    const ALL: [SkipReason; 3] = [SkipReason::Expired, SkipReason::Cancelled, SkipReason::Shutdown];

    fn label(self) -> &'static str {
        match self {
            SkipReason::Expired => "expired",
            SkipReason::Cancelled => "cancelled",
            SkipReason::Shutdown => "shutdown",
        }
    }
}

/// The analysis lane's own series.
#[derive(Debug)]
pub(crate) struct AnalysisMetrics {
    pub queue_depth: IntGauge,
    pub busy_workers: IntGauge,
    pub analyses: IntCounterVec,
    pub positions: IntCounter,
    pub preemptions: IntCounter,
    pub seconds: Histogram,
    pub queue_wait_seconds: Histogram,
}

impl AnalysisMetrics {
    fn new(registry: &Registry) -> Result<AnalysisMetrics, prometheus::Error> {
        let metrics = AnalysisMetrics {
            queue_depth: IntGauge::new("fogblast_engine_analysis_queue_depth", "Analyses waiting for a thread.")?,
            busy_workers: IntGauge::new("fogblast_engine_analysis_busy_workers", "Search threads analysing now.")?,
            analyses: IntCounterVec::new(
                Opts::new("fogblast_engine_analyses_total", "Analyses ended, by outcome."),
                &["outcome"],
            )?,
            positions: IntCounter::new("fogblast_engine_analysis_positions_total", "Positions analysed.")?,
            preemptions: IntCounter::new(
                "fogblast_engine_analysis_preemptions_total",
                "Analysis searches stopped for a computer move and searched again.",
            )?,
            seconds: Histogram::with_opts(
                HistogramOpts::new("fogblast_engine_analysis_seconds", "Time to analyse one game.")
                    .buckets(exponential_buckets(0.05, 2.0, 14)?),
            )?,
            queue_wait_seconds: Histogram::with_opts(
                HistogramOpts::new(
                    "fogblast_engine_analysis_queue_wait_seconds",
                    "Time an analysis waited for a thread.",
                )
                .buckets(exponential_buckets(0.001, 2.0, 20)?),
            )?,
        };
        registry.register(Box::new(metrics.queue_wait_seconds.clone()))?;
        registry.register(Box::new(metrics.queue_depth.clone()))?;
        registry.register(Box::new(metrics.busy_workers.clone()))?;
        registry.register(Box::new(metrics.analyses.clone()))?;
        registry.register(Box::new(metrics.positions.clone()))?;
        registry.register(Box::new(metrics.preemptions.clone()))?;
        registry.register(Box::new(metrics.seconds.clone()))?;
        for outcome in ["ok", "failed", "stopped"] {
            metrics.analyses.with_label_values(&[outcome]);
        }
        Ok(metrics)
    }
}

#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    pub queue_depth: IntGauge,
    pub busy_workers: IntGauge,
    requests: IntCounterVec,
    skipped: IntCounterVec,
    search_seconds: HistogramVec,
    pub queue_wait_seconds: Histogram,
    pub nodes: IntCounter,
    pub analysis: AnalysisMetrics,
    /// Set once shutdown began: `/readyz` turns 503 so no new calls come.
    draining: AtomicBool,
}

impl Metrics {
    pub fn new(workers: u32) -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let queue_depth = IntGauge::new("fogblast_engine_queue_depth", "Requests waiting for a search thread.")?;
        let busy_workers = IntGauge::new("fogblast_engine_busy_workers", "Search threads searching now.")?;
        let worker_count = IntGauge::new("fogblast_engine_workers", "Search threads in the pool.")?;
        let requests = IntCounterVec::new(
            Opts::new("fogblast_engine_requests_total", "BestMove calls answered, by outcome."),
            &["outcome"],
        )?;
        let skipped = IntCounterVec::new(
            Opts::new("fogblast_engine_jobs_skipped_total", "Queued requests dropped unsearched, by reason."),
            &["reason"],
        )?;
        let search_seconds = HistogramVec::new(
            HistogramOpts::new("fogblast_engine_search_seconds", "Time spent searching one move, by level.")
                .buckets(exponential_buckets(0.001, 2.0, 14)?),
            &["level"],
        )?;
        let queue_wait_seconds = Histogram::with_opts(
            HistogramOpts::new("fogblast_engine_queue_wait_seconds", "Time a request waited for a search thread.")
                .buckets(exponential_buckets(0.0005, 2.0, 14)?),
        )?;
        let nodes = IntCounter::new("fogblast_engine_nodes_total", "Positions searched.")?;
        registry.register(Box::new(queue_depth.clone()))?;
        registry.register(Box::new(busy_workers.clone()))?;
        registry.register(Box::new(worker_count.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(skipped.clone()))?;
        registry.register(Box::new(search_seconds.clone()))?;
        registry.register(Box::new(queue_wait_seconds.clone()))?;
        registry.register(Box::new(nodes.clone()))?;
        worker_count.set(workers.into());
        let analysis = AnalysisMetrics::new(&registry)?;
        // Every series exists from the start, so a rate over a fresh pool is zero, not absent.
        for outcome in Outcome::ALL {
            requests.with_label_values(&[outcome.label()]);
        }
        for reason in SkipReason::ALL {
            skipped.with_label_values(&[reason.label()]);
        }
        for level in fogblast_engine::Level::ALL {
            search_seconds.with_label_values(&[level.name()]);
        }
        Ok(Metrics {
            registry,
            queue_depth,
            busy_workers,
            requests,
            skipped,
            search_seconds,
            queue_wait_seconds,
            nodes,
            analysis,
            draining: AtomicBool::new(false),
        })
    }

    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    pub fn answered(&self, outcome: Outcome) {
        self.requests.with_label_values(&[outcome.label()]).inc();
    }

    pub fn skipped(&self, reason: SkipReason) {
        self.skipped.with_label_values(&[reason.label()]).inc();
    }

    pub fn searched(&self, level: fogblast_engine::Level, seconds: f64) {
        self.search_seconds.with_label_values(&[level.name()]).observe(seconds);
    }

    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }

    /// Ready while not draining.
    pub(crate) fn readiness(self: &Arc<Self>) -> Readiness {
        let metrics = self.clone();
        Arc::new(move || if metrics.draining.load(Ordering::Relaxed) { Err("draining".to_owned()) } else { Ok(()) })
    }
}
