//! Traces across processes: a gateway, a game shard, an engine pool and a
//! rating service run as real `fogblast` processes exporting their spans
//! over OTLP to a collector this test runs (the OTLP trace service, over
//! gRPC, as an OpenTelemetry Collector would receive them).
//!
//! One move against the computer must make one trace: the gateway's span
//! for the `move` frame, the shard's command (a call on the gateway's
//! command stream, carrying the trace context itself), the shard's turn of
//! the computer and the engine's `BestMove` call, each the parent of the
//! next. And a finished game's trace goes on over NATS: the rating
//! service's consumption is a child of the shard's publication.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{move_frame, Client, Cluster};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use serde_json::json;
use tokio::net::TcpListener;

/// A span as received, with the service that sent it.
#[derive(Clone, Debug)]
struct Received {
    service: String,
    name: String,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent_span_id: Vec<u8>,
    attributes: HashMap<String, String>,
}

impl Received {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }

    fn label(&self) -> String {
        format!("{}:{}", self.service, self.name)
    }
}

#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<Received>>>,
}

fn text(value: &KeyValue) -> String {
    match value.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.spans.lock().unwrap();
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|kv| kv.key == "service.name")
                .map(text)
                .unwrap_or_default();
            for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
                spans.push(Received {
                    service: service.clone(),
                    name: span.name,
                    trace_id: span.trace_id,
                    span_id: span.span_id,
                    parent_span_id: span.parent_span_id,
                    attributes: span.attributes.iter().map(|kv| (kv.key.clone(), text(kv))).collect(),
                });
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

