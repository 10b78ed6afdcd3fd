//! Fogblast's monitoring against the real thing. The alert rules of
//! `deploy/prometheus/rules.yaml` pass their promtool unit tests, and each
//! has a severity, a runbook section that exists, and a test that fires it
//! and one that keeps it quiet. Then Debian's Prometheus and Alertmanager
//! run the same rules (durations compressed 60 times: minutes become
//! seconds) against a cluster of real processes: every query of the
//! Grafana dashboards in `deploy/grafana` parses and names only metrics
//! the cluster exports; a killed game shard raises `FogblastGameShardDown`
//! in Alertmanager, which resolves once the shard is back on its port; a
//! rating service frozen with SIGSTOP while games finish raises
//! `FogblastRatingConsumerStalled`, which resolves once it is thawed and
//! has caught up. Skipped, saying why, where the packages are missing.

mod stack;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{play, start_game, Client, Cluster, Proc};
use stack::{compressed_rules, repo, Stack, Tools};

/// How long a test waits for an alert to reach Alertmanager or leave it.
const ALERT_WAIT: Duration = Duration::from_secs(60);

#[test]
fn alert_rules_pass_promtool_and_link_their_runbooks() {
    let tools = match Tools::find() {
        Ok(tools) => tools,
        Err(missing) => return eprintln!("skipped: {missing}"),
    };
    let dir = repo().join("deploy/prometheus");
    for args in [["check", "rules", "rules.yaml"], ["test", "rules", "rules.test.yaml"]] {
        let out = Command::new(&tools.promtool).args(args).current_dir(&dir).output().expect("promtool runs");
        assert!(
            out.status.success(),
            "promtool {}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let rules = std::fs::read_to_string(dir.join("rules.yaml")).unwrap();
    let tests = std::fs::read_to_string(dir.join("rules.test.yaml")).unwrap();
    let operations = std::fs::read_to_string(repo().join("docs/operations.md")).unwrap();
    let sections: BTreeSet<String> =
        operations.lines().filter(|l| l.starts_with('#')).map(|l| anchor(l.trim_start_matches('#'))).collect();
    let alerts: Vec<&str> = values(&rules, "- alert: ");
    assert_eq!(values(&rules, "severity: ").len(), alerts.len(), "every alert has a severity");
    let runbooks = values(&rules, "runbook_url: ");
    assert_eq!(runbooks.len(), alerts.len(), "every alert links its runbook");
    for url in runbooks {
        let (page, section) = url.split_once('#').expect("a runbook link names its section");
        assert!(page.ends_with("docs/operations.md"), "{url}");
        assert!(sections.contains(section), "{url}: docs/operations.md has no section #{section}");
    }
    // Each alert is tested both ways: expected to fire, and expected quiet.
    for alert in alerts {
        let cases: Vec<&str> = tests
            .split("- eval_time:")
            .filter(|case| case.lines().any(|l| l.trim() == format!("alertname: {alert}")))
            .collect();
        assert!(cases.iter().any(|c| c.contains("exp_alerts: []")), "{alert}: no test that it stays quiet");
        assert!(cases.iter().any(|c| c.contains("exp_labels:")), "{alert}: no test that it fires");
    }
}

/// Each line's value after `key`, unquoted.
fn values<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines().filter_map(|l| l.trim().strip_prefix(key)).map(|v| v.trim_matches('"')).collect()
}

/// A heading's anchor as GitHub makes it.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_alerts_on_a_lost_shard_and_a_frozen_rating_service_then_resolves() {
    let tools = match Tools::find() {
        Ok(tools) => tools,
        Err(missing) => return eprintln!("skipped: {missing}"),
    };
    let cluster = Cluster::start_with_engines("monitoring", 1, 0, 0);
    let shard = cluster.spawn_shard("shard-0");
    let _other_shard = cluster.spawn_shard("shard-1");
    let rating = cluster.spawn_rating("rating", "sqlite::memory:");
    let matchmaker = cluster.spawn_matchmaker("matchmaker");
    let rating_addr = format!("http://{}", rating.grpc.expect("the rating service logs its gRPC address"));
    let matchmaker_addr = format!("http://{}", matchmaker.grpc.expect("the matchmaker logs its gRPC address"));
    let gateway =
        cluster.spawn_gateway_with("gateway", &["--rating-addr", &rating_addr, "--matchmaker-addr", &matchmaker_addr]);
    let shard_metrics = metrics(&shard);
    let jobs = [
        ("fogblast-gateway", vec![metrics(&gateway)]),
        ("fogblast-game", vec![shard_metrics, metrics(&_other_shard)]),
        ("fogblast-engine", vec![metrics(&cluster.engines[0])]),
        ("fogblast-rating", vec![metrics(&rating)]),
        ("fogblast-matchmaker", vec![metrics(&matchmaker)]),
    ];
    let rules = std::fs::read_to_string(repo().join("deploy/prometheus/rules.yaml")).unwrap();
    let stack = Stack::start(&tools, &compressed_rules(&rules, 60), &jobs);

    // Work every tier, so every metric the dashboards read has a series.
    exercise(gateway.http).await;
    dashboards_read_exported_metrics(&stack).await;

    // A shard is lost, then comes back on its port. Alerts are told apart
    // by instance: on a loaded machine another process may miss a scrape.
    shard.kill();
    let killed = Instant::now();
    let instance = shard_metrics.to_string();
    let of_the_shard = |a: &Value| a["labels"]["instance"] == instance.as_str();
    let alert = wait(&stack, "FogblastGameShardDown reaches Alertmanager", || {
        firing(&stack, "FogblastGameShardDown").into_iter().find(of_the_shard)
    })
    .await;
    assert_eq!(alert["labels"]["severity"], "critical");
    assert!(alert["annotations"]["runbook_url"].as_str().unwrap().ends_with("#a-game-shard-is-lost"), "{alert}");
    eprintln!("FogblastGameShardDown in Alertmanager {:?} after the kill", killed.elapsed());
    let _shard = cluster.spawn_shard_at("shard-0", shard_metrics);
    let back = Instant::now();
    wait(&stack, "FogblastGameShardDown resolves", || {
        (!firing(&stack, "FogblastGameShardDown").iter().any(of_the_shard)).then_some(())
    })
    .await;
    eprintln!("FogblastGameShardDown resolved {:?} after the shard was back", back.elapsed());

    // The rating service freezes while games finish, then thaws.
    let mut white = Client::join("white", gateway.http, None).await;
    let mut black = Client::join("black", gateway.http, None).await;
    rating.freeze();
    let started = Instant::now();
    loop {
        finish_a_game(&mut white, &mut black).await;
        if !firing(&stack, "FogblastRatingConsumerStalled").is_empty() {
            eprintln!("FogblastRatingConsumerStalled in Alertmanager {:?} after the freeze", started.elapsed());
            break;
        }
        assert!(started.elapsed() < ALERT_WAIT, "FogblastRatingConsumerStalled never fired\n{}", stack.logs());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let down = wait(&stack, "FogblastServiceDown for the rating service", || {
        firing(&stack, "FogblastServiceDown").into_iter().find(|a| a["labels"]["job"] == "fogblast-rating")
    })
    .await;
    assert_eq!(down["labels"]["instance"], metrics(&rating).to_string().as_str());
    rating.thaw();
    let thawed = Instant::now();
    wait(&stack, "the rating alerts resolve", || {
        let stalled = firing(&stack, "FogblastRatingConsumerStalled");
        let down = firing(&stack, "FogblastServiceDown");
        (stalled.is_empty() && !down.iter().any(|a| a["labels"]["job"] == "fogblast-rating")).then_some(())
    })
    .await;
    eprintln!("the rating alerts resolved {:?} after the thaw", thawed.elapsed());
    white.close().await;
    black.close().await;
}

fn metrics(proc: &Proc) -> std::net::SocketAddr {
    proc.metrics.unwrap_or_else(|| panic!("{} logs its metrics address", proc.name))
}

/// Alertmanager's alerts named `name`.
fn firing(stack: &Stack, name: &str) -> Vec<Value> {
    stack.alerts().into_iter().filter(|a| a["labels"]["alertname"] == name).collect()
}

/// Polls `done` (blocking calls to Prometheus or Alertmanager) until it
/// gives a value, for at most [`ALERT_WAIT`].
async fn wait<T>(stack: &Stack, what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + ALERT_WAIT;
    loop {
        if let Some(value) = tokio::task::block_in_place(&mut done) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "waited {ALERT_WAIT:?} for: {what}\nalerts: {:?}\n{}",
            stack.alerts(),
            stack.logs()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Two seekers paired by the matchmaker whose game ends; a game against
/// the computer; a refused move; a frame too large, which closes its
/// connection.
async fn exercise(gateway: std::net::SocketAddr) {
    let mut alice = Client::join("alice", gateway, None).await;
    let mut bob = Client::join("bob", gateway, None).await;
    for client in [&mut alice, &mut bob] {
        client.send(json!({ "t": "seek", "variant": "atomic", "clock": null, "rated": false, "id": "s" })).await;
        client.expect("seeking").await;
    }
    let paired = alice.expect("paired").await;
    bob.expect("paired").await;
    let game = paired["game"].as_str().unwrap().to_owned();
    alice.send(json!({ "t": "watch", "game": game })).await;
    alice.expect("state").await;
    alice.send(json!({ "t": "resign", "game": game })).await;
    alice.expect_where("the paired game's end", |f| f["t"] == "end").await;

    finish_a_game(&mut alice, &mut bob).await;
    alice.send(json!({ "t": "create", "variant": "standard", "color": "white", "clock": null, "opponent": "computer", "level": "easy" })).await;
    let created = alice.expect("created").await;
    let game = created["game"].as_str().unwrap().to_owned();
    alice.send(crate::support::move_frame(&game, "e2e4", 0)).await;
    alice.expect_move(0).await;
    alice.expect_move(1).await;
    alice.send(json!({ "t": "move", "game": game, "uci": "e2e5", "ply": 2, "id": "bad" })).await;
    alice.expect_error_for("bad").await;
    alice.send(json!({ "t": "resign", "game": game })).await;
    alice.expect_where("the computer game's end", |f| f["t"] == "end").await;

    let mut big = Client::join("big", gateway, None).await;
    big.send_text("x".repeat(8192)).await;
    big.wait_closed(Duration::from_secs(10)).await;
    alice.close().await;
    bob.close().await;
}

/// `white` and `black` play a game of two plies that `white` resigns.
async fn finish_a_game(white: &mut Client, black: &mut Client) {
    let game = start_game(white, black, "standard").await;
    play(white, black, &game, &["e2e4".to_owned(), "e7e5".to_owned()], 0, 2).await;
    white.send(json!({ "t": "resign", "game": game })).await;
    for client in [white, black] {
        client.expect_where("the game's end", |f| f["t"] == "end" && f["game"] == game.as_str()).await;
    }
}

/// Every query of every dashboard parses in Prometheus, and every
/// `fogblast_` metric it names is one Prometheus scraped from the cluster.
async fn dashboards_read_exported_metrics(stack: &Stack) {
    let queries = dashboard_queries(&repo().join("deploy/grafana"));
    assert!(queries.len() > 40, "the dashboards' queries: {}", queries.len());
    let wanted: BTreeSet<String> = queries.iter().flat_map(|(_, expr)| fogblast_names(expr)).collect();
    // Each scrape brings what the work above made; wait for all of it.
    let exported = wait(stack, "the dashboards' metrics in Prometheus", || {
        let names = stack.metric_names();
        wanted.is_subset(&names).then_some(names)
    })
    .await;
    let missing: Vec<_> = wanted.difference(&exported).collect();
    assert!(missing.is_empty(), "metrics the dashboards read and the cluster does not export: {missing:?}");
    for (panel, expr) in &queries {
        let expr = expr.replace("$__rate_interval", "1m");
        tokio::task::block_in_place(|| stack.query(&expr)).unwrap_or_else(|e| panic!("{panel}: {expr}: {e}"));
    }
}

/// (dashboard/panel title, expression) of every panel target.
fn dashboard_queries(dir: &Path) -> Vec<(String, String)> {
    let mut queries = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for panel in dashboard["panels"].as_array().expect("a dashboard has panels") {
            for target in panel["targets"].as_array().expect("a panel has targets") {
                let title = format!("{}: {}", dashboard["title"].as_str().unwrap(), panel["title"].as_str().unwrap());
                queries.push((title, target["expr"].as_str().expect("a target has an expression").to_owned()));
            }
        }
    }
    queries
}

/// The `fogblast_…` metric names in an expression.
fn fogblast_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(start) = rest.find("fogblast_") {
        let tail = &rest[start..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        names.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}
