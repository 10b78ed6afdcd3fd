//! The pool under pressure, over real gRPC: a full queue refuses at once, a
//! call whose deadline passes while queued is dropped unsearched, metrics
//! show what happened, and shutdown lets a running search finish.

mod support;

use std::time::{Duration, Instant};

use fogblast_engine_service::EngineConfig;
use fogblast_proto::engine::{BestMoveRequest, Level, Variant};
use support::{http_get, request, small_config, TestServer};
use tonic::{Code, Request};

fn one_thread(queue: u32) -> EngineConfig {
    let mut config = small_config();
    config.settings.workers = 1;
    config.settings.queue = queue;
    config
}

/// A search that keeps its thread busy for about `ms`.
fn slow(ms: u32) -> BestMoveRequest {
    BestMoveRequest { budget_ms: ms, ..request(Variant::Atomic, Level::Hard) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_refuses_at_once() {
    let mut server = TestServer::start(one_thread(1)).await;
    let client = server.client().await;
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move {
                let sent = Instant::now();
                (client.best_move(slow(0)).await, sent.elapsed())
            })
        })
        .collect();
    let (mut answered, mut refused) = (0, 0);
    for call in calls {
        match call.await.unwrap() {
            (Ok(_), _) => answered += 1,
            (Err(status), took) => {
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                assert!(status.message().contains("queue is full"), "{status:?}");
                assert!(took < Duration::from_millis(500), "refused only after {took:?}");
                refused += 1;
            }
        }
    }
    // One thread and one queue slot hold at most two of the five.
    assert!((1..=2).contains(&answered), "{answered} answered");
    assert_eq!(answered + refused, 5);
    assert_eq!(server.sample("fogblast_engine_requests_total{outcome=\"resource_exhausted\"}").await, refused as f64);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_deadline_is_dropped_unsearched() {
    let mut server = TestServer::start(one_thread(4)).await;
    let client = server.client().await;
    let mut busy_client = client.clone();
    let busy = tokio::spawn(async move { busy_client.best_move(slow(1_000)).await });
    server.wait_for_sample("fogblast_engine_busy_workers", 1.0).await;

    let mut late = Request::new(request(Variant::Atomic, Level::Easy));
    late.set_timeout(Duration::from_millis(200));
    let sent = Instant::now();
    let status = client.clone().best_move(late).await.expect_err("the thread stays busy past the deadline");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(sent.elapsed() < Duration::from_millis(600), "answered after {:?}", sent.elapsed());

    busy.await.unwrap().expect("the busy search finishes");
    server.wait_for_sample("fogblast_engine_jobs_skipped_total{reason=\"expired\"}", 1.0).await;
    assert_eq!(server.sample("fogblast_engine_search_seconds_count{level=\"easy\"}").await, 0.0);
    assert_eq!(server.sample("fogblast_engine_search_seconds_count{level=\"hard\"}").await, 1.0);
    assert_eq!(server.sample("fogblast_engine_requests_total{outcome=\"deadline_exceeded\"}").await, 1.0);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_caps_the_search() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    let mut call = Request::new(request(Variant::Atomic, Level::Hard));
    call.set_timeout(Duration::from_millis(300));
    let answer = client.best_move(call).await.expect("answered within the deadline").into_inner();
    assert!(answer.elapsed_ms < 300, "searched {} ms", answer.elapsed_ms);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_expose_the_pool() {
    let mut server = TestServer::start(small_config()).await;
    let mut client = server.client().await;
    let answer = client.best_move(request(Variant::Standard, Level::Easy)).await.unwrap().into_inner();
    let page = server.metrics().await;
    for (name, value) in [
        ("fogblast_engine_queue_depth", 0.0),
        ("fogblast_engine_busy_workers", 0.0),
        ("fogblast_engine_workers", 2.0),
        ("fogblast_engine_requests_total{outcome=\"ok\"}", 1.0),
        ("fogblast_engine_requests_total{outcome=\"resource_exhausted\"}", 0.0),
        ("fogblast_engine_search_seconds_count{level=\"easy\"}", 1.0),
        ("fogblast_engine_nodes_total", answer.nodes as f64),
    ] {
        assert_eq!(support::sample(&page, name), Some(value), "{name} in\n{page}");
    }
    assert!(page.contains("# TYPE fogblast_engine_queue_depth gauge"), "{page}");
    assert!(page.contains("# TYPE fogblast_engine_search_seconds histogram"), "{page}");
    assert!(page.contains("fogblast_engine_search_seconds_bucket{level=\"easy\",le=\"0.001\"}"), "{page}");
    assert_eq!(http_get(server.metrics_addr, "/nothing-here").await.0, 404);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_a_running_search_finish() {
    let mut server = TestServer::start(one_thread(4)).await;
    let mut client = server.client().await;
    let running = tokio::spawn(async move { client.best_move(slow(800)).await });
    server.wait_for_sample("fogblast_engine_busy_workers", 1.0).await;
    let stopping = Instant::now();
    server.shutdown().await.expect("a clean stop");
    let answer = running.await.unwrap().expect("the running search is answered").into_inner();
    assert!(!answer.uci.is_empty());
    assert!(stopping.elapsed() < Duration::from_secs(5), "stopped after {:?}", stopping.elapsed());
    assert!(tokio::net::TcpStream::connect(server.grpc_addr).await.is_err(), "still accepting");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_past_the_drain_time_stops_searches_and_refuses_queued_calls() {
    let mut server = TestServer::start(EngineConfig { drain_ms: 100, ..one_thread(4) }).await;
    let client = server.client().await;
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move { client.best_move(slow(1_000)).await })
        })
        .collect();
    server.wait_for_sample("fogblast_engine_queue_depth", 2.0).await;
    let stopping = Instant::now();
    server.shutdown().await.expect("a clean stop");
    assert!(stopping.elapsed() < Duration::from_millis(900), "stopped after {:?}", stopping.elapsed());
    let mut codes = Vec::new();
    for call in calls {
        codes.push(call.await.unwrap().map_or_else(|status| status.code(), |_| Code::Ok));
    }
    // The running search stops early with the best move so far; the queued calls are refused.
    codes.sort_by_key(|code| *code as i32);
    assert_eq!(codes, [Code::Ok, Code::Unavailable, Code::Unavailable]);
}