impl Collector {
    async fn start() -> (Collector, String) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let collector = Collector::default();
        let service = TraceServiceServer::new(collector.clone());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
        );
        (collector, format!("http://{addr}"))
    }

    fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }

    /// Waits until `find` picks something out of the spans received.
    async fn wait_for<T>(&self, what: &str, find: impl Fn(&[Received]) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(found) = find(&self.spans()) {
                return found;
            }
            if tokio::time::Instant::now() > deadline {
                let names: Vec<String> = self.spans().iter().map(Received::label).collect();
                panic!("no {what} among the spans received: {names:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The spans from `span` up to its root, `span` first; stops at a parent
/// that was not received.
fn ancestry<'a>(spans: &'a [Received], span: &'a Received) -> Vec<&'a Received> {
    let mut chain = vec![span];
    let mut current = span;
    while !current.parent_span_id.is_empty() {
        let parent = spans.iter().find(|s| s.span_id == current.parent_span_id && s.trace_id == current.trace_id);
        match parent {
            Some(parent) => {
                chain.push(parent);
                current = parent;
            }
            None => break,
        }
    }
    chain
}

#[tokio::test]
async fn one_move_is_one_trace_from_gateway_to_engine_and_a_finished_game_continues_over_nats() {
    let (collector, endpoint) = Collector::start().await;
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        // Export within a tenth of a second rather than the default five.
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ];
    let cluster = Cluster::start_with_env("trace", &env, 1, 1, 1);
    let rating = cluster.spawn_rating("rating", "sqlite::memory:");

    let mut human = Client::join("human", cluster.gateway(0), None).await;
    human
        .send(json!({
            "t": "create", "variant": "atomic", "color": "white", "clock": null,
            "opponent": "computer", "level": "easy",
        }))
        .await;
    let game = human.expect("created").await["game"].as_str().unwrap().to_owned();
    human.expect("state").await;
    human.send(move_frame(&game, "e2e4", 0)).await;
    human.expect_move(0).await;
    human.expect_move(1).await;

    // The engine's span for the computer's reply, traced back to its root.
    let chain: Vec<Received> = collector
        .wait_for("chain from the engine's best_move back to the gateway's move", |spans| {
            spans
                .iter()
                .filter(|s| s.service == "fogblast-engine" && s.name == "best_move")
                .map(|s| ancestry(spans, s))
                .find(|chain| chain.last().is_some_and(|root| root.name == "gateway.move"))
                .map(|chain| chain.into_iter().cloned().collect())
        })
        .await;
    let labels: Vec<String> = chain.iter().map(Received::label).collect();
    assert_eq!(
        labels,
        [
            "fogblast-engine:best_move",
            "fogblast-engine:fogblast.engine.v1.Engine/BestMove",
            "fogblast-game:game.think",
            "fogblast-game:game.command",
            "fogblast-gateway:gateway.move",
        ],
        "the spans of one move, child to parent"
    );
    let trace = &chain[0].trace_id;
    assert!(chain.iter().all(|s| &s.trace_id == trace), "one trace id: {chain:?}");
    assert_eq!(trace.len(), 16, "a W3C trace id");
    let root = chain.last().unwrap();
    assert!(root.parent_span_id.is_empty(), "the gateway's span is the root: {root:?}");
    assert_eq!((root.attr("game"), root.attr("ply")), (Some(game.as_str()), Some("0")), "{root:?}");
    let command = &chain[3];
    assert_eq!((command.attr("kind"), command.attr("ply")), (Some("make_move"), Some("0")), "{command:?}");
    let think = &chain[2];
    assert_eq!((think.attr("game"), think.attr("variant")), (Some(game.as_str()), Some("atomic")), "{think:?}");
    // The move itself stays out of the spans (hidden in fog of war).
    let spans = collector.spans();
    assert!(
        spans.iter().filter(|s| &s.trace_id == trace).all(|s| !s.attributes.values().any(|v| v.contains("e2e4"))),
        "no span names the move"
    );

    // Resigning ends the game; the shard publishes it over NATS and the
    // rating service's consumption continues the publication's trace.
    human.send(json!({ "t": "resign", "game": game })).await;
    human.expect("end").await;
    let (publish, apply) = collector
        .wait_for("the rating service's rating.apply under the shard's publication", |spans| {
            let apply = spans.iter().find(|s| {
                s.service == "fogblast-rating" && s.name == "rating.apply" && s.attr("game") == Some(&game)
            })?;
            let publish = spans.iter().find(|s| s.span_id == apply.parent_span_id)?;
            Some((publish.clone(), apply.clone()))
        })
        .await;
    assert_eq!(
        (publish.service.as_str(), publish.name.as_str(), publish.attr("game")),
        ("fogblast-game", "game.publish_finished", Some(game.as_str()))
    );
    assert_eq!(publish.trace_id, apply.trace_id);
    cluster.assert_healthy();
    rating.assert_healthy();
}

/// A quick pairing's game is made under one trace: the matchmaker's
/// `matchmaker.pairing` span is the parent of the shard's `CreateGame` and
/// `JoinGame` calls.
#[tokio::test]
async fn a_pairings_game_is_made_under_the_matchmakers_trace() {
    let (collector, endpoint) = Collector::start().await;
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "100")];
    let cluster = Cluster::start_with_env("trace-pairing", &env, 0, 1, 0);
    let matchmaker = cluster.spawn_matchmaker("matchmaker");
    let matchmaker_addr = format!("http://{}", matchmaker.grpc.expect("the matchmaker logs its gRPC address"));
    let gateway = cluster.spawn_gateway_with("gateway", &["--matchmaker-addr", &matchmaker_addr]);
    let mut alice = Client::join("alice", gateway.http, None).await;
    let mut bob = Client::join("bob", gateway.http, None).await;
    for client in [&mut alice, &mut bob] {
        client.send(json!({ "t": "seek", "variant": "fog", "clock": null, "rated": false })).await;
        client.expect("seeking").await;
    }
    let game = alice.expect("paired").await["game"].as_str().unwrap().to_owned();
    bob.expect("paired").await;

    let (pairing, calls) = collector
        .wait_for("CreateGame and JoinGame under a matchmaker.pairing span", |spans| {
            let pairing =
                spans.iter().find(|s| s.service == "fogblast-matchmaker" && s.name == "matchmaker.pairing")?;
            let calls: Vec<Received> = spans
                .iter()
                .filter(|s| s.service == "fogblast-game" && s.parent_span_id == pairing.span_id)
                .cloned()
                .collect();
            let names: Vec<&str> = calls.iter().map(|s| s.name.as_str()).collect();
            let done = names.contains(&"fogblast.game.v1.Game/CreateGame")
                && names.contains(&"fogblast.game.v1.Game/JoinGame");
            done.then(|| (pairing.clone(), calls))
        })
        .await;
    assert!(pairing.parent_span_id.is_empty(), "a pairing starts its own trace: {pairing:?}");
    assert!(pairing.attr("pool").is_some_and(|p| p.starts_with("fog-")), "{pairing:?}");
    assert!(calls.iter().all(|s| s.trace_id == pairing.trace_id), "{calls:?}");
    assert!(!game.is_empty());
    matchmaker.assert_healthy();
    gateway.assert_healthy();
}
