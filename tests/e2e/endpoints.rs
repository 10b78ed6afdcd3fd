//! Every service answers on its admin port: `/metrics` in the Prometheus
//! text format with the service's own metrics, `/healthz` and `/readyz`;
//! the gateway keeps `/metrics` off its public port.
//! One test per service, each a real `fogblast` process.

use crate::support::{http_get, Cluster, Proc};

/// `/metrics` lists `metric` (a metric that exists from the start) among
/// the service's metrics, and the process is live and ready.
fn assert_serves(proc: &Proc, metric: &str) {
    let metrics = proc.metrics.unwrap_or(proc.http);
    let (status, body) = http_get(metrics, "/metrics").unwrap_or_else(|| panic!("{}: /metrics answers", proc.name));
    assert_eq!(status, 200, "{}: {body}", proc.name);
    assert!(body.contains(&format!("# TYPE {metric} ")), "{}: no {metric} in\n{body}", proc.name);
    let prefix = metric.split('_').take(2).collect::<Vec<_>>().join("_");
    let own = body.lines().filter(|l| l.starts_with("# TYPE ") && l.contains(&prefix)).count();
    assert!(own >= 3, "{}: only {own} metrics named {prefix}_*", proc.name);
    for addr in [proc.http, metrics] {
        for path in ["/healthz", "/readyz"] {
            let answer = http_get(addr, path);
            assert_eq!(answer.as_ref().map(|(status, _)| *status), Some(200), "{} {path}: {answer:?}", proc.name);
        }
    }
}

#[test]
fn the_engine_pool_serves_metrics_and_health() {
    let cluster = Cluster::start_with_engines("endpoints-engine", 1, 0, 0);
    assert_serves(&cluster.engines[0], "fogblast_engine_workers");
}

#[test]
fn a_game_shard_serves_metrics_and_health() {
    let cluster = Cluster::start("endpoints-game", 1, 0);
    assert_serves(&cluster.shards[0], "fogblast_game_moves_total");
}

#[test]
fn the_gateway_serves_metrics_and_health() {
    let cluster = Cluster::start("endpoints-gateway", 1, 1);
    let gateway = &cluster.gateways[0];
    assert_serves(gateway, "fogblast_gateway_connections");
    // Metrics stay off the public port.
    assert_ne!(gateway.metrics, Some(gateway.http), "the gateway serves metrics on an admin port");
    let public = http_get(gateway.http, "/metrics").map(|(status, _)| status);
    assert_ne!(public, Some(200), "the public port serves /metrics");
}

#[test]
fn the_rating_service_serves_metrics_and_health() {
    let cluster = Cluster::start("endpoints-rating", 0, 0);
    let rating = cluster.spawn_rating("rating", "sqlite::memory:");
    assert_serves(&rating, "fogblast_rating_games_archived_total");
}

#[test]
fn the_matchmaker_serves_metrics_and_health() {
    let cluster = Cluster::start("endpoints-matchmaker", 0, 0);
    let matchmaker = cluster.spawn_matchmaker("matchmaker");
    assert_serves(&matchmaker, "fogblast_matchmaker_waves_total");
}
