//! What the rating service reports to Prometheus, and the HTTP listener
//! serving `/metrics`, `/healthz` and `/readyz`.

use std::future::Future;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus::{exponential_buckets, Histogram, HistogramOpts, IntCounter, Registry, TextEncoder};
use tokio::net::TcpListener;

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
}

pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/metrics", get(render))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ready" }))
        .with_state(metrics);
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn render(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    let text = TextEncoder::new().encode_to_string(&metrics.registry.gather()).unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text)
}
