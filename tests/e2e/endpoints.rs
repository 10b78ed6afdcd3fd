//! Every service answers on its HTTP port: `/metrics` in the Prometheus
//! text format with the service's own metrics, `/healthz` and `/readyz`.
//! One test per service, each a real `fogblast` process.

use crate::support::{http_get, Cluster, Proc};

/// `/metrics` lists `metric` (a metric that exists from the start) among
/// the service's metrics, and the process is live and ready.
fn assert_serves(proc: &Proc, metric: &str) {
    let (status, body) = http_get(proc.http, "/metrics").unwrap_or_else(|| panic!("{}: /metrics answers", proc.name));
    assert_eq!(status, 200, "{}: {body}", proc.name);
    assert!(body.contains(&format!("# TYPE {metric} ")), "{}: no {metric} in\n{body}", proc.name);
    let prefix = metric.split('_').take(2).collect::<Vec<_>>().join("_");
    let own = body.lines().filter(|l| l.starts_with("# TYPE ") && l.contains(&prefix)).count();
    assert!(own >= 3, "{}: only {own} metrics named {prefix}_*", proc.name);
    for path in ["/healthz", "/readyz"] {
        let answer = http_get(proc.http, path);
        assert_eq!(answer.as_ref().map(|(status, _)| *status), Some(200), "{} {path}: {answer:?}", proc.name);
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
    assert_serves(&cluster.gateways[0], "fogblast_gateway_connections");
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
